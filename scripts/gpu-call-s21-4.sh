#!/usr/bin/env bash
# Session 21, call 4: reduce_sum over the large set again (call 2 read its rows 0.5-2% slower than session 18 did, and
# torch's as well: the 16384^2 16-bit axis-0 rows fell under 95%), and the host overhead a third time, on whichever
# machine this call gets (each of calls 1-3 started a fresh one).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s21-4.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_host_overhead host-overhead-s21-4
GPU_BENCH_SHOW="\| reduce_sum \||rows with" gpu_bench bench-large-reduce_sum-s21 200 large reduce_sum
