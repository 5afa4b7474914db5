#!/usr/bin/env bash
# Session 4, GPU call 2: the softmax GPU tests on the packed-exp rows (kRawExp), then tune.cu's axis-0
# cluster-columns modes (call 1 stopped at a refused variant) and the 16-bit rows with one exp an element.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
OPRT_TUNE_FILTER="${OPRT_TUNE_FILTER:-axis 0|cluster rows|f16 8192x16384 fast rows}" \
    OPRT_SUITE_STEP_TIMEOUT=240 bash scripts/gpu-suite.sh "$S/a" tune >/dev/null 2>&1
OPRT_SUITE_TESTS="tests/oprt_nvidia -k softmax" OPRT_SUITE_STEP_TIMEOUT=150 bash scripts/gpu-suite.sh "$S/t" install test >/dev/null 2>&1
cp "$S/t/pytest.log" "$OUT/pytest.log"; cp "$S/a/tune.log" "$S/a/tune-build.log" "$OUT/" 2>/dev/null
grep -v "^name\|^NVIDIA" "$S/t/summary.txt" "$S/a/summary.txt" | grep "==\|passed\|failed"
grep -E "FAILED|Error|assert" "$S/t/pytest.log" | head -20
echo; cat "$S/a/tune.log"
