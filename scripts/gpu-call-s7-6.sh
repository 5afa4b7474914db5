#!/usr/bin/env bash
# Session 7, call 6 (the last): the library with the axis=all load change (reduce.cu, row_partial's kLdg) and
# the on-chip axis-0 softmax: every nvidia GPU test, memcheck + racecheck over the reduce path tests, the
# large and default reduce_sum sweeps beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash> bash scripts/gpu-call-s7-6.sh   (carry: [".whl"])
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
OPRT_SUITE_TESTS=tests/oprt_nvidia OPRT_SUITE_STEP_TIMEOUT=150 OPRT_SUITE_SANITIZERS="memcheck racecheck" \
    OPRT_SUITE_SANITIZE="s7c6=tests/oprt_nvidia/test_nvidia_paths.py;-k;reduce" \
    bash scripts/gpu-suite.sh "$S/t" install test sanitize >/dev/null 2>&1
cp "$S/t/pytest.log" "$OUT/pytest.log"; cp "$S/t/summary.txt" "$OUT/summary-t.txt"
mkdir -p "$OUT/sanitizer"; for f in "$S"/t/sanitizer/*.log; do tail -n 5 "$f" >"$OUT/sanitizer/$(basename "$f")"; done
grep "==\|passed\|failed\|SUMMARY" "$S/t/summary.txt"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
timeout 120 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases large \
    --ops reduce_sum --time-budget 0.2 --out "$S/bench-large-reduce_sum-s7" >"$S/bench-large-reduce_sum-s7.log" 2>&1
timeout 60 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases default \
    --ops reduce_sum --time-budget 0.2 --out "$S/bench-default-reduce_sum-s7" >"$S/bench-default-reduce_sum-s7.log" 2>&1
tar -czf "$OUT/benches.tar.gz" -C "$S" bench-large-reduce_sum-s7 bench-large-reduce_sum-s7.log \
    bench-default-reduce_sum-s7 bench-default-reduce_sum-s7.log
tail -n 1 "$S/bench-large-reduce_sum-s7.log" "$S/bench-default-reduce_sum-s7.log"
python3 scripts/perf_table.py "$S"/bench-large-reduce_sum-s7/results.csv 2>&1 | grep -E "\| reduce_sum|rows with"
python3 scripts/perf_table.py "$S"/bench-default-reduce_sum-s7/results.csv 2>&1 | grep -E "rows with"
