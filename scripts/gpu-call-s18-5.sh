#!/usr/bin/env bash
# Session 18, call 5: the "rows order s18" groups once more after tune.cu's tidy (redc_variant; the check pass now runs
# each variant's pre step, so the counter variants are checked from a zeroed counter): a check of the tidy, not new data.
# Run as: bash scripts/gpu-call-s18-5.sh   (carry: ["build/tune.bin"])
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 200 build/tune.bin "${TUNE_GROUPS:-rows order s18}" >"$OUT/tune-s18-5.log" 2>&1
grep -v "WRONG at" "$OUT/tune-s18-5.log" | cut -c1-110
