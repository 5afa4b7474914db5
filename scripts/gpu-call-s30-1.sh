#!/usr/bin/env bash
# Session 30, call 1 (~2 minutes of run): tune's "reduce chunkred s30" groups (reduce_chunkred.cuh: axis-0 sums of
# short blocks of whole contiguous rows, partial sums by red.global.add.v4.f32 into an L2-resident workspace, a
# dependent finishing kernel) against the library on the axis-0 rows that miss 95%: 8192^2 f32, 16384 x 8192 f16,
# 16384^2 f16; three runs each. The tune binary is built on the dev machine from this commit and carried.
# Run as: bash scripts/gpu-call-s30-1.sh   (carry: [".tunebin"])
set -u
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 300 .tunebin/tune "reduce chunkred s30" >"$OUT/tune-s30-1.log" 2>&1
echo "tune rc=$?"
grep -E "^## |^cudaMemcpy|library|chunkred|WRONG" "$OUT/tune-s30-1.log" | sed 's/  */ /g'
