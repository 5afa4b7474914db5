#!/usr/bin/env bash
# Prepared in session 25 (no device time left to run it): the next session's first call (~2 minutes). The GPU path
# tests after session 25's last call: the (1, 64) softmax expectation corrected from call 6's failures, the review's
# changes (layout-only expectations on every GPU, the C declaration in csrc/extensions.cuh) and the softmax rows
# assertions (_rows_path), none of which has run on a GPU; then the build tests of oprt_nvidia_last_launch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s26-1.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
T=tests/oprt_nvidia
gpu_pytest paths-s26-1 200 $T/test_nvidia_paths.py $T/test_nvidia_build.py
