#!/usr/bin/env bash
# Session 14, call 3: the cluster scheduling policy "load balancing" for the pushed axis-0 launch on every shape it
# takes (f16 16384 x 8192 ran 74.9-75.5% with it against 74.0-74.9 in calls 1-2), and the timelines with it (how
# many SMs hold 0 / 1 / 2 blocks: ncu counted the SMs active 83% of the kernel's cycles).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s14-3.sh   (carry: [".whl", "build/tune.bin"])
set -u
source scripts/gpu-call-lib.sh
timeout 150 build/tune.bin "s14 balance" >"$OUT/tune-s14-3.log" 2>&1
grep -E "^## |library|merge4|refused|WRONG" "$OUT/tune-s14-3.log"
OPRT_TUNE_SHAPES="f16 merge4 push|merge4 push balance" timeout 120 build/tune.bin "softmax f32 axis 0 onchip timeline" \
    >"$OUT/tune-s14-3-timeline.log" 2>&1
grep -E "^## |resident|stats |SMs \(of|per cluster" "$OUT/tune-s14-3-timeline.log"
