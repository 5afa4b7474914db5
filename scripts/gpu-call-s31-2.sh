#!/usr/bin/env bash
# Session 31, call 2 (~7 minutes): tune's "reduce band keep s31" groups (the band tiles' partial sums stored with an L2
# evict_last policy, beside caps of 3-5 blocks an SM; the carried tune binary, built here from this commit), then the
# library at this commit (the band kernel capped at 4 blocks an SM): installed, the reduce tests, memcheck + racecheck
# over the band-column tests, and the large reduce_sum sweep beside torch at --target-ci 0.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s31-2.sh   (carry: [".whl", ".tunebin"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 150 .tunebin/tune "reduce band keep s31" >"$OUT/tune-s31-2.log" 2>&1
echo "tune rc=$?"
grep -E "^## |^cudaMemcpy|library|band" "$OUT/tune-s31-2.log" | grep -v WRONG | sed 's/  */ /g'
gpu_install
gpu_pytest reduce-s31-2 200 tests/oprt_nvidia -k "reduce"
gpu_sanitize s31band "reduce_band_columns or reduce_wide_columns"
gpu_bench bench-large-reduce-s31 240 large reduce_sum --target-ci 0
