#!/usr/bin/env bash
# Session 18, call 4: the GPU suite at this session's commit (every nvidia test; memcheck + racecheck over the tests
# of session 17's two paths: whole-trip rows and wide transposed pairs), the host overhead (last measured in session
# 14), and every op over the default case set.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s18-4.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
OPRT_SUITE_STEP_TIMEOUT=300 gpu_call_suite s18 "whole_trips or transpose_pairs"
timeout 100 python scripts/host_overhead.py --rounds 5 --csv "$OUT/host-overhead-s18.csv" >"$OUT/host-overhead-s18.log" 2>&1
tail -n 12 "$OUT/host-overhead-s18.log"
gpu_bench bench-default-s18 90 default all
