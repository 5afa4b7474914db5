#!/usr/bin/env bash
# Session 8, call 10 (the last; ~4 device minutes were left): the library with ColsProbe (globaltimer stamps,
# off unless tune passes a buffer) in place of the admission gate:
#  1. the column / cluster / -inf / NaN GPU tests (the whole suite ran at 1bcc1c9, call 6);
#  2. tune: the on-chip axis-0 timeline (where a block's time goes) and the 16384 x 8192 library line.
# Build the tune binary here first (scripts/tune/build.sh build/tune.bin); carry: [".whl", "build/tune.bin"].
# Run as: OPRT_GIT_COMMIT=<full hash> bash scripts/gpu-call-s8-10.sh
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
bash scripts/gpu-suite.sh "$S/t" install >/dev/null 2>&1
grep "==" "$S/t/summary.txt"
timeout 120 python -m pytest -q -x -p no:cacheprovider tests/oprt_nvidia/test_nvidia_paths.py \
    -k "cols or cluster or negative_infinity or nan_block" >"$OUT/pytest-cols.log" 2>&1
echo "pytest exit $?"; tail -n 2 "$OUT/pytest-cols.log"
timeout 60 build/tune.bin "onchip timeline|f32 16384x8192 axis 0 onchip narrow" 2>&1 | tee "$OUT/tune-s8-10-timeline.log"
