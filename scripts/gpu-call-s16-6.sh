#!/usr/bin/env bash
# Session 16, call 6: the block-per-row reduction at a capped number of resident blocks an SM ("rows occupancy s16":
# tune's red_rows_kernel read 8192^2 f32 at 95.4% at 2 blocks an SM where the library's, at 3, read 92.0%).
# Run as: bash scripts/gpu-call-s16-6.sh   (carry: ["build/tune.bin"]); TUNE_GROUPS="rows cap s16" for the fourth round
# (call 7, log saved as tune-s16-7.log)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 150 build/tune.bin "${TUNE_GROUPS:-rows occupancy s16}" >"$OUT/tune-s16-6.log" 2>&1
grep -v "WRONG at" "$OUT/tune-s16-6.log" | cut -c1-110
