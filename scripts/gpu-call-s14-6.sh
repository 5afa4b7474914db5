#!/usr/bin/env bash
# Session 14, call 6: scripts/flush_compare.py (the nvidia launcher and torch's call after each of three cold-L2
# flushes: is the 16-bit vector_add's 0.993-0.998x torch the flushes' difference?).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s14-6.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_install
timeout 150 python scripts/flush_compare.py --reps 100 2>&1 | tee "$OUT/flush-compare-s14.log"
