#!/usr/bin/env bash
# Session 12, call 8: hypothesis fuzzing of the nvidia library's C ABI and the op API (its fast path included) at
# the final library of the session (the pushed columns exchange): 10000 examples per test (last GPU fuzz: c80ceb7, 5000).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s12-8.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
OPRT_FUZZ_EXAMPLES=10000 OPRT_SUITE_STEP_TIMEOUT=150 bash scripts/gpu-suite.sh "$S/t" install fuzz >/dev/null 2>&1
grep "==\|passed\|failed" "$S/t/summary.txt"
cp "$S/t/fuzz.log" "$OUT/fuzz-s12.log" 2>/dev/null || ls "$S/t"
