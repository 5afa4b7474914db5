#!/usr/bin/env bash
# Session 11, call 3: the columns kernels merge their (max, sum) pairs as shuffle trees with __expf (softmax.cu
# kColsMerge = 2; tune-s11-{1,2,2b}*.log): every nvidia GPU test, memcheck + racecheck over the group / column
# special-value tests, the large softmax sweep beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s11-3.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_call_suite s11c3 "group or cols_special or negative_infinity or nan_block"
GPU_BENCH_SHOW="axis0|rows with" gpu_bench bench-large-softmax-s11 200 large softmax
