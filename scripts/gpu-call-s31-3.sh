#!/usr/bin/env bash
# Session 31, call 3 (~2 minutes): does the library's band launch get the 4-blocks-an-SM cap that tune's variants get?
# ncu's launch figures (dynamic shared memory a block, the carveout, the occupancy limits) of the library's band kernel
# and of tune's capped variants in the 16-bit and f32 "reduce band keep s31" groups (tune binary carried, built from
# this commit).
# Run as: bash scripts/gpu-call-s31-3.sh   (carry: [".tunebin"])
set -u
OUT=${OUT:-/tmp/out}
M=launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static,launch__shared_mem_config_size
M=$M,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,launch__occupancy_limit_warps
M=$M,launch__occupancy_limit_blocks,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum
for g in f16 f32; do
    OPRT_TUNE_VARIANTS="4 an SM" timeout 150 ncu --clock-control none -k regex:band_kernel --metrics "$M" -c 6 \
        .tunebin/tune "reduce band keep s31 $g" >"$OUT/ncu-s31-3-$g.log" 2>&1
    echo "ncu $g rc=$?"
    grep -E "band_kernel|launch__|warps_active|duration" "$OUT/ncu-s31-3-$g.log" | sed 's/  */ /g' | head -70
done
