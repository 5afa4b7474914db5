#!/usr/bin/env bash
# Session 32, call 3 (~8 minutes): the large sweep of every op beside torch at --target-ci 0 again, the kernels of call 1
# (no library change since 6342417), for medians over two sweeps at one commit on one host.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s32-3.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_bench bench-large-s32b 500 large all --target-ci 0
