#!/usr/bin/env bash
# Session 16, call 8: the library with f32 rows of one 32 KB trip at two blocks an SM (reduce.cu, kRowsOneTripBlocks):
# the large reduce_sum sweep first, then every nvidia GPU test, memcheck + racecheck over the column tests and the
# reduce_sum path tests, and the default reduce_sum cases.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s16-8.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_bench bench-large-reduce_sum-s16c 200 large reduce_sum
OPRT_SUITE_STEP_TIMEOUT=300 gpu_call_suite s16c "$COLS_SANITIZE_K or test_reduce_paths"
gpu_bench bench-default-reduce_sum-s16c 60 default reduce_sum
