#!/usr/bin/env bash
# Session 22, call 4 (~1.5 minutes, on call 3's warm machine; run inline from the run tool's command line, kept here
# as the record): reduce_sum over the large set again, to see whether call 3's 16384^2 16-bit axis-0 rows (91.7-91.8%,
# 94.0-94.8 in session 21) and 8192^2 f32 axis -1 (95.3%) repeat on the same machine.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s22-4.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
GPU_BENCH_SHOW='reduce_sum' gpu_bench bench-large-reduce_sum-s22 200 large reduce_sum
