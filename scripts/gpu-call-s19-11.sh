#!/usr/bin/env bash
# Session 19, call 11: oprt_memset (the nvidia backend's cold flush) as a kernel of 16-byte stores (call 10: the driver's
# cudaMemsetAsync flush cost the next timed op as much as cudaMemset's): the memset and copy tests, timing_compare.py,
# copy over the default set and copy / vector_add / relu over the large set beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s19-11.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
timeout 60 python -m pytest -q -p no:cacheprovider tests/oprt_nvidia/test_nvidia_ops.py -k "memset_spans" 2>&1 | tail -n 3 | tee "$OUT/pytest-memset-s19.log"
timeout 100 python scripts/timing_compare.py --reps 200 >"$OUT/timing-compare-s19-11.log" 2>&1
echo "rc=$?"
grep -E "timing (bench|nv-fl) " "$OUT/timing-compare-s19-11.log"
GPU_BENCH_SHOW="\| copy \||rows with" gpu_bench bench-default-copy-s19c 60 default copy
GPU_BENCH_SHOW="\| (copy|vector_add|relu) \| 134217728|rows with" gpu_bench bench-large-ew-s19b 200 large copy,vector_add,relu
