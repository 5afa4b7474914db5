#!/usr/bin/env bash
# Session 18, call 1: reduce_sum over axis 0 read in row order ("rows order s18": redc_rows_kernel, persistent blocks
# taking whole rows from an atomic counter or in a fixed stride, column sums in registers, a finishing kernel adding
# the grid's partial rows), beside the library's column kernel (8192^2 f32 87-88% of the copy peak in oprt-bench).
# Run as: bash scripts/gpu-call-s18-1.sh   (carry: ["build/tune.bin"])
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 200 build/tune.bin "${TUNE_GROUPS:-rows order s18}" >"$OUT/tune-s18-1.log" 2>&1
grep -v "WRONG at" "$OUT/tune-s18-1.log" | cut -c1-110
