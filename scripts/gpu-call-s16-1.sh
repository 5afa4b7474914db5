#!/usr/bin/env bash
# Session 16, call 1: (1) tune's "read floor s16" groups: the least time a read of 64-512 MiB takes after the bench's
# memset flush and after the read flush (read_floor_kernel in eight shapes, one float a block out), beside the library's
# reduce_sum of the same bytes as rows of 8192 f32; (2) "reduce s16" groups: the column kernel with interleaved splits
# (every block in one band of rows at a time) and without its finishing kernel; (3) ncu on the floor kernels of 128 and
# 256 MiB (caches flushed and invalidated: the kernel's own time), each variant's checking launch (twins: the same kernel).
# Run as: bash scripts/gpu-call-s16-1.sh   (carry: ["build/tune.bin"])
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 150 build/tune.bin "read floor s16|reduce s16" >"$OUT/tune-s16-1.log" 2>&1
grep -v "WRONG at" "$OUT/tune-s16-1.log" | cut -c1-120
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum
for g in "read floor s16 128 MiB" "read floor s16 256 MiB"; do
    echo "== ncu: $g" >>"$OUT/ncu-s16-1.log"
    timeout 120 ncu --clock-control none --metrics $M -k regex:"read_floor|reduce_" \
        --launch-count 22 build/tune.bin "$g" >>"$OUT/ncu-s16-1.log" 2>&1
done
grep -E "^== |read_floor_kernel|reduce_(cols|rows)|gpu__time|dram__" "$OUT/ncu-s16-1.log" | cut -c1-150
