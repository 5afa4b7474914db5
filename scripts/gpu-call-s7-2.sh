#!/usr/bin/env bash
# Session 7, calls 2-3 (call 3 with the one-exp mode, kStoreExp): tune.cu's on-chip axis-0 softmax (softmax_cols_onchip_kernel: each block keeps its whole
# segment in registers and shared memory, clusters of up to 16 cover the axis; one DRAM read, one write)
# against the library's axis-0 kernel, f32 and f16 16384 x 8192, and shorter axes (4096, 1000 rows).
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
bash scripts/tune/build.sh "$S/tune.bin" >"$OUT/tune-build.log" 2>&1 || { tail -30 "$OUT/tune-build.log"; exit 1; }
timeout 240 "$S/tune.bin" "axis 0 onchip" >"$OUT/tune-onchip.log" 2>&1
echo "### tune onchip: exit $?"; cat "$OUT/tune-onchip.log"
