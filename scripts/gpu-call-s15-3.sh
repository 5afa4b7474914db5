#!/usr/bin/env bash
# Session 15, call 3: correctness at the session's library (reduce_cols_kernel's kEvictFirst parameter, off in the
# library; the L2 policy helpers moved to common.cuh: the library's PTX is unchanged but for the kernel names) and the
# clean flush: every nvidia test, compute-sanitizer memcheck + racecheck over the column tests; then every default
# case of every op beside torch under the default flush.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s15-3.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_call_suite s15 "$COLS_SANITIZE_K"
gpu_bench bench-default-s15 150 default all
