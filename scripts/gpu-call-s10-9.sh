#!/usr/bin/env bash
# Session 10, call 9: at the final library (6e76161's kernels; the commits after it change tune, results and
# docs only), the default set of every op beside torch with room to finish (session 9's 50 s cut it at 124 of
# 150 rows) and the host overhead in rounds. Install only: the GPU suite ran in call 4 at 6e76161.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s10-9.sh   (carry: [".whl"])
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
bash scripts/gpu-suite.sh "$S/t" install >/dev/null 2>&1
grep "==" "$S/t/summary.txt"
name=bench-default-s10
timeout 240 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --time-budget 0.2 \
    --out "$S/$name" --cases default --ops all >"$S/$name.log" 2>&1
tail -n 1 "$S/$name.log"
tar -czf "$OUT/benches.tar.gz" -C "$S" "$name" "$name.log"
python3 scripts/perf_table.py "$S/$name/results.csv" 2>&1 | grep -E "\| no \||rows with"
timeout 90 python scripts/host_overhead.py --rounds 5 --csv "$OUT/host-overhead-s10.csv" >"$OUT/host-overhead-s10.log" 2>&1
tail -n 12 "$OUT/host-overhead-s10.log"
