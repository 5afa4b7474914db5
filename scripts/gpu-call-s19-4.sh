#!/usr/bin/env bash
# Session 19, call 4: the library's contiguous copy against cudaMemcpyAsync (torch's copy_ path) from 2 to 512 MiB
# ("sizes s19", f16, three runs each).
# Run as: bash scripts/gpu-call-s19-4.sh   (carry: ["build/tune.bin"])
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 300 build/tune.bin "${TUNE_GROUPS:-sizes s19}" >"$OUT/tune-s19-4.log" 2>&1
echo "rc=$?"
cat "$OUT/tune-s19-4.log"
