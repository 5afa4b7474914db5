#!/usr/bin/env bash
# Session 23, call 4 (~7 minutes): every nvidia test (memcheck and racecheck over the band and wide column tests) at
# this session's library, then tune's 16-bit rows of 8192 over the last axis ("reduce rows16 s23": RPB rows a block
# in one trip against the library's general rows kernel), built while the tests run.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s23-4.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
(bash scripts/tune/build.sh "$S/tune" >"$S/tune-build.log" 2>&1; echo "tune build rc=$?" >>"$S/tune-build.log") &
tune_pid=$!
gpu_call_suite reduce-band "band_columns or wide_columns"
wait "$tune_pid"; tail -n 1 "$S/tune-build.log"
timeout 100 "$S/tune" "reduce rows16 s23" >"$OUT/tune-s23-4.log" 2>&1
echo "tune rc=$?"
grep -E "^## |library|rows16" "$OUT/tune-s23-4.log" | grep -v WRONG | sed 's/  */ /g'
