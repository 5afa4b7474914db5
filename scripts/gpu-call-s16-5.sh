#!/usr/bin/env bash
# Session 16, call 5: every op's default cases beside torch at the library of this session (81e34e7's kernels).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s16-5.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_bench bench-default-s16 150 default all
