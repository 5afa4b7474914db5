#!/usr/bin/env bash
# Prepared in session 6 for the next session's first GPU call (~8 device minutes; nothing here has run):
#  1. every nvidia GPU test and compute-sanitizer memcheck + racecheck over the softmax and reduce paths at
#     the commit that removed session 6's experiment-only knobs from softmax_cols.cuh (d05bf82 and later:
#     compiled and CPU-tested only in session 6);
#  2. the large softmax sweep beside torch (the axis-0 rows at that commit);
#  3. tune.cu's 16-bit 1-D column-reduce experiment (reduce_sum f16 16384^2 axis 0: the library's 32 x 8
#     blocks made 89%; f32 went 94.5% -> 98.9% with 1-D blocks in session 6) and the axis=all experiment
#     (2^27 f32: a wave of blocks or less against the library's ~2 waves; torch was 3% ahead), and 16384^2
#     f32 axis 0 with 1-D blocks in clusters and no second launch (the library: 98.9% at 0.996x torch).
# Run as: OPRT_GIT_COMMIT=<full hash> bash scripts/gpu-call-s7-1.sh   (carry: [".whl"])
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
bash scripts/tune/build.sh "$S/tune.bin" >"$OUT/tune-build.log" 2>&1 &
OPRT_SUITE_TESTS=tests/oprt_nvidia OPRT_SUITE_STEP_TIMEOUT=150 OPRT_SUITE_SANITIZERS="memcheck racecheck" \
    OPRT_SUITE_SANITIZE="s7=tests/oprt_nvidia/test_nvidia_paths.py;-k;softmax or reduce_paths" \
    bash scripts/gpu-suite.sh "$S/t" install test sanitize >/dev/null 2>&1
wait
cp "$S/t/pytest.log" "$OUT/pytest.log"; cp "$S/t/summary.txt" "$OUT/summary-t.txt"
mkdir -p "$OUT/sanitizer"; for f in "$S"/t/sanitizer/*.log; do tail -n 5 "$f" >"$OUT/sanitizer/$(basename "$f")"; done
grep "==\|passed\|failed\|SUMMARY" "$S/t/summary.txt"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
timeout 200 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases large \
    --ops softmax --time-budget 0.2 --out "$S/bench-large-softmax-s7" >"$S/bench-large-softmax-s7.log" 2>&1
tar -czf "$OUT/bench-large-softmax-s7.tar.gz" -C "$S" bench-large-softmax-s7 bench-large-softmax-s7.log
tail -n 1 "$S/bench-large-softmax-s7.log"
python3 scripts/perf_table.py "$S"/bench-large-softmax-s7/results.csv 2>&1 | grep -E "axis0|rows with"
timeout 120 "$S/tune.bin" "reduce_sum f16 16384x16384 axis 0|reduce_sum f32 2^27 axis all|reduce_sum f32 16384x16384 axis 0" >"$OUT/tune-reduce.log" 2>&1
echo "### tune reduce f16 16384^2, axis all, f32 16384^2: exit $?"; cat "$OUT/tune-reduce.log"
