#!/usr/bin/env bash
# Session 32, call 1 (~8 minutes): tune's "reduce band tag s32" groups (the library's band tiles for reduce_sum over
# axis 0, capped at 4 an SM, with a finishing pass that reads each partial sum as it lands instead of waiting for the
# grid: scripts/tune/reduce_tagged.cuh; also at 3 an SM and uncapped; beside the library's finishing kernel, none,
# the read flush and evict_first loads; 8192^2 f32 and 16384 x 8192 f16, three runs each; the carried tune binary, built here from this commit), then
# the library at this commit installed and the whole large sweep beside torch at --target-ci 0.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s32-1.sh   (carry: [".whl", ".tunebin"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 100 .tunebin/tune "reduce band tag s32" >"$OUT/tune-s32-1.log" 2>&1
echo "tune rc=$?"
grep -E "^## |^cudaMemcpy|library|band" "$OUT/tune-s32-1.log" | sed 's/  */ /g'
gpu_install
gpu_bench bench-large-s32 440 large all --target-ci 0
