#!/usr/bin/env bash
# Session 28, call 1 (~6 minutes): the launch shape of the lean contiguous kernel against torch. Session 27's
# ew-lean.patch (one pack a thread, 32-bit index, no loop) launched 256-thread blocks; torch's vectorized kernel runs
# 128. ew-lean-b128.patch and ew-lean-b512.patch launch the lean kernel at 128 and 512 threads. Each built on the
# device, checked (oprt-bench --mode test over the default copy / vector_add / relu cases) and timed against torch
# (placement_compare --quick), the library first; then the host overhead.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s28-1.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
echo "== library $(date +%T)"
timeout 120 python scripts/placement_compare.py --quick --reps 300 2>&1 | tee "$OUT/placement-s28-1-library.log"
gpu_patch_compare s28-1 ew-lean-b128 ew-lean-b512 || exit 1
bash scripts/gpu-suite.sh "$S/t" install >/dev/null 2>&1
echo "== host overhead $(date +%T)"
gpu_host_overhead host-overhead-s28-1
echo "== done $(date +%T)"
