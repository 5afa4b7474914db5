#!/usr/bin/env bash
# Session 14, call 7: ncu on torch's f16 add and oprt's vector_add of 2^27 elements (scripts/vadd_profile.py).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s14-7.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_install
timeout 100 ncu --clock-control none --kernel-name-base demangled -k 'regex:CUDAFunctor_add|ew_contig' \
    --section LaunchStats --section SpeedOfLight --section MemoryWorkloadAnalysis python scripts/vadd_profile.py \
    >"$OUT/ncu-s14-vadd.log" 2>&1
grep -E "^  [a-z].*\(|Duration|DRAM Throughput|Block Size|Grid Size|Registers Per|Memory Throughput|Waves Per SM|L2 Hit" \
    "$OUT/ncu-s14-vadd.log" | cut -c1-140
