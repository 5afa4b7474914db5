#!/usr/bin/env bash
# Session 11, call 3: the columns kernels merge their (max, sum) pairs as shuffle trees with __expf (softmax.cu
# kColsMerge = 2; tune-s11-{1,2,2b}*.log): every nvidia GPU test, memcheck + racecheck over the group / column
# special-value tests, the large softmax sweep beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s11-3.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_call_suite s11c3 "group or cols_special or negative_infinity or nan_block"
name=bench-large-softmax-s11
timeout 200 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --time-budget 0.2 \
    --out "$S/$name" --cases large --ops softmax >"$S/$name.log" 2>&1
tail -n 1 "$S/$name.log"
tar -czf "$OUT/benches.tar.gz" -C "$S" "$name" "$name.log"
python3 scripts/perf_table.py "$S/$name/results.csv" 2>&1 | grep -E "axis0|rows with"
