#!/usr/bin/env bash
# Session 18, call 7: timelines of the library's 16-bit axis-0 softmax over 16384 rows at 240, 244 and 256 strips of
# 128 bytes (call 6: 72.3 / 76.4 / 77.2% of cudaMemcpy): per-phase block times, residency, SMs used.
# Run as: bash scripts/gpu-call-s18-7.sh   (carry: ["build/tune.bin"])
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
OPRT_TUNE_SHAPES="wide" timeout 200 build/tune.bin "softmax f32 axis 0 onchip timeline" >"$OUT/tune-s18-7-timeline.log" 2>&1
cat "$OUT/tune-s18-7-timeline.log" | cut -c1-160
