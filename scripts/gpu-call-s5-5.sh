#!/usr/bin/env bash
# Session 5, GPU call 5: every nvidia GPU test and compute-sanitizer memcheck + racecheck over the softmax
# paths on the final kernels (exp_t, the axis-0 pass-1 changes), then the large softmax sweep beside torch.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
OPRT_SUITE_TESTS=tests/oprt_nvidia OPRT_SUITE_STEP_TIMEOUT=150 OPRT_SUITE_SANITIZERS="memcheck racecheck" \
    OPRT_SUITE_SANITIZE="s5-final=tests/oprt_nvidia/test_nvidia_paths.py;-k;softmax" \
    bash scripts/gpu-suite.sh "$S/t" install test sanitize >/dev/null 2>&1
cp "$S/t/pytest.log" "$OUT/pytest.log"; cp "$S/t/summary.txt" "$OUT/summary-t.txt"
mkdir -p "$OUT/sanitizer"; for f in "$S"/t/sanitizer/*.log; do tail -n 5 "$f" >"$OUT/sanitizer/$(basename "$f")"; done
timeout 200 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases large \
    --ops softmax --time-budget 0.2 --out "$S/bench-large-softmax-s5" >"$S/bench-large-softmax-s5.log" 2>&1
tar -czf "$OUT/bench-large-softmax-s5.tar.gz" -C "$S" bench-large-softmax-s5 bench-large-softmax-s5.log
grep "==\|passed\|failed\|SUMMARY" "$S/t/summary.txt"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
tail -n 2 "$S/bench-large-softmax-s5.log"
python3 scripts/perf_table.py "$S"/bench-large-softmax-s5/results.csv 2>&1 | tail -22
