#!/usr/bin/env bash
# Session 9, the last call (written as call 3, run as call 6 after the reduce work of calls 3-5): the large
# sweeps of the ops that call 5 did not sweep (softmax; copy, vector_add, relu) and the default set of every op,
# at the final library commit (reduce_sum's large sweep ran in call 5 at the same library: the commits after
# d15ca48 change results and docs only). Install only: the GPU suite ran in call 5.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s9-3.sh   (carry: [".whl"])
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
bash scripts/gpu-suite.sh "$S/t" install >/dev/null 2>&1
grep "==" "$S/t/summary.txt"
bench() {  # NAME TIMEOUT ARGS...
    local name=$1 limit=$2
    shift 2
    timeout "$limit" oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench \
        --time-budget 0.2 --out "$S/$name" "$@" >"$S/$name.log" 2>&1
    tail -n 1 "$S/$name.log"
    python3 scripts/perf_table.py "$S/$name/results.csv" 2>&1 | grep -E "rows with"
}
bench bench-large-softmax-s9 200 --cases large --ops softmax
bench bench-large-ew-s9 200 --cases large --ops copy,vector_add,relu
bench bench-default-s9 50 --cases default --ops all
tar -czf "$OUT/benches.tar.gz" -C "$S" bench-large-ew-s9 bench-large-ew-s9.log bench-large-softmax-s9 \
    bench-large-softmax-s9.log bench-default-s9 bench-default-s9.log
