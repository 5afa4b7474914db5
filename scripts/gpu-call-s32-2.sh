#!/usr/bin/env bash
# Session 32, call 2 (~9 minutes): the library at this commit (the kernels of 6342417, session 31's last code change:
# first tested on the GPU here) installed; the host overhead through the op API on the fresh machine; every nvidia test (two
# pytest processes in parallel); memcheck + racecheck over the band- and wide-column reduce tests; then the default
# sweep beside torch in what is left of the call's 600 s.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s32-2.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_host_overhead host-overhead-s32
T=tests/oprt_nvidia
rest=$(ls $T/test_*.py | grep -v test_nvidia_paths.py)
gpu_pytest paths-s32-2 330 $T/test_nvidia_paths.py &
gpu_pytest rest-s32-2 330 $rest &
wait
gpu_sanitize s32band "reduce_band_columns or reduce_wide_columns"
left=$((570 - SECONDS))
echo "default sweep: $left s left"
[ "$left" -gt 60 ] && gpu_bench bench-default-s32 "$left" default all
