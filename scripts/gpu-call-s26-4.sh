#!/usr/bin/env bash
# Session 26, call 4 (~9-10 minutes): the large sweep of every op beside torch at this commit (the library as at
# 3af0e97: no kernel changed since session 24), now with the kernel column, so that the table says which
# kernel every large row ran. A slow host may stop it before its last rows: the next call resumes the run folder
# (oprt-bench --resume, OPRT_GIT_COMMIT the same).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s26-4.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_bench bench-large-s26 520 large all
