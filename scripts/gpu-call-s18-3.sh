#!/usr/bin/env bash
# Session 18, call 3: every op over the large case set in one sweep (every shape of issue 6; session 17's sweep was cut
# at 47 of 48 cases by its 330 s limit). The library's kernels are session 17's (9766972; comment-only changes since).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s18-3.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_bench bench-large-s18 520 large all
