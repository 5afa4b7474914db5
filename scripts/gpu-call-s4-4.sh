#!/usr/bin/env bash
# Session 4, GPU call 4: tune.cu's axis-0 strip shapes around the new library choice, then the large sweep
# of the ops whose kernels changed since session 3 (copy, softmax; vector_add / relu never re-measured after
# session 3's bf16 conversion change) and the default set of all ops, beside torch, and the host overhead.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
OPRT_TUNE_FILTER="${OPRT_TUNE_FILTER:-axis 0}" OPRT_SUITE_STEP_TIMEOUT=150 bash scripts/gpu-suite.sh "$S/a" tune >/dev/null 2>&1
cp "$S/a/tune.log" "$OUT/" 2>/dev/null
bash scripts/gpu-suite.sh "$S/i" install >/dev/null 2>&1
timeout 280 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases large \
    --ops copy,softmax,vector_add,relu --time-budget 0.2 --out "$S/bench-large-s4" >"$S/bench-large-s4.log" 2>&1
tar -czf "$OUT/bench-large-s4.tar.gz" -C "$S" bench-large-s4 bench-large-s4.log
timeout 100 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases default \
    --time-budget 0.2 --out "$S/bench-default-s4" >"$S/bench-default-s4.log" 2>&1
tar -czf "$OUT/bench-default-s4.tar.gz" -C "$S" bench-default-s4 bench-default-s4.log
timeout 30 python scripts/host_overhead.py --backend nvidia --csv "$OUT/host-overhead.csv" >"$OUT/overhead.log" 2>&1
tail -2 "$S/bench-large-s4.log" "$S/bench-default-s4.log"; cat "$OUT/overhead.log"
python3 scripts/perf_table.py "$S"/bench-large-s4/results.csv 2>&1 | tail -40
python3 scripts/perf_table.py "$S"/bench-default-s4/results.csv 2>&1 | grep -v "| yes |" | tail -15
echo; cat "$S/a/tune.log" | sed -n '/axis 0/,$p'
