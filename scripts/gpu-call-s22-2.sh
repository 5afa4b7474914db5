#!/usr/bin/env bash
# Prepared in session 22 (no device lent); the second call of the next session with one (~4 minutes): the host
# overhead in rounds after 2189956's fast path, the call in pieces (host_profile.py), one launch's host time in C
# (tune/launch_cost.cu: the library's launches against an empty kernel through <<<>>>, cudaLaunchKernel and
# cuLaunchKernel), then every op over the default case set beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s22-2.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
gpu_host_overhead host-overhead-s22
gpu_host_profile host-profile-s22
gpu_launch_cost launch-cost-s22
gpu_bench bench-default-s22 90 default all
