#!/usr/bin/env bash
# Session 17, call 7: the transposed copy's 16-bit pairs in 128 x 64 tiles (16 KB a block, as f32's 64 x 64; 64 x 64 pairs
# moved 8 KB): tune's "transpose s17" groups (the library's row takes the new tiles; 64 x 64, 128 x 128 and 64 x 128
# pairs and the element kernel beside it), every nvidia GPU test with memcheck + racecheck over the transpose tests,
# then the default copy / relu sweep (its 4096^2 16-bit transposed rows were at 70.6-73.4%) and the large copy sweep.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s17-7.sh   (carry: [".whl", "build/tune.bin"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 100 build/tune.bin "transpose s17" >"$OUT/tune-s17-7.log" 2>&1
grep -v "WRONG at" "$OUT/tune-s17-7.log" | cut -c1-120
OPRT_SUITE_STEP_TIMEOUT=300 gpu_call_suite s17b "transpose"
GPU_BENCH_SHOW="transposed|rows with" gpu_bench bench-default-ew-s17 60 default copy,relu
GPU_BENCH_SHOW="transposed|rows with" gpu_bench bench-large-copy-s17 120 large copy
