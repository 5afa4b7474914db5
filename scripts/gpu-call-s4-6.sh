#!/usr/bin/env bash
# Session 4, GPU call 6 (the last ~4 device minutes): every nvidia GPU test on the final kernels (with the
# wide-range 16-bit rows test) and compute-sanitizer racecheck over the softmax and transposed paths.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
OPRT_SUITE_TESTS=tests/oprt_nvidia OPRT_SUITE_STEP_TIMEOUT=120 OPRT_SUITE_SANITIZERS="racecheck" \
    OPRT_SUITE_SANITIZE="s4-final=tests/oprt_nvidia/test_nvidia_paths.py;-k;softmax or transpos" \
    bash scripts/gpu-suite.sh "$S/t" install test sanitize >/dev/null 2>&1
cp "$S/t/pytest.log" "$OUT/pytest.log"; cp -r "$S/t/sanitizer" "$OUT/" 2>/dev/null
grep "==\|passed\|failed\|SUMMARY" "$S/t/summary.txt"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
