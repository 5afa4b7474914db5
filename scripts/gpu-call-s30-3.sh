#!/usr/bin/env bash
# Session 30, call 3 (~7 minutes): the host overhead through the op API on this machine (warm from call 2's sweep),
# every nvidia test at this commit as two pytest processes at once (the paths file, the rest; as session 26's call
# 5), then memcheck + racecheck over the column reductions and the axis-0 softmax tests (the kernels of the rows that
# miss their targets).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s30-3.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_host_overhead host-overhead-s30
T=tests/oprt_nvidia
rest=$(ls $T/test_*.py | grep -v test_nvidia_paths.py)
gpu_pytest paths-s30-3 330 $T/test_nvidia_paths.py &
gpu_pytest rest-s30-3 330 $rest &
wait
gpu_sanitize s30cols "reduce_band_columns or reduce_wide_columns or softmax_cluster_cols or softmax_stash_cols"
