#!/usr/bin/env bash
# Session 17, call 5: reduce_sum's column finishing kernel with 16 loads in flight a thread where there are >= 16 splits
# (the 16-bit 16384^2 1-D blocks): tune's "reduce s17" groups (the library's row takes it; the same shape with the
# 8-load finishing kernel and without one beside it), then the large reduce_sum sweep.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s17-5.sh   (carry: [".whl", "build/tune.bin"]; run at a820aaf, reverted)
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 100 build/tune.bin "reduce s17" >"$OUT/tune-s17-5.log" 2>&1
grep -v "WRONG at" "$OUT/tune-s17-5.log" | cut -c1-120
gpu_install
GPU_BENCH_SHOW="16384x16384-axis0|rows with" gpu_bench bench-large-reduce_sum-s17c 200 large reduce_sum
