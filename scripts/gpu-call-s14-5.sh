#!/usr/bin/env bash
# Session 14, call 5: the library with "load balancing" only for 16-bit clusters of fewer than 16 blocks (call 4 had
# it on every 16-bit launch: 4096^2 gained, 16384^2 lost): the large and default softmax sweeps beside torch. The
# device code is call 4's (its GPU tests and compute-sanitizer passed); only the launch attribute's choice changed.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s14-5.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_install
GPU_BENCH_SHOW="axis0|rows with" gpu_bench bench-large-softmax-s14b 200 large softmax
GPU_BENCH_SHOW="axis0|rows with" gpu_bench bench-default-softmax-s14b 60 default softmax
