#!/usr/bin/env bash
# Session 5, GPU call 6: the large reduce_sum sweep (session 3's figures were the last; same kernels) and
# the default set of every op beside torch, on the final kernels; the host overhead once more.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
bash scripts/gpu-suite.sh "$S/i" install >/dev/null 2>&1
timeout 200 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases large \
    --ops reduce_sum --time-budget 0.2 --out "$S/bench-large-reduce-s5" >"$S/bench-large-reduce-s5.log" 2>&1
tar -czf "$OUT/bench-large-reduce-s5.tar.gz" -C "$S" bench-large-reduce-s5 bench-large-reduce-s5.log
timeout 150 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases default \
    --time-budget 0.2 --out "$S/bench-default-s5" >"$S/bench-default-s5.log" 2>&1
tar -czf "$OUT/bench-default-s5.tar.gz" -C "$S" bench-default-s5 bench-default-s5.log
timeout 30 python scripts/host_overhead.py --backend nvidia --csv "$OUT/host-overhead.csv" >"$OUT/overhead.log" 2>&1
tail -n 2 "$S/bench-large-reduce-s5.log" "$S/bench-default-s5.log"; cat "$OUT/overhead.log"
python3 scripts/perf_table.py "$S"/bench-large-reduce-s5/results.csv 2>&1 | tail -18
python3 scripts/perf_table.py "$S"/bench-default-s5/results.csv 2>&1 | grep -v "| yes |" | tail -15
