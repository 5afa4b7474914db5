#!/usr/bin/env bash
# Session 19, call 9 (call 8 again with three more timings: the nvidia events with torch's flush, torch's events with the nvidia flush, torch's fill_ of a changing byte): identical copies measured apart (bench-default-s19: cudaMemcpyAsync on both sides, 0.981-0.998x
# torch): scripts/timing_compare.py times the nvidia and torch copies on their own and each other's buffers, under each
# backend's own events and flush and under torch's for all.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s19-9.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
timeout 200 python scripts/timing_compare.py --reps 200 >"$OUT/timing-compare-s19-9.log" 2>&1
echo "rc=$?"
cat "$OUT/timing-compare-s19-9.log"
