#!/usr/bin/env bash
# Session 19, call 6: the axis-0 softmax at 256-byte strips in one cluster of 16 a strip: 512-thread blocks of 1024 rows
# (one an SM), the library's pushed exchange ("big blocks s19", f16 / f32 16384^2, two runs each).
# Run as: bash scripts/gpu-call-s19-6.sh   (carry: ["build/tune.bin"])
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 300 build/tune.bin "${TUNE_GROUPS:-big blocks s19}" >"$OUT/tune-s19-6.log" 2>&1
echo "rc=$?"
cat "$OUT/tune-s19-6.log"
