#!/usr/bin/env bash
# Session 12, call 4: the columns kernels' clusters exchange by st.async pushes counted on an mbarrier
# (kXPush; tune-s12-{2,3}.log): every nvidia GPU test, memcheck + racecheck over the group / column
# special-value / -inf / NaN / extremes tests, the large softmax sweep beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s12-4.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_call_suite s12c4 "$COLS_SANITIZE_K"
GPU_BENCH_SHOW="axis0|rows with" gpu_bench bench-large-softmax-s12 200 large softmax
