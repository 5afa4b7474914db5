#!/usr/bin/env bash
# Session 27, call 2 (~4 minutes): the kernel or the memory? scripts/placement_compare.py runs the nvidia and torch
# kernels of 256 MiB vector_add (f16, bf16, f32) and f16 copy on four buffer sets of each allocator and on sub-buffers
# of one allocation at chosen gaps, every sample interleaved under one flush and one pair of events.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s27-2.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
echo "== placement_compare $(date +%T)"
timeout 300 python scripts/placement_compare.py --reps 300 2>&1 | tee "$OUT/placement-compare-s27-2.log"
echo "== done $(date +%T)"
