#!/usr/bin/env bash
# Session 19, call 10: oprt_memset (the nvidia backend's cold flush) through cudaMemsetAsync instead of cudaMemset
# (call 9: the cudaMemset flush slowed the op timed after it by ~0.2 us for either backend): timing_compare.py again,
# then copy over the default set and copy / vector_add / relu over the large set beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s19-10.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
timeout 100 python scripts/timing_compare.py --reps 200 >"$OUT/timing-compare-s19-10.log" 2>&1
echo "rc=$?"
grep -E "timing (bench|nv-fl) " "$OUT/timing-compare-s19-10.log"
GPU_BENCH_SHOW="\| copy \||rows with" gpu_bench bench-default-copy-s19b 60 default copy
GPU_BENCH_SHOW="\| (copy|vector_add|relu) \| 134217728|rows with" gpu_bench bench-large-ew-s19 330 large copy,vector_add,relu
