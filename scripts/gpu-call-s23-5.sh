#!/usr/bin/env bash
# Session 23, call 5 (~2 minutes): the default sweep of every op beside torch at this session's library.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s23-5.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_bench bench-default-s23 100 default all
