#!/usr/bin/env bash
# Session 5, GPU call 1: the nvidia GPU tests (first GPU run of session 4's NaN-merge fix and of the op API's
# oprt_ptrs_<op> launch path), the host overhead through those entry points, tune.cu's axis-0 groups (first
# run of the banded experiment, softmax_bands.cuh), and compute-sanitizer (all three tools) over the softmax
# and transposed paths.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
OPRT_SUITE_TESTS=tests/oprt_nvidia OPRT_SUITE_STEP_TIMEOUT=200 bash scripts/gpu-suite.sh "$S/t" install test overhead >/dev/null 2>&1
cp "$S/t/pytest.log" "$S/t/overhead.log" "$S/t/host-overhead.csv" "$OUT/" 2>/dev/null
cp "$S/t/summary.txt" "$OUT/summary-t.txt"
OPRT_TUNE_FILTER="${OPRT_TUNE_FILTER:-axis 0}" OPRT_SUITE_STEP_TIMEOUT=150 bash scripts/gpu-suite.sh "$S/a" tune >/dev/null 2>&1
cp "$S/a/tune.log" "$S/a/tune-build.log" "$OUT/" 2>/dev/null
OPRT_SUITE_STEP_TIMEOUT=100 OPRT_SUITE_SANITIZERS="memcheck racecheck initcheck" \
    OPRT_SUITE_SANITIZE="s5=tests/oprt_nvidia/test_nvidia_paths.py;-k;softmax or transpos" \
    bash scripts/gpu-suite.sh "$S/z" sanitize >/dev/null 2>&1
cp -r "$S/z/sanitizer" "$OUT/" 2>/dev/null; cp "$S/z/summary.txt" "$OUT/summary-z.txt"
grep -v "^name\|^NVIDIA" "$S/t/summary.txt" "$S/a/summary.txt" "$S/z/summary.txt"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
cat "$S/t/overhead.log"
echo; cat "$S/a/tune.log"
