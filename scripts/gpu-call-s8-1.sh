#!/usr/bin/env bash
# Prepared in session 7 for the next session's first call (never run; ~5 device minutes):
#  1. every nvidia GPU test and compute-sanitizer memcheck + racecheck over the column tests: the 16-bit
#     on-chip kernel's scale fix (a thread that saw only -inf in a column whose sum is NaN wrote 0, found in
#     review after the last GPU call) and its test (test_softmax_cols_special_beside_negative_infinity), and
#     the column tests now run on both columns kernels (on-chip and, forced, stash) were compiled and
#     CPU-checked only;
#  2. the persistent on-chip axis-0 experiment (scripts/tune/softmax_persist.cuh: clusters that stay
#     resident and issue the next strip's loads as the write pass empties each slot) against the library's
#     on-chip kernel, f32 and f16 16384 x 8192, with clock64 stamps of the time blocks spend inside the
#     cluster barrier (persistent, and one cluster a strip = the library's schedule).
# Build the tune binary here first (scripts/tune/build.sh build/tune.bin, ~70 s on 2 cores) and pass
# carry: [".whl", "build/tune.bin"]; without it this script builds it on the device (~70 s more).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s8-1.sh
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
BIN=build/tune.bin
if [ ! -x "$BIN" ]; then
    mkdir -p build && bash scripts/tune/build.sh "$BIN" >"$OUT/tune-build.log" 2>&1 &
fi
OPRT_SUITE_TESTS=tests/oprt_nvidia OPRT_SUITE_STEP_TIMEOUT=200 OPRT_SUITE_SANITIZERS="memcheck racecheck" \
    OPRT_SUITE_SANITIZE="s8=tests/oprt_nvidia/test_nvidia_paths.py;-k;cols or negative_infinity or nan_block" \
    bash scripts/gpu-suite.sh "$S/t" install test sanitize >/dev/null 2>&1
wait
cp "$S/t/pytest.log" "$OUT/pytest.log"; cp "$S/t/summary.txt" "$OUT/summary-t.txt"
mkdir -p "$OUT/sanitizer"; for f in "$S"/t/sanitizer/*.log; do tail -n 5 "$f" >"$OUT/sanitizer/$(basename "$f")"; done
grep "==\|passed\|failed\|SUMMARY" "$S/t/summary.txt"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
timeout 120 "$BIN" "onchip persist" 2>&1 | tee "$OUT/tune-s8-1-persist.log"
