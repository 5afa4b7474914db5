#!/usr/bin/env bash
# Session 27, call 3 (~6 minutes): torch's 16-bit vector_add is ~0.4% faster than the library's on the same buffers
# (call 2), where ncu (session 14, clean L2) saw the two equal. Torch's kernel loads through ld.global (LDG.E.128), the
# library's through ld.global.nc (LDG.E.128.CONSTANT). placement_compare --quick on the library, then on the library
# with scripts/tune/patches/ew-plain-loads.patch (plain loads in ew_contig_kernel) and ew-plain-loads-b128.patch
# (plain loads, 128-thread blocks as torch's), each patch built on the device (pip install of oprt_nvidia, ~40 s).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s27-3.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
echo "== library $(date +%T)"
timeout 120 python scripts/placement_compare.py --quick --reps 300 2>&1 | tee "$OUT/placement-s27-3-library.log"
for p in ew-plain-loads ew-plain-loads-b128; do
    f=scripts/tune/patches/$p.patch
    patch -p1 -s <"$f" || { echo "patch $p does not apply"; continue; }
    bash scripts/gpu-suite.sh "$S/t-$p" install >/dev/null 2>&1
    grep "==" "$S/t-$p/summary.txt"
    echo "== $p $(date +%T)"
    timeout 120 python scripts/placement_compare.py --quick --reps 300 2>&1 | tee "$OUT/placement-s27-3-$p.log"
    patch -R -p1 -s <"$f" || { echo "patch $p does not revert"; exit 1; }
done
echo "== done $(date +%T)"
