#!/usr/bin/env bash
# Session 10, call 11: the merge's barrier stamp (ColsProbe::barrier; null in the library): every nvidia GPU
# test and memcheck + racecheck over the group / column special-value tests at this tree, then the timelines
# with the exchange split into "the block's own warps" and "the merge and the other blocks".
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s10-11.sh   (carry: [".whl", "build/tune.bin"])
set -u
source scripts/gpu-call-lib.sh
gpu_call_suite s10c11 "group or cols_special or negative_infinity or nan_block"
timeout 60 build/tune.bin "softmax f32 axis 0 onchip timeline" >"$OUT/tune-s10-11-timeline.log" 2>&1
grep -E "^## |exchange split|resident" "$OUT/tune-s10-11-timeline.log"
