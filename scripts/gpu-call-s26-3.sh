#!/usr/bin/env bash
# Session 26, call 3 (~4 minutes): the kernel column (results schema 3) on the GPU. Install; the nvidia tests of the
# column (test_bench_rows_name_their_kernels: a smoke sweep whose every row names a kernel of its op's family) and
# test_nvidia_build.py (the plugin's backend asking oprt_nvidia_last_launch); then the default sweep of every op beside
# torch, its CSV now naming each nvidia row's kernels (scripts/perf_table.py --kernel).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s26-3.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
T=tests/oprt_nvidia
gpu_pytest kernel-s26-3 200 $T/test_nvidia_build.py $T/test_nvidia_ops.py -k "bench_rows_name or last_launch or build"
gpu_bench bench-default-s26 110 default all
python3 scripts/perf_table.py "$S/bench-default-s26/results.csv" --all --kernel 2>&1 | awk -F'|' 'NR > 2 {print $2 "|" $10}' \
    | sort | uniq -c | sort -rn | head -40
