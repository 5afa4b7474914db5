#!/usr/bin/env bash
# Session 20, call 4: every op over the large case set in one sweep at this session's commit (the library's kernels are
# session 19's: 69985d8's driver copies and 5e79210's oprt_memset kernel, the cold flush; reduce_sum and softmax were
# last swept over the large set in session 18, before both).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s20-4.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_bench bench-large-s20 520 large all
