#!/usr/bin/env bash
# Session 9, call 7 (the last ~4 device minutes): the reduce kernels trigger their dependent launch only when
# split: the reduce tests of tests/oprt_nvidia (wide columns included) and memcheck over the reduce path tests.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s9-7.sh   (carry: [".whl"])
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
OPRT_SUITE_TESTS="tests/oprt_nvidia -k reduce" OPRT_SUITE_STEP_TIMEOUT=90 OPRT_SUITE_SANITIZERS="memcheck" \
    OPRT_SUITE_SANITIZE="s9c7=tests/oprt_nvidia/test_nvidia_paths.py;-k;reduce" \
    bash scripts/gpu-suite.sh "$S/t" install test sanitize >/dev/null 2>&1
cp "$S/t/pytest.log" "$OUT/pytest.log"; cp "$S/t/summary.txt" "$OUT/summary-t.txt"
mkdir -p "$OUT/sanitizer"; for f in "$S"/t/sanitizer/*.log; do tail -n 5 "$f" >"$OUT/sanitizer/$(basename "$f")"; done
grep "==\|passed\|failed\|SUMMARY" "$S/t/summary.txt"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
