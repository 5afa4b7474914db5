#!/usr/bin/env bash
# Session 7, call 4: the library with the on-chip axis-0 softmax kernel (softmax_cols_onchip_kernel):
#  1. every nvidia GPU test (new: on-chip column cases, the stash kernel forced through
#     OPRT_NVIDIA_SOFTMAX_COLS=stash), compute-sanitizer memcheck + racecheck over the column tests;
#  2. the large softmax sweep and the default softmax set beside torch;
#  3. tune.cu: the on-chip groups with the no-cluster diagnostics, and axis=all with the library's load and
#     two launches.
# Run as: OPRT_GIT_COMMIT=<full hash> bash scripts/gpu-call-s7-4.sh   (carry: [".whl"])
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
bash scripts/tune/build.sh "$S/tune.bin" >"$OUT/tune-build.log" 2>&1 &
OPRT_SUITE_TESTS=tests/oprt_nvidia OPRT_SUITE_STEP_TIMEOUT=150 OPRT_SUITE_SANITIZERS="memcheck racecheck" \
    OPRT_SUITE_SANITIZE="s7c4=tests/oprt_nvidia/test_nvidia_paths.py;-k;cols or negative_infinity or nan_block" \
    bash scripts/gpu-suite.sh "$S/t" install test sanitize >/dev/null 2>&1
wait
cp "$S/t/pytest.log" "$OUT/pytest.log"; cp "$S/t/summary.txt" "$OUT/summary-t.txt"
mkdir -p "$OUT/sanitizer"; for f in "$S"/t/sanitizer/*.log; do tail -n 5 "$f" >"$OUT/sanitizer/$(basename "$f")"; done
grep "==\|passed\|failed\|SUMMARY" "$S/t/summary.txt"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
timeout 200 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases large \
    --ops softmax --time-budget 0.2 --out "$S/bench-large-softmax-s7b" >"$S/bench-large-softmax-s7b.log" 2>&1
timeout 60 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases default \
    --ops softmax --time-budget 0.2 --out "$S/bench-default-softmax-s7" >"$S/bench-default-softmax-s7.log" 2>&1
tar -czf "$OUT/benches.tar.gz" -C "$S" bench-large-softmax-s7b bench-large-softmax-s7b.log bench-default-softmax-s7 \
    bench-default-softmax-s7.log
tail -n 1 "$S/bench-large-softmax-s7b.log" "$S/bench-default-softmax-s7.log"
python3 scripts/perf_table.py "$S"/bench-large-softmax-s7b/results.csv 2>&1 | grep -E "axis0|rows with"
python3 scripts/perf_table.py "$S"/bench-default-softmax-s7/results.csv 2>&1 | grep -E "axis0|rows with"
timeout 150 "$S/tune.bin" "axis 0 onchip|reduce_sum f32 2^27 axis all" >"$OUT/tune.log" 2>&1
echo "### tune: exit $?"; cat "$OUT/tune.log"
