#!/usr/bin/env bash
# Session 31, call 1 (~3 minutes of run): tune's "reduce band cap s31" groups: the library's band tiles for reduce_sum
# over axis 0 with their resident blocks an SM capped by untouched dynamic shared memory (5, 4, 3, 2 an SM: fewer bytes
# in flight an SM), without the finishing kernel, after the read flush, the 64 KB tiles of U 16 capped alike, and the
# library's wide 1-D blocks on the 256 MiB rows (8192^2 f32, 16384 x 8192 f16); three runs each. The tune binary is
# built on the dev machine from this commit and carried.
# Run as: bash scripts/gpu-call-s31-1.sh   (carry: [".tunebin"])
set -u
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 400 .tunebin/tune "reduce band cap s31" >"$OUT/tune-s31-1.log" 2>&1
echo "tune rc=$?"
grep -E "^## |^cudaMemcpy|library|band|deep|WRONG" "$OUT/tune-s31-1.log" | sed 's/  */ /g'
