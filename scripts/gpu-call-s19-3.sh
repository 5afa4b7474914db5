#!/usr/bin/env bash
# Session 19, call 3: timelines of the axis-0 softmax over 16384^2 f16: the library's clusters of 16 (128-byte
# strips) against a strip's axis over two clusters (kXSplit) at 256- and 128-byte strips (tune-s19-2.log: 56.9% /
# 67.9% against 77%): where do the split kernels lose what the diagnostics (tune-s19-1.log, 86.6% at 256 bytes) promised?
# Run as: bash scripts/gpu-call-s19-3.sh   (carry: ["build/tune.bin"])
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
OPRT_TUNE_SHAPES="16384x16384" timeout 200 build/tune.bin "softmax f32 axis 0 onchip timeline" >"$OUT/tune-s19-3-timeline.log" 2>&1
echo "rc=$?"
cat "$OUT/tune-s19-3-timeline.log"
