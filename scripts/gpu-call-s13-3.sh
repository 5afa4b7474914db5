#!/usr/bin/env bash
# Session 13, call 3: the pushed columns kernel folds max-first (kMerge 4; tune-s13-{1,2}.log): every nvidia GPU
# test, memcheck + racecheck over the column / group / special-value tests, the large and default softmax
# sweeps beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s13-3.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_call_suite s13c3 "$COLS_SANITIZE_K"
GPU_BENCH_SHOW="axis0|rows with" gpu_bench bench-large-softmax-s13 200 large softmax
GPU_BENCH_SHOW="axis0|rows with" gpu_bench bench-default-softmax-s13 60 default softmax
