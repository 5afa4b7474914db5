#!/usr/bin/env bash
# Session 8, call 5: the library with the DSMEM exchange reading every rank at once (columns and cluster-rows
# softmax) and f32 axis-0 softmax keeping exps (kStoreExp):
#  1. every nvidia GPU test, compute-sanitizer memcheck + racecheck over the column, cluster-row, -inf and
#     NaN tests;
#  2. the large softmax sweep and the default softmax set beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash> bash scripts/gpu-call-s8-5.sh   (carry: [".whl"])
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
OPRT_SUITE_TESTS=tests/oprt_nvidia OPRT_SUITE_STEP_TIMEOUT=180 OPRT_SUITE_SANITIZERS="memcheck racecheck" \
    OPRT_SUITE_SANITIZE="s8c5=tests/oprt_nvidia/test_nvidia_paths.py;-k;cols or cluster or negative_infinity or nan_block" \
    bash scripts/gpu-suite.sh "$S/t" install test sanitize >/dev/null 2>&1
cp "$S/t/pytest.log" "$OUT/pytest.log"; cp "$S/t/summary.txt" "$OUT/summary-t.txt"
mkdir -p "$OUT/sanitizer"; for f in "$S"/t/sanitizer/*.log; do tail -n 5 "$f" >"$OUT/sanitizer/$(basename "$f")"; done
grep "==\|passed\|failed\|SUMMARY" "$S/t/summary.txt"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
timeout 200 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases large \
    --ops softmax --time-budget 0.2 --out "$S/bench-large-softmax-s8" >"$S/bench-large-softmax-s8.log" 2>&1
timeout 60 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases default \
    --ops softmax --time-budget 0.2 --out "$S/bench-default-softmax-s8" >"$S/bench-default-softmax-s8.log" 2>&1
tar -czf "$OUT/benches.tar.gz" -C "$S" bench-large-softmax-s8 bench-large-softmax-s8.log bench-default-softmax-s8 \
    bench-default-softmax-s8.log
tail -n 1 "$S/bench-large-softmax-s8.log" "$S/bench-default-softmax-s8.log"
python3 scripts/perf_table.py "$S"/bench-large-softmax-s8/results.csv 2>&1 | grep -E "axis0|65536|rows with"
python3 scripts/perf_table.py "$S"/bench-default-softmax-s8/results.csv 2>&1 | grep -E "axis0|rows with"
