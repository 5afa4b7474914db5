#!/usr/bin/env bash
# Session 30, call 2 (session 29 call 1 again: its results were lost before they were copied into the repo) (~9 minutes): the large sweep of every op beside torch with --target-ci 0, so that every row's
# median is taken over its whole 0.2 s budget (hundreds of samples) instead of the 5-19 that the default 1% CI stops
# at: the ties of sessions 25-27 judged on full-budget medians. The rows are kept if the limit cuts the sweep.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s30-2.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_install
echo "== large $(date +%T)"
gpu_bench bench-large-s30-full 520 large all --target-ci 0
echo "== done $(date +%T)"
