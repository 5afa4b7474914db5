#!/usr/bin/env bash
# Session 3, GPU call 1: the nvidia GPU tests (first run of the cluster kernel's ptxVersion guard), the
# 16-bit tune groups written in session 2 and never run (softmax f16 4096 / 128, reduce_sum f16 8192^2
# rows, f16 transposed pairs) plus f32 width 128, and the op API's host overhead after the params-key change.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia tests/plugins/oprt-testplugin"
OPRT_TUNE_FILTER="f16|softmax f32 524288x128" bash scripts/gpu-suite.sh "$S/a" install tune overhead >/dev/null 2>&1
cp "$S/a/tune.log" "$S/a/tune-build.log" "$S/a/overhead.log" "$OUT/" 2>/dev/null
OPRT_SUITE_TESTS="tests/oprt_nvidia tests/oprt_core/test_ops_api.py" OPRT_SUITE_STEP_TIMEOUT=150 \
  bash scripts/gpu-suite.sh "$S/t" test >/dev/null 2>&1
cp "$S/t/suite.tar.gz" "$OUT/t.tar.gz"
cat "$S/a/summary.txt" "$S/t/summary.txt" | grep -v "^name\|^NVIDIA"
echo; cat "$S/a/overhead.log"; echo; cat "$S/a/tune.log"
