#!/usr/bin/env bash
# Session 31, call 5 (~6 minutes): the library at this commit (the band kernel capped at 4 blocks an SM): installed,
# every nvidia test as two pytest processes at once (the paths file, the rest), then the large reduce_sum sweep beside
# torch at --target-ci 0 (the second of the session).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s31-5.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
T=tests/oprt_nvidia
rest=$(ls $T/test_*.py | grep -v test_nvidia_paths.py)
gpu_pytest paths-s31-5 330 $T/test_nvidia_paths.py &
gpu_pytest rest-s31-5 330 $rest &
wait
gpu_bench bench-large-reduce-s31b 200 large reduce_sum --target-ci 0
