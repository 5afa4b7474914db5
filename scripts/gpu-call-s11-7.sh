#!/usr/bin/env bash
# Session 11, call 7: the reduce rows kernel triggers its dependent launch at its start again, split or not (call 6:
# 16384^2 f16 axis -1 98.6% with the trigger, 94.3% without). Every reduce test of tests/oprt_nvidia, memcheck over
# the reduce tests of test_nvidia_paths.py, and the f16 large reduce_sum rows again.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s11-7.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
OPRT_SUITE_TESTS="tests/oprt_nvidia -k reduce" OPRT_SUITE_STEP_TIMEOUT=200 OPRT_SUITE_SANITIZERS="memcheck" \
    OPRT_SUITE_SANITIZE="s11c7=tests/oprt_nvidia/test_nvidia_paths.py;-k;reduce" \
    bash scripts/gpu-suite.sh "$S/t" install test sanitize >/dev/null 2>&1
grep "==\|passed\|failed\|SUMMARY" "$S/t/summary.txt"
cp "$S/t/pytest.log" "$OUT/pytest.log"
GPU_BENCH_SHOW="^\| reduce" gpu_bench ab-trigger-2 60 large reduce_sum --dtypes f16,bf16
