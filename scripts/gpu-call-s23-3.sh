#!/usr/bin/env bash
# Session 23, call 3 (~8 minutes): the large sweep of every op beside torch at this session's library (band-ordered
# column tiles for reduce_sum; the large set with reduce_sum 16384 x 8192 and softmax 2^20 x 128): the table.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s23-3.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_bench bench-large-s23 500 large all
