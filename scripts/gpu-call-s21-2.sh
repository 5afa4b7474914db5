#!/usr/bin/env bash
# Session 21, call 2: every op over the large case set in one sweep at this session's commit (as gpu-call-s20-4.sh,
# whose results did not land; the kernels are session 19's: 69985d8's driver copies, 5e79210's oprt_memset kernel as
# the cold flush; reduce_sum and softmax were last swept over the large set in session 18, before both).
# First the host overhead again (call 1's ran after the GPU suite: 9.9-11.6 us through the op API, torch's own calls
# 8.0-9.8 us, 1.2-1.6x session 18's), then the sweep.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s21-2.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_host_overhead host-overhead-s21-2
gpu_bench bench-large-s21 520 large all
