#!/usr/bin/env bash
# Session 16, call 4: the library of this session (wide 1-D column blocks at one an SM, 16 rows in flight; bf16 packs
# converted a word at a time in the column kernel): every nvidia GPU test, compute-sanitizer memcheck + racecheck over
# the column tests (softmax's as in sessions 10-15, and reduce_sum's wide columns in bf16, 2-D), and the large reduce_sum sweep.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s16-4.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
OPRT_SUITE_STEP_TIMEOUT=300 gpu_call_suite s16 "$COLS_SANITIZE_K or (reduce_wide_columns and 2d and bf16)"
gpu_bench bench-large-reduce_sum-s16b 200 large reduce_sum
