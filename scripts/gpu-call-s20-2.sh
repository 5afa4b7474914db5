#!/usr/bin/env bash
# Session 20, call 2: the pipelined form of call 1's kernel (ew_transpose_vec_pipe_kernel: a 1-D grid striding over
# the tiles, the next tile's loads in flight during the current tile's stores), "transpose vec s20": f16 4096^2 /
# 8192^2 / 16384^2 and f32 4096^2 / 8192^2, beside the library, call 1's best one-tile form and the driver's
# contiguous copy of the same bytes; two runs.
# Run as: bash scripts/gpu-call-s20-2.sh   (carry: ["build/tune.bin"])
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 300 build/tune.bin "${TUNE_GROUPS:-transpose vec s20}" >"$OUT/tune-s20-2.log" 2>&1
echo "rc=$?"
cat "$OUT/tune-s20-2.log"
