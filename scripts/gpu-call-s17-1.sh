#!/usr/bin/env bash
# Session 17, call 1: the block-per-row reduction persistent and pipelined ("rows pipe s17": redp_rows_kernel, the next
# trip's loads in flight through the block reduction) at 1-8 blocks an SM, beside the library and tune's block-per-row
# kernels (red_rows_kernel<256, 8, 1> read 8192^2 f32 at 95.3-96.5% in session 16, the library 92.0-92.9%).
# Run as: bash scripts/gpu-call-s17-1.sh   (carry: ["build/tune.bin"])
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 200 build/tune.bin "${TUNE_GROUPS:-rows pipe s17}" >"$OUT/tune-s17-1.log" 2>&1
grep -v "WRONG at" "$OUT/tune-s17-1.log" | cut -c1-110
