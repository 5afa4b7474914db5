#!/usr/bin/env bash
# Session 17, call 3: the library of call 2 (reduce_rows_trips_kernel): every nvidia GPU test, compute-sanitizer memcheck
# + racecheck over the reduce_sum row tests (test_reduce_paths, the new test_reduce_rows_whole_trips), and the large
# reduce_sum sweep a second time (call 2 put 8192^2 f32 over the last axis at 95.1%).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s17-3.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
OPRT_SUITE_STEP_TIMEOUT=300 gpu_call_suite s17 "test_reduce_paths or whole_trips"
gpu_bench bench-large-reduce_sum-s17b 200 large reduce_sum
