#!/usr/bin/env bash
# Session 31, call 4 (~1 minute): tune's "reduce band order s31" groups: the library (band kernel capped at 4 an SM
# since e21920f) between and after tune's direct launches of the same kernel, capped and not: is the first slot of a
# run a bias? (carried tune binary, built from this commit)
# Run as: bash scripts/gpu-call-s31-4.sh   (carry: [".tunebin"])
set -u
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 150 .tunebin/tune "reduce band order s31" >"$OUT/tune-s31-4.log" 2>&1
echo "tune rc=$?"
grep -E "^## |^cudaMemcpy|library|band" "$OUT/tune-s31-4.log" | grep -v WRONG | sed 's/  */ /g'
