#!/usr/bin/env bash
# Session 5, GPU call 4b/4c: the axis-0 tune groups, one process per kind of variant (4b's single process
# died with "illegal instruction" before printing a row, so a crashing kind must not hide the others):
# the library with the register-staged modes, kColsAsyncPlain (cp.async, no hint), kColsAsync (with hint).
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S"
bash scripts/tune/build.sh "$S/tune.bin" >"$OUT/tune-build.log" 2>&1 || { tail -30 "$OUT/tune-build.log"; exit 1; }
for kind in "mode1" "mode3" "mode2"; do
    OPRT_TUNE_VARIANTS="$kind" timeout 100 "$S/tune.bin" "softmax f32 16384x8192 axis 0|softmax f16 16384x8192 axis 0" \
        >"$OUT/tune-$kind.log" 2>&1
    echo "### $kind: exit $?"; cat "$OUT/tune-$kind.log"
done
