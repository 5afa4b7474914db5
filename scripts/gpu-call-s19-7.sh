#!/usr/bin/env bash
# Session 19, call 7: every op over the default case set beside torch at this session's library (contiguous copies of
# up to 64 MiB through cudaMemcpyAsync), then copy over the large set (its contiguous 2^27-element copies keep the
# kernel: 256 / 512 MiB).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s19-7.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_bench bench-default-s19 120 default all
GPU_BENCH_SHOW="\| copy \||rows with" gpu_bench bench-large-copy-s19 150 large copy
