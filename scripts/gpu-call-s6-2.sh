#!/usr/bin/env bash
# Session 6, call 2 (~3 device minutes): is the axis-0 softmax's block order what caps it?
# Call 1's probes made 90-96% of cudaMemcpy with the softmax's three sweeps when the blocks resident at once
# covered whole rows; the library's clusters cover a narrow band of strips (~4 KB of each 32 KB row) down all
# the rows. Here: the probes with the library's order (segfast1), and the library kernel with its strips
# swizzled (launch_cols_cluster's swizzle_group: groups of G adjacent strips spread over the row), f32 and
# f16, then ncu's DRAM bytes of the library kernel against the group-8 swizzle (f32).
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT/ncu"
bash scripts/tune/build.sh "$S/tune.bin" >"$OUT/tune-build.log" 2>&1 || { tail -20 "$OUT/tune-build.log"; exit 1; }
OPRT_TUNE_VARIANTS="probe passes3|probe passes2" timeout 120 "$S/tune.bin" "pattern probes" >"$OUT/tune-probes.log" 2>&1
echo "### probes: exit $?"; cat "$OUT/tune-probes.log"
OPRT_TUNE_VARIANTS="swz|cols mode1 lanes8 threads512 U8 seg2048|cols mode1 lanes8 threads512 U4 seg2048" timeout 150 \
    "$S/tune.bin" "softmax f32 16384x8192 axis 0|softmax f16 16384x8192 axis 0" >"$OUT/tune-swz.log" 2>&1
echo "### swizzle: exit $?"; cat "$OUT/tune-swz.log"
OPRT_TUNE_VARIANTS="swz cols lanes8 threads512 U8 group8" timeout 120 ncu --clock-control none -k "regex:softmax_cols_cluster" -c 2 \
    --section SpeedOfLight --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct \
    "$S/tune.bin" "softmax f32 16384x8192 axis 0" >"$OUT/ncu/softmax-axis0-f32-swz.txt" 2>&1
grep -E "softmax_cols|Duration|dram__|hit_rate|DRAM Throughput" "$OUT/ncu/softmax-axis0-f32-swz.txt" | head -16
