#!/usr/bin/env bash
# Session 16, call 2: (1) "read floor s16b": the read floor after the bench's flush in one tile a block, by block size,
# loads in flight and load kind (evict_first policy, .cs, L2::256B, L1::no_allocate), beside the library's rows kernel;
# (2) tune's older "reduce_sum f32 8192x8192 axis -1" group (block-per-row kernels in eight shapes); (3) "reduce s16b":
# the column kernel with 16 rows in flight a thread, interleaved or not; (4) ncu on the 16384^2 f16 column variants.
# Run as: bash scripts/gpu-call-s16-2.sh   (carry: ["build/tune.bin"])
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 200 build/tune.bin "read floor s16b|reduce s16b|reduce_sum f32 8192x8192 axis -1" >"$OUT/tune-s16-2.log" 2>&1
grep -v "WRONG at" "$OUT/tune-s16-2.log" | cut -c1-120
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum
for g in "reduce s16b f16 16384x16384" "reduce s16b f16 8192x8192"; do
    echo "== ncu: $g" >>"$OUT/ncu-s16-2.log"
    timeout 120 ncu --clock-control none --metrics $M -k regex:"reduce_" --launch-count 14 build/tune.bin "$g" \
        >>"$OUT/ncu-s16-2.log" 2>&1
done
grep -E "^== |reduce_(cols|rows)|gpu__time|dram__throughput" "$OUT/ncu-s16-2.log" | cut -c1-150
