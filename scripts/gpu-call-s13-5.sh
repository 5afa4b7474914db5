#!/usr/bin/env bash
# Session 13, call 5: the library's kernels of 5f97e9f again (merge 4; the pair max of 70e4f00 removed): the large
# softmax sweep beside torch, a second run for the run-to-run spread.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s13-5.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_install
GPU_BENCH_SHOW="axis0|rows with" gpu_bench bench-large-softmax-s13c 190 large softmax
