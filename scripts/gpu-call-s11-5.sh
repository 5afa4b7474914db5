#!/usr/bin/env bash
# Session 11, call 5: second samples of what call 4 read lower than session 10 / 9 with the same kernels: the
# default set of copy / vector_add / relu (the 2 MiB 16-bit copy / relu rows at 0.939-0.944x torch) and the
# large reduce_sum sweep (16384^2 16-bit 92.7-94.4% against 95.1-99.3% in session 9).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s11-5.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_install
gpu_bench bench-default-ew-s11b 100 default copy,vector_add,relu
gpu_bench bench-large-reduce_sum-s11b 120 large reduce_sum
