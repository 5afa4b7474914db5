#!/usr/bin/env bash
# Session 19, call 5: contiguous copies of up to 64 MiB through cudaMemcpyAsync (elementwise.cu, kDriverCopyMaxBytes):
# the GPU suite (every nvidia test; memcheck + racecheck over the copy path tests), then copy over the default case set
# beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s19-5.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
OPRT_SUITE_STEP_TIMEOUT=300 gpu_call_suite s19 "copy_driver_and_kernel"
GPU_BENCH_SHOW="\| copy \||rows with" gpu_bench bench-default-copy-s19 90 default copy
