#!/usr/bin/env bash
# Session 26, call 6 (~6 minutes, the budget's rest): the ties at the DRAM peak sampled twice on one machine. The
# large copy / vector_add / relu rows beside torch, two sweeps back to back (each its own calibration), so that the
# spread of one row's speedup within a machine can be set beside the spread between sessions 25 and 26.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s26-6.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
GPU_BENCH_SHOW='\| (copy|vector_add|relu) \| 134217728|rows with' gpu_bench bench-large-ew-s26a 140 large copy,vector_add,relu
GPU_BENCH_SHOW='\| (copy|vector_add|relu) \| 134217728|rows with' gpu_bench bench-large-ew-s26b 140 large copy,vector_add,relu
