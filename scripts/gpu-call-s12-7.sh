#!/usr/bin/env bash
# Session 12, call 7: the large softmax sweep again at the final kernels (call 4 ran dce4aaa: the same kernels but
# for clusters of one block), for the run-to-run spread of the axis-0 rows.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s12-7.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_install
GPU_BENCH_SHOW="axis0|rows with" gpu_bench bench-large-softmax-s12b 200 large softmax
