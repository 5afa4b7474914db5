#!/usr/bin/env bash
# Session 8, call 6 (the last): the final library (the columns exchange of 7fec296 and f32 kStoreExp of
# 2211b5d; the cluster-rows exchange back to session 7's loop):
#  1. host overhead of one op call on the fresh host, before anything else runs;
#  2. every nvidia GPU test;
#  3. the 65536-wide rows beside torch (the rows exchange revert), and 16384^2 axis 0 again.
# Run as: OPRT_GIT_COMMIT=<full hash> bash scripts/gpu-call-s8-6.sh   (carry: [".whl"])
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
OPRT_SUITE_TESTS=tests/oprt_nvidia OPRT_SUITE_STEP_TIMEOUT=180 \
    bash scripts/gpu-suite.sh "$S/t" install overhead test >/dev/null 2>&1
cp "$S/t/pytest.log" "$OUT/pytest.log"; cp "$S/t/summary.txt" "$OUT/summary-t.txt"
cp "$S/t/host-overhead.csv" "$OUT/" 2>/dev/null; cp "$S/t"/overhead*.log "$OUT/" 2>/dev/null
grep "==\|passed\|failed" "$S/t/summary.txt"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
cat "$OUT/host-overhead.csv" 2>/dev/null | head -20
timeout 90 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --ops softmax \
    --shape 2048x65536 --time-budget 0.2 --out "$S/bench-softmax-65536-s8" >"$S/bench-softmax-65536-s8.log" 2>&1
tar -czf "$OUT/benches.tar.gz" -C "$S" bench-softmax-65536-s8 bench-softmax-65536-s8.log
tail -n 1 "$S/bench-softmax-65536-s8.log"
python3 scripts/perf_table.py "$S"/bench-softmax-65536-s8/results.csv 2>&1 | grep -E "\| softmax|rows with"
