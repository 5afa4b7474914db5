#!/usr/bin/env bash
# Session 3, GPU call 5 (the session's last device seconds): the large reduce_sum rows beside torch (call 4's
# large sweep ran out of time before them) and the op API's host overhead.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
bash scripts/gpu-suite.sh "$S/i" install >/dev/null 2>&1
timeout 100 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases large \
    --ops reduce_sum --time-budget 0.2 --out "$S/bench-large-reduce-s3" >"$S/bench-large-reduce-s3.log" 2>&1
tar -czf "$OUT/bench-large-reduce-s3.tar.gz" -C "$S" bench-large-reduce-s3 bench-large-reduce-s3.log
timeout 25 python scripts/host_overhead.py --backend nvidia --csv "$OUT/host-overhead.csv" >"$OUT/overhead.log" 2>&1
tail -2 "$S/bench-large-reduce-s3.log"; cat "$OUT/overhead.log"
python3 scripts/perf_table.py "$S"/bench-large-reduce-s3/results.csv 2>&1 | tail -22
