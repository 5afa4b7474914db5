#!/usr/bin/env bash
# Session 18, call 6: the axis-0 softmax's tail ("widths s18": the library over 16384 rows at widths of 240-272
# strips of 128 bytes, f16 and f32): does the % move with the strip count's remainder against the clusters resident
# at once (16-bit 16384^2: 256 clusters of 16 blocks, ~15.5 resident)?
# Run as: bash scripts/gpu-call-s18-6.sh   (carry: ["build/tune.bin"])
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 200 build/tune.bin "${TUNE_GROUPS:-widths s18}" >"$OUT/tune-s18-6.log" 2>&1
grep -E "^## |library" "$OUT/tune-s18-6.log" | paste - - | sed 's/ (.* MiB moved)//' | cut -c1-130
