#!/usr/bin/env bash
# Session 4, GPU call 5 (the session's last device seconds): the softmax GPU tests and compute-sanitizer
# memcheck on the final softmax kernels (pair conversions, f32 axis-0 with 8 loads in flight), then the
# large and default softmax sweeps beside torch.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
OPRT_SUITE_TESTS="tests/oprt_nvidia -k softmax" OPRT_SUITE_STEP_TIMEOUT=120 OPRT_SUITE_SANITIZERS="memcheck" \
    OPRT_SUITE_SANITIZE="s4-final=tests/oprt_nvidia/test_nvidia_paths.py;-k;softmax" \
    bash scripts/gpu-suite.sh "$S/t" install test sanitize >/dev/null 2>&1
cp "$S/t/pytest.log" "$OUT/pytest.log"; cp -r "$S/t/sanitizer" "$OUT/"
timeout 170 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases large \
    --ops softmax --time-budget 0.2 --out "$S/bench-large-softmax-s4" >"$S/bench-large-softmax-s4.log" 2>&1
timeout 60 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases default \
    --ops softmax --time-budget 0.2 --out "$S/bench-default-softmax-s4" >"$S/bench-default-softmax-s4.log" 2>&1
tar -czf "$OUT/bench-softmax-s4.tar.gz" -C "$S" bench-large-softmax-s4 bench-large-softmax-s4.log \
    bench-default-softmax-s4 bench-default-softmax-s4.log
grep "==\|passed\|failed\|SUMMARY" "$S/t/summary.txt"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
tail -n 2 "$S/bench-large-softmax-s4.log"; tail -n 2 "$S/bench-default-softmax-s4.log"
python3 scripts/perf_table.py "$S"/bench-large-softmax-s4/results.csv 2>&1 | tail -25
python3 scripts/perf_table.py "$S"/bench-default-softmax-s4/results.csv 2>&1 | tail -3
