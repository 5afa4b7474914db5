#!/usr/bin/env bash
# Session 17, call 6: the session's library (8cb2c1f's kernels; the GPU suite and sanitizers ran on it in call 3) in one
# sweep of every op: the large case set (every shape of issue 6), the default case set, and the host overhead.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s17-6.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
timeout 60 python scripts/host_overhead.py --rounds 5 --csv "$OUT/host-overhead-s17.csv" >"$OUT/host-overhead-s17.log" 2>&1
tail -n 12 "$OUT/host-overhead-s17.log"
gpu_bench bench-large-s17 420 large all
gpu_bench bench-default-s17 90 default all
