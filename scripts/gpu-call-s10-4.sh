#!/usr/bin/env bash
# Session 10, call 4: f32 softmax over axes of more than 8192 rows takes the on-chip kernel without clusters
# (softmax_cols.cuh, launch_cols_group; tune-s10-3-poll.log: 16384 x 8192 76.7% against 69.9%): every nvidia
# GPU test, memcheck + racecheck over the group / column special-value tests, the tune group, the large
# softmax sweep beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s10-4.sh   (carry: [".whl", "build/tune.bin"])
set -u
source scripts/gpu-call-lib.sh
gpu_call_suite s10c4 "group or cols_special or negative_infinity or nan_block"
timeout 60 build/tune.bin "onchip group" >"$OUT/tune-s10-4-group.log" 2>&1
grep -E "library|group reg16 smem16 chunk2|WRONG|##" "$OUT/tune-s10-4-group.log"
name=bench-large-softmax-s10
timeout 200 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --time-budget 0.2 \
    --out "$S/$name" --cases large --ops softmax >"$S/$name.log" 2>&1
tail -n 1 "$S/$name.log"
tar -czf "$OUT/benches.tar.gz" -C "$S" "$name" "$name.log"
python3 scripts/perf_table.py "$S/$name/results.csv" 2>&1 | grep -E "axis0|rows with"
