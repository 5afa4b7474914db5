#!/usr/bin/env bash
# Session 22, call 3 (~8 minutes, on call 2's machine, still warm): the host overhead again before any sweep (call 2's: 7.4-8.8 us
# through the op API), then every op over the large case set in one sweep at this session's commit: the issue's
# measured table at the current library (kernels unchanged since 5e79210; session 21 swept them at f5068ca) and a
# second machine's reading of the rows within ~1% of a target.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s22-3.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_host_overhead host-overhead-s22-3
gpu_bench bench-large-s22 470 large all
