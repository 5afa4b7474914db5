#!/usr/bin/env bash
# Session 9, call 2: the reduce_sum finishing kernels as programmatic dependent launches (reduce.cu,
# launch_dependent in common.cuh): every nvidia GPU test, memcheck + racecheck over the reduce path tests,
# the flush probe again (same cases as call 1), the large and default reduce_sum sweeps beside torch, and the
# host overhead in rounds (scripts/host_overhead.py --rounds).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s9-2.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_call_suite s9c2 "reduce"
timeout 120 python scripts/flush_probe.py --csv "$OUT/flush-probe-s9-2.csv" 2>&1 | tee "$OUT/flush-probe-s9-2.log"
timeout 150 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases large \
    --ops reduce_sum --time-budget 0.2 --out "$S/bench-large-reduce_sum-s9" >"$S/bench-large-reduce_sum-s9.log" 2>&1
timeout 60 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases default \
    --ops reduce_sum --time-budget 0.2 --out "$S/bench-default-reduce_sum-s9" >"$S/bench-default-reduce_sum-s9.log" 2>&1
tar -czf "$OUT/benches.tar.gz" -C "$S" bench-large-reduce_sum-s9 bench-large-reduce_sum-s9.log \
    bench-default-reduce_sum-s9 bench-default-reduce_sum-s9.log
tail -n 1 "$S/bench-large-reduce_sum-s9.log" "$S/bench-default-reduce_sum-s9.log"
python3 scripts/perf_table.py "$S"/bench-large-reduce_sum-s9/results.csv 2>&1 | grep -E "\| reduce_sum|rows with"
python3 scripts/perf_table.py "$S"/bench-default-reduce_sum-s9/results.csv 2>&1 | grep -E "rows with"
timeout 60 python scripts/host_overhead.py --csv "$OUT/host-overhead-s9.csv" 2>&1 | tee "$OUT/host-overhead-s9.log"
