#!/usr/bin/env bash
# Session 19, call 2: the axis-0 softmax with a strip's axis over several clusters (launch_cols_split, kXSplit) at
# 256-byte strips, against the library: f16 / f32 16384^2 and 4096^2 ("split s19"), two runs each, checked against
# the library's output on the first.
# Run as: bash scripts/gpu-call-s19-2.sh   (carry: ["build/tune.bin"])
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 400 build/tune.bin "${TUNE_GROUPS:-split s19}" >"$OUT/tune-s19-2.log" 2>&1
echo "rc=$?"
cat "$OUT/tune-s19-2.log"
