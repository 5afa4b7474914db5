#!/usr/bin/env bash
# Session 14, call 1: tune's merge-4 kernel with a share of the 16-bit exps on the FMA pipe (kPoly 1 / 2, exp2_fma)
# and under the cluster scheduling policy "spread" (session 13's prepared variants), with their timelines; then,
# the library unchanged since session 11 for these ops, the restatement of the rows not measured since then: host
# overhead, every default case, the large copy / vector_add / relu sweep (transposed copies included).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s14-1.sh   (carry: [".whl", "build/tune.bin"])
set -u
source scripts/gpu-call-lib.sh
timeout 120 build/tune.bin "s14 poly|softmax f16 16384x8192 axis 0 s13 merge3|softmax f32 16384x8192 axis 0 s13 merge3" \
    >"$OUT/tune-s14-1.log" 2>&1
grep -E "^## |merge|library|refused|WRONG" "$OUT/tune-s14-1.log"
OPRT_TUNE_SHAPES="f16 merge4" timeout 90 build/tune.bin "softmax f32 axis 0 onchip timeline" \
    >"$OUT/tune-s14-1-timeline.log" 2>&1
grep -E "^## |after the block|resident|stats |sharing|clusters that fit|per cluster" "$OUT/tune-s14-1-timeline.log"
gpu_install
timeout 100 python scripts/host_overhead.py --rounds 5 --csv "$OUT/host-overhead-s14.csv" >"$OUT/host-overhead-s14.log" 2>&1
tail -n 12 "$OUT/host-overhead-s14.log"
gpu_bench bench-default-s14 120 default all
gpu_bench bench-large-ew-s14 190 large copy,vector_add,relu
