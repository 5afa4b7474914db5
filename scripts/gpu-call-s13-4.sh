#!/usr/bin/env bash
# Session 13, call 4: tune's merge-4 kernel with and without the 16-bit max on pairs (kPairMax) and its timeline,
# then the library with both (every nvidia GPU test, memcheck + racecheck over the column / group / special-value
# tests, the large and default softmax sweeps beside torch).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s13-4.sh   (carry: [".whl", "build/tune.bin"])
set -u
source scripts/gpu-call-lib.sh
timeout 100 build/tune.bin "s13 merge3" >"$OUT/tune-s13-4.log" 2>&1
grep -E "^## |merge4|library" "$OUT/tune-s13-4.log"
OPRT_TUNE_SHAPES="f16 merge4" timeout 60 build/tune.bin "softmax f32 axis 0 onchip timeline" >"$OUT/tune-s13-4-timeline.log" 2>&1
grep -E "^## |after the block|resident|stats " "$OUT/tune-s13-4-timeline.log"
gpu_call_suite s13c4 "$COLS_SANITIZE_K"
GPU_BENCH_SHOW="axis0|rows with" gpu_bench bench-large-softmax-s13b 200 large softmax
GPU_BENCH_SHOW="axis0|rows with" gpu_bench bench-default-softmax-s13b 60 default softmax
