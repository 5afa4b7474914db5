#!/usr/bin/env bash
# Prepared in session 7 for the next session (never run): the persistent on-chip axis-0 softmax experiment
# (scripts/tune/softmax_persist.cuh: clusters that stay resident and issue the next strip's loads as the write
# pass empties each slot) against the library's on-chip kernel, f32 and f16 16384 x 8192, and the clock64
# stamps of the time blocks spend inside the cluster barrier (persistent, and one cluster a strip = the
# library's schedule).
# Fastest: build here first (scripts/tune/build.sh build/tune.bin, ~70 s on 2 cores) and pass
# carry: ["build/tune.bin"]; without the binary this script builds it on the device (~70 s more).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
BIN=build/tune.bin
[ -x "$BIN" ] || { mkdir -p build && bash scripts/tune/build.sh "$BIN" >"$OUT/tune-build.log" 2>&1 || exit 1; }
timeout 120 "$BIN" "onchip persist" 2>&1 | tee "$OUT/tune-s8-1-persist.log"
