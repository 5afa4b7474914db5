#!/usr/bin/env bash
# Session 15, call 2: oprt-bench --flush clean (the cold flush, then a read of its buffer: the flush's dirty lines are
# written back before each sample instead of inside it) on the H200: the GPU tests of the clean flush (nvidia, torch,
# cupy), then the large reduce_sum, copy / vector_add / relu and softmax sweeps beside torch under it. The same sweeps
# under the default flush: bench-large-reduce_sum-s15 (call 1), session 14's for the others.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s15-2.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_install
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/oprt_nvidia/test_nvidia_ops.py -k "flush or clean" \
    tests/oprt_bench/test_baselines.py tests/oprt_bench/test_flush.py >"$OUT/pytest-flush.log" 2>&1
tail -n 3 "$OUT/pytest-flush.log"
gpu_bench bench-large-reduce_sum-clean-s15 150 large reduce_sum --flush clean
gpu_bench bench-large-ew-clean-s15 200 large copy,vector_add,relu --flush clean
gpu_bench bench-large-softmax-clean-s15 220 large softmax --flush clean
