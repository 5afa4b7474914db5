#!/usr/bin/env bash
# Session 26, call 2 (~2 minutes of run): tune's "reduce band ticket s26" groups (the library's band tiles with the
# finishing kernel folded into a last-block ticket, in 1-8 sequential column groups; reduce_bulk.cuh) against the
# library and the band kernel with and without its finishing kernel, 8192^2 f32, 16384 x 8192 f16 and f32; then call
# 1's bulk group on 8192^2 f32 again with a check that tolerates another summation order. The tune binary is built on
# the dev machine from this commit and carried (no install: nothing else runs).
# Run as: bash scripts/gpu-call-s26-2.sh   (carry: [".tunebin"])
set -u
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 200 .tunebin/tune "reduce band ticket s26|reduce bulk s26 f32 8192x8192" >"$OUT/tune-s26-2.log" 2>&1
echo "tune rc=$?"
grep -E "^## |^cudaMemcpy|library|band|bulk|WRONG" "$OUT/tune-s26-2.log" | sed 's/  */ /g'
