#!/usr/bin/env bash
# Session 25's third call (~2 minutes; the session's last ~6 device minutes, a fresh machine's start included). The
# launch notes (common.cuh note_launch, oprt_nvidia.last_launch): test_nvidia_paths.py start to end with its path
# assertions (_launched: each test's case reaches the kernel it was written for, on the H200's 132 SMs) and the
# build tests of the C function; then the host overhead (the note is two thread-local stores a launch).
# Run as: OPRT_GIT_COMMIT=<full hash> bash scripts/gpu-call-s25-3.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
T=tests/oprt_nvidia
gpu_pytest paths-s25-3 150 $T/test_nvidia_paths.py $T/test_nvidia_build.py -k "not tune"
gpu_host_overhead host-overhead-s25-4
