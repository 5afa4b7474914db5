#!/usr/bin/env bash
# Session 14, call 4: the library with the cluster scheduling policy "load balancing" on its 16-bit axis-0 launch
# (softmax.cu): tune's library rows beside the variants, every nvidia GPU test, memcheck + racecheck over the column
# / group / special-value tests, the large and default softmax sweeps beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s14-4.sh   (carry: [".whl", "build/tune.bin"])
set -u
source scripts/gpu-call-lib.sh
timeout 60 build/tune.bin "softmax f16 16384x8192 axis 0 s14 balance|softmax f16 4096x4096 axis 0 s14 balance|softmax f16 3000x4104 axis 0 s14 balance" \
    >"$OUT/tune-s14-4.log" 2>&1
grep -E "^## |library|merge4|refused|WRONG" "$OUT/tune-s14-4.log"
gpu_call_suite s14c4 "$COLS_SANITIZE_K"
GPU_BENCH_SHOW="axis0|rows with" gpu_bench bench-large-softmax-s14 200 large softmax
GPU_BENCH_SHOW="axis0|rows with" gpu_bench bench-default-softmax-s14 60 default softmax
