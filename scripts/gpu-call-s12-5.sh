#!/usr/bin/env bash
# Session 12, call 5: what memcheck reported in call 4 (102 errors, 42 of 238 tests failed under it, none without
# it): the same selection stopped at its first failure, with the errors printed; then the large reduce_sum sweep
# (the f32 rows were not re-measured after c80ceb7).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s12-5.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_install
timeout 150 compute-sanitizer --tool memcheck --print-limit 12 --error-exitcode 99 python -m pytest -x -q -p no:cacheprovider \
    -m "not slow" tests/oprt_nvidia/test_nvidia_paths.py \
    -k "$COLS_SANITIZE_K" \
    >"$OUT/memcheck-diag.log" 2>&1
echo "memcheck rc=$?"
grep -m 40 -E "=========|FAILED|passed|failed" "$OUT/memcheck-diag.log"
GPU_BENCH_SHOW="\| no \||rows with" gpu_bench bench-large-reduce_sum-s12 150 large reduce_sum
