#!/usr/bin/env bash
# Prepared in session 24: the next session's second call (~8 minutes). Every nvidia test start to end under the 420 s
# step limit (session 24's call 1 was cut at ~99% under 330 s), with memcheck + racecheck over the tensor-core row sums
# and the whole-trips test (session 24's last test edits, after its GPU calls: the output filled with 7, +inf / -inf in
# one mma), then the default sweep of every op.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s25-2.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_call_suite s25 "tensor_core or whole_trips"
gpu_bench bench-default-s25 100 default all
