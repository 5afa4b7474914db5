#!/usr/bin/env bash
# Session 9, call 5: the wide-columns rule of reduce_sum (reduce.cu, kColWidePacks: 16384^2 f16 / f32 axis 0 in
# ~2 long 1-D blocks an SM, tune-s9-4-cols1d.log): every nvidia GPU test (the new test_reduce_wide_columns
# included), memcheck + racecheck over the reduce path tests, the large and default reduce_sum sweeps.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s9-5.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_call_suite s9c5 "reduce"
bench() {  # NAME TIMEOUT ARGS...
    local name=$1 limit=$2
    shift 2
    timeout "$limit" oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench \
        --time-budget 0.2 --out "$S/$name" "$@" >"$S/$name.log" 2>&1
    tail -n 1 "$S/$name.log"
}
bench bench-large-reduce_sum-s9b 150 --cases large --ops reduce_sum
bench bench-default-reduce_sum-s9b 60 --cases default --ops reduce_sum
tar -czf "$OUT/benches.tar.gz" -C "$S" bench-large-reduce_sum-s9b bench-large-reduce_sum-s9b.log \
    bench-default-reduce_sum-s9b bench-default-reduce_sum-s9b.log
python3 scripts/perf_table.py "$S"/bench-large-reduce_sum-s9b/results.csv 2>&1 | grep -E "\| reduce_sum|rows with"
python3 scripts/perf_table.py "$S"/bench-default-reduce_sum-s9b/results.csv 2>&1 | grep -E "rows with"
