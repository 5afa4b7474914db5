#!/usr/bin/env bash
# Prepared in session 22, which was lent no device: the first call of the next session with one (~7 minutes). The
# op API's new fast path (one signature per array, one dict lookup, the entry's bound oprt_ptrs_<op>; 2189956) on
# the H200: every nvidia test (test_op_api_fast_path among them: every op through torch and CuPy outs, three rounds
# of fresh buffers), memcheck + racecheck over the torch / CuPy tests, and the metax shim suite (which reuses them).
# Its second half: gpu-call-s22-2.sh.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s22-1.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia oprt_metax" OPRT_SUITE_STEP_TIMEOUT=300 \
    GPU_SUITE_SANITIZE="s22=tests/oprt_nvidia/test_nvidia_ops.py;-k;op_api_fast_path or torch_inputs or cupy_inputs" \
    gpu_call_suite s22 ""
OPRT_SUITE_TESTS=tests/oprt_metax OPRT_SUITE_STEP_TIMEOUT=120 bash scripts/gpu-suite.sh "$S/m" test >/dev/null 2>&1
cp "$S/m/pytest.log" "$OUT/pytest-metax.log"
grep "==\|passed\|failed" "$S/m/summary.txt"
grep -E "FAILED|Error" "$S/m/pytest.log" | head -20
