#!/usr/bin/env bash
# Session 5, GPU call 4 (and 4b): the axis-0 softmax tune groups: clusters of 16 (segments of 1024 rows: half the L2
# footprint of 2048-row segments at the same strip width and occupancy); 4b: kColsAsync, cp.async rings. tune.cu only.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S"
bash scripts/tune/build.sh "$S/tune.bin" >"$OUT/tune-build.log" 2>&1 || { tail -30 "$OUT/tune-build.log"; exit 1; }
timeout 200 "$S/tune.bin" "softmax f32 16384x8192 axis 0|softmax f16 16384x8192 axis 0" >"$OUT/tune.log" 2>&1
cat "$OUT/tune.log"
