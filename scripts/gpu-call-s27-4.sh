#!/usr/bin/env bash
# Session 27, call 4 (~5 minutes): the lean contiguous kernel against torch. scripts/tune/patches/ew-lean.patch
# launches, for contiguous tensors with no head or tail and < 2^31 packs, a kernel of one pack a thread with a 32-bit
# index, no loop and no head / tail test (12 instructions to its first load, as torch's; the library's ~40);
# ew-lean-plain.patch the same with ld.global loads. Each built on the device, checked (oprt-bench --mode test over
# the default copy / vector_add / relu cases) and timed against torch (placement_compare --quick), the library first.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s27-4.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
echo "== library $(date +%T)"
timeout 120 python scripts/placement_compare.py --quick --reps 300 2>&1 | tee "$OUT/placement-s27-4-library.log"
gpu_patch_compare s27-4 ew-lean ew-lean-plain || exit 1
echo "== done $(date +%T)"
