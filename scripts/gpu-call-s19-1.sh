#!/usr/bin/env bash
# Session 19, call 1: is the 16-bit axis-0 softmax held by its 128-byte row pieces? "wide diag s19": the library's
# on-chip kernel without exchange (each segment normalised alone) at 128-, 256- and 512-byte strips in strip order,
# 128-byte strips in groups of 4 and in band order, f16 16384^2; two runs.
# Run as: bash scripts/gpu-call-s19-1.sh   (carry: ["build/tune.bin"])
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 200 build/tune.bin "${TUNE_GROUPS:-wide diag s19}" >"$OUT/tune-s19-1.log" 2>&1
echo "rc=$?"
cat "$OUT/tune-s19-1.log"
