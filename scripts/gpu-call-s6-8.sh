#!/usr/bin/env bash
# Session 6, call 8 (~7 device minutes): the library with session 6's two kernel changes (axis-0 softmax:
# 16 lanes f32 + the shared-memory stash; reduce_sum over axis 0 of rows >= 4096 packs: 1-D column blocks):
# every nvidia GPU test, compute-sanitizer memcheck + racecheck over the changed paths, then the large
# reduce_sum and softmax sweeps beside torch.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
OPRT_SUITE_TESTS=tests/oprt_nvidia OPRT_SUITE_STEP_TIMEOUT=150 OPRT_SUITE_SANITIZERS="memcheck racecheck" \
    OPRT_SUITE_SANITIZE="s6=tests/oprt_nvidia/test_nvidia_paths.py;-k;cluster_cols or reduce_paths" \
    bash scripts/gpu-suite.sh "$S/t" install test sanitize >/dev/null 2>&1
cp "$S/t/pytest.log" "$OUT/pytest.log"; cp "$S/t/summary.txt" "$OUT/summary-t.txt"
mkdir -p "$OUT/sanitizer"; for f in "$S"/t/sanitizer/*.log; do tail -n 5 "$f" >"$OUT/sanitizer/$(basename "$f")"; done
grep "==\|passed\|failed\|SUMMARY" "$S/t/summary.txt"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
for op in reduce_sum softmax; do
    timeout 200 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases large \
        --ops $op --time-budget 0.2 --out "$S/bench-large-$op-s6" >"$S/bench-large-$op-s6.log" 2>&1
    tar -czf "$OUT/bench-large-$op-s6.tar.gz" -C "$S" bench-large-$op-s6 bench-large-$op-s6.log
    tail -n 2 "$S/bench-large-$op-s6.log"
    python3 scripts/perf_table.py "$S"/bench-large-$op-s6/results.csv 2>&1 | grep -E "axis0|axis-0|axis 0|rows with" 
done
