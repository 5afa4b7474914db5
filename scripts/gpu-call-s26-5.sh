#!/usr/bin/env bash
# Session 26, call 5 (~5 minutes): the host overhead through the op API on this machine, then every nvidia test at the
# session's last library commit as two pytest processes at once (the paths file, the rest), as in session 25's call 2.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s26-5.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_host_overhead host-overhead-s26
T=tests/oprt_nvidia
gpu_pytest paths-s26-5 400 $T/test_nvidia_paths.py &
gpu_pytest rest-s26-5 400 $T/test_nvidia_build.py $T/test_nvidia_errors.py $T/test_nvidia_ops.py $T/test_tune_build.py &
wait
