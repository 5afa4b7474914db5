#!/usr/bin/env bash
# Session 4, GPU call 1: the nvidia GPU tests (first GPU run of session 3's -inf fix and of this session's
# kernel changes: one (max, sum) exchange in cluster rows, cluster-columns modes, transposed pairs at 40
# registers), then tune.cu's groups for the open issue-6 rows (axis-0 softmax modes, 65536-wide rows with
# clusters of 16, transposed 16-bit copy, f16 reduce rows).
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
OPRT_SUITE_TESTS=tests/oprt_nvidia OPRT_SUITE_STEP_TIMEOUT=200 bash scripts/gpu-suite.sh "$S/t" install test >/dev/null 2>&1
cp "$S/t/pytest.log" "$OUT/pytest.log"; cp "$S/t/summary.txt" "$OUT/summary-t.txt"
OPRT_TUNE_FILTER="${OPRT_TUNE_FILTER:-axis 0|cluster rows|transposed|reduce_sum f16 8192x8192 axis -1}" \
    OPRT_SUITE_STEP_TIMEOUT=240 bash scripts/gpu-suite.sh "$S/a" tune >/dev/null 2>&1
cp "$S/a/tune.log" "$S/a/tune-build.log" "$OUT/" 2>/dev/null
grep -v "^name\|^NVIDIA" "$S/t/summary.txt" "$S/a/summary.txt"
grep -E "passed|failed|error" "$S/t/pytest.log" | tail -15
echo; cat "$S/a/tune.log"
