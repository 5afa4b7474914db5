#!/usr/bin/env bash
# Session 11, call 4: at the final library (kColsMerge 2, 1a4c8a2; call 3 ran the GPU suite and the large
# softmax sweep there): the host overhead in rounds (first, before any sweep), the default set of every op
# beside torch, and the large sweeps of copy / vector_add / relu / reduce_sum (last measured in session 9).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s11-4.sh   (carry: [".whl"])
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
bash scripts/gpu-suite.sh "$S/t" install >/dev/null 2>&1
grep "==" "$S/t/summary.txt"
timeout 100 python scripts/host_overhead.py --rounds 5 --csv "$OUT/host-overhead-s11.csv" >"$OUT/host-overhead-s11.log" 2>&1
tail -n 12 "$OUT/host-overhead-s11.log"
bench() {  # NAME TIMEOUT CASES OPS
    timeout "$2" oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --time-budget 0.2 \
        --out "$S/$1" --cases "$3" --ops "$4" >"$S/$1.log" 2>&1
    tail -n 1 "$S/$1.log"
    python3 scripts/perf_table.py "$S/$1/results.csv" 2>&1 | grep -E "\| no \||rows with"
    tar -czf "$OUT/$1.tar.gz" -C "$S" "$1" "$1.log"
}
bench bench-default-s11 150 default all
bench bench-large-reduce_sum-s11 150 large reduce_sum
bench bench-large-ew-s11 170 large copy,vector_add,relu
