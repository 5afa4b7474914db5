#!/usr/bin/env bash
# Session 5, GPU call 2: Nsight Compute on the library's softmax axis-0 kernel (f32, f16) and reduce_sum
# kernels (8192^2 f32, axis 0 and -1): does the second sweep hit L2, how busy is DRAM, what do the warps
# wait on; then tune.cu's axis-0 groups with 1024-thread blocks, one an SM (half the L2 footprint of two
# 512-thread blocks, the same loads in flight).
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT/ncu"
bash scripts/tune/build.sh "$S/tune.bin" >"$OUT/tune-build.log" 2>&1 || { tail -30 "$OUT/tune-build.log"; exit 1; }
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
prof() { # name filter kernel-regex
    timeout 120 ncu --clock-control none --kernel-name-base demangled -k "regex:$3" -c 1 \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
        --section LaunchStats --metrics "$M" "$S/tune.bin" "$2" >"$OUT/ncu/$1.txt" 2>&1
    echo "### $1"; grep -E "Duration|dram__|lts__t_sector_hit|DRAM Throughput|Memory Throughput|L2 Hit|Achieved Occupancy|Registers Per|Stall|Block Limit|Theoretical Occ|Waves" "$OUT/ncu/$1.txt" | head -40
}
prof softmax-axis0-f32 "softmax f32 16384x8192 axis 0" "oprt_nv::softmax_cols"
prof softmax-axis0-f16 "softmax f16 16384x8192 axis 0" "oprt_nv::softmax_cols"
prof reduce-axis0-f32 "reduce_sum f32 8192x8192 axis 0" "oprt_nv::reduce_cols_kernel"
prof reduce-rows-f32 "reduce_sum f32 8192x8192 axis -1" "oprt_nv::reduce_rows_kernel"
timeout 150 "$S/tune.bin" "axis 0" >"$OUT/tune.log" 2>&1
echo; sed -n '/softmax f32 16384x8192 axis 0/,$p' "$OUT/tune.log"
