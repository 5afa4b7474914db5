#!/usr/bin/env bash
# Session 17, call 8: the session's library (8cb2c1f's reduce_sum rows, 16-bit transposed pairs in 128 x 64 tiles on
# views of >= 8 waves of them): the transpose tests (the new wide-pairs test among them; every other test ran on the
# kernels of 2fd0fc1 in call 7, where only the tile choice differs), then every op in one sweep: the large case set
# (every shape of issue 6) and the default case set.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s17-8.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
timeout 90 python -m pytest -q tests/oprt_nvidia/test_nvidia_paths.py -k transpose -p no:cacheprovider \
    >"$OUT/pytest-transpose.log" 2>&1
tail -n 2 "$OUT/pytest-transpose.log"
gpu_bench bench-large-s17 330 large all
gpu_bench bench-default-s17 75 default all
