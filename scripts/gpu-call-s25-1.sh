#!/usr/bin/env bash
# Prepared in session 24 (no device time left to run it): the next session's first call (~9 minutes). The large sweep
# of every op beside torch at session 24's library (16-bit rows of 8192 over the last axis summed on the tensor cores;
# every other kernel as in session 23's bench-large-s23): the issue's table at one commit.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s25-1.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_bench bench-large-s25 520 large all
# session 25: the host overhead after the sweep (its 100 s cap; if the call's 600 s limit cuts it, the sweep is already in $OUT)
gpu_host_overhead host-overhead-s25-1
