#!/usr/bin/env bash
# Session 22, call 5 (~3 minutes): after the review's fix (d57f0e9: numpy scalar params keyed by value; the hot path
# of float / int params unchanged), the fast-path and torch / CuPy tests on both backends and the host overhead again,
# at the session's last library commit.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s22-5.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia oprt_metax" gpu_install
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/oprt_nvidia/test_nvidia_ops.py \
    tests/oprt_metax/test_metax_ops.py -k "op_api_fast_path or torch_inputs or cupy_inputs" >"$OUT/pytest-fastpath.log" 2>&1
tail -n 3 "$OUT/pytest-fastpath.log"
gpu_host_overhead host-overhead-s22-5
