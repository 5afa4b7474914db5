#!/usr/bin/env bash
# Session 30, call 4 (~5 minutes): the default sweep of every op beside torch at this commit, at the default CI (as
# sessions 25-26) and with --target-ci 0 (every row's median over its whole 0.2 s budget, as call 2's large sweep).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s30-4.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
echo "== default $(date +%T)"
gpu_bench bench-default-s30 130 default all
echo "== default, full budget $(date +%T)"
gpu_bench bench-default-s30-full 300 default all --target-ci 0
echo "== done $(date +%T)"
