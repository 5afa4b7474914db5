#!/usr/bin/env bash
# Session 11, call 5: second samples of what call 4 read lower than session 10 / 9 with the same kernels: the
# default set of copy / vector_add / relu (the 2 MiB 16-bit copy / relu rows at 0.939-0.944x torch) and the
# large reduce_sum sweep (16384^2 16-bit 92.7-94.4% against 95.1-99.3% in session 9).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s11-5.sh   (carry: [".whl"])
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
bash scripts/gpu-suite.sh "$S/t" install >/dev/null 2>&1
grep "==" "$S/t/summary.txt"
bench() {  # NAME TIMEOUT CASES OPS
    timeout "$2" oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --time-budget 0.2 \
        --out "$S/$1" --cases "$3" --ops "$4" >"$S/$1.log" 2>&1
    tail -n 1 "$S/$1.log"
    python3 scripts/perf_table.py "$S/$1/results.csv" 2>&1 | grep -E "\| no \||rows with"
    tar -czf "$OUT/$1.tar.gz" -C "$S" "$1" "$1.log"
}
bench bench-default-ew-s11b 100 default copy,vector_add,relu
bench bench-large-reduce_sum-s11b 120 large reduce_sum
