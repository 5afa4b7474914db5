#!/usr/bin/env bash
# Session 4, GPU call 3: every nvidia GPU test, compute-sanitizer memcheck + racecheck over the paths this
# session changed (softmax rows / cluster rows / cluster columns, transposed copy), and tune.cu's axis-0
# strip widths and 65536-row block shapes.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
OPRT_TUNE_FILTER="${OPRT_TUNE_FILTER:-axis 0|cluster rows}" OPRT_SUITE_STEP_TIMEOUT=200 \
    bash scripts/gpu-suite.sh "$S/a" tune >/dev/null 2>&1
OPRT_SUITE_TESTS=tests/oprt_nvidia OPRT_SUITE_STEP_TIMEOUT=150 OPRT_SUITE_SANITIZERS="memcheck racecheck" \
    OPRT_SUITE_SANITIZE="s4=tests/oprt_nvidia/test_nvidia_paths.py;-k;softmax or transpos" \
    bash scripts/gpu-suite.sh "$S/t" install test sanitize >/dev/null 2>&1
cp "$S/t/pytest.log" "$OUT/pytest.log"; cp -r "$S/t/sanitizer" "$OUT/"; cp "$S/a/tune.log" "$S/a/tune-build.log" "$OUT/" 2>/dev/null
grep -v "^name\|^NVIDIA" "$S/a/summary.txt" "$S/t/summary.txt" | grep "==\|passed\|failed\|SUMMARY"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
echo; cat "$S/a/tune.log"
