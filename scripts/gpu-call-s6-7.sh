#!/usr/bin/env bash
# Session 6, call 7 (~2.5 device minutes): (1) the stash configurations against the library, twice (call 6's
# run was slow for the library itself: 53.7% where calls 1-5 read 59-60%), f32 and f16; (2) reduce_sum
# 16384^2 f32 axis 0 (1 GiB; torch was 5% ahead in session 5): one wave of column chunks against two.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S"
bash scripts/tune/build.sh "$S/tune.bin" >"$OUT/tune-build.log" 2>&1 || { tail -20 "$OUT/tune-build.log"; exit 1; }
V="stash cols mode1 lanes16|cols mode1 lanes16 threads512 U4 seg2048|cols mode1 lanes8 threads512 U4 seg2048 maxB2 nb<=8|stash cols mode1 lanes8 threads512 U4 seg2048"
for i in 1 2; do
    OPRT_TUNE_VARIANTS="$V" timeout 150 "$S/tune.bin" "softmax f32 16384x8192 axis 0|softmax f16 16384x8192 axis 0" \
        >"$OUT/tune-stash-$i.log" 2>&1
    echo "### stash run $i: exit $?"; grep -v "^  probe\|pattern probes\|reference" "$OUT/tune-stash-$i.log"
done
timeout 150 "$S/tune.bin" "reduce_sum f32 16384x16384 axis 0" >"$OUT/tune-reduce16k.log" 2>&1
echo "### reduce 16384^2: exit $?"; cat "$OUT/tune-reduce16k.log"
