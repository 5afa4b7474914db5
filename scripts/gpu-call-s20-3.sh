#!/usr/bin/env bash
# Session 20, call 3: the checks session 19 left for after 5e79210's oprt_memset kernel (the cold flush and every GPU
# test's fill_nan go through it): the GPU suite (every nvidia test; memcheck + racecheck over the copy and transpose
# path tests, each of which also runs the memset kernel), the host overhead, and every op over the default case set.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s20-3.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
OPRT_SUITE_STEP_TIMEOUT=300 gpu_call_suite s20 "copy_driver_and_kernel or transpose"
timeout 100 python scripts/host_overhead.py --rounds 5 --csv "$OUT/host-overhead-s20.csv" >"$OUT/host-overhead-s20.log" 2>&1
tail -n 12 "$OUT/host-overhead-s20.log"
gpu_bench bench-default-s20 90 default all
