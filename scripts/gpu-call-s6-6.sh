#!/usr/bin/env bash
# Session 6, call 6 (~2 device minutes). Call 5: the three-sweep pattern itself caps near 62-68% at 256 KB
# a block (the re-reads miss L2: 895 MB read of 537), and smaller segments hit L2 but lose overlap. Here each
# thread's first rows (the ones pass 2 reads last, likeliest gone from L2) stay in the shared memory that
# the 2-blocks-an-SM cap reserves anyway (ColsClusterArgs::stash, ~104 KB a block), f32 and f16; ncu's DRAM
# bytes of the library against the stash at the library's geometry (f32).
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT/ncu"
bash scripts/tune/build.sh "$S/tune.bin" >"$OUT/tune-build.log" 2>&1 || { tail -20 "$OUT/tune-build.log"; exit 1; }
OPRT_TUNE_VARIANTS="stash|cols mode1 lanes8 threads512 U8 seg2048 maxB2 nb<=8|cols mode1 lanes8 threads512 U4 seg2048 maxB2 nb<=8" \
    timeout 150 "$S/tune.bin" "softmax f32 16384x8192 axis 0|softmax f16 16384x8192 axis 0" >"$OUT/tune-stash.log" 2>&1
echo "### stash: exit $?"; cat "$OUT/tune-stash.log"
OPRT_TUNE_VARIANTS="stash cols mode1 lanes8 threads512 U8 seg2048" timeout 150 ncu --clock-control none \
    -k "regex:softmax_cols_cluster" -c 2 --section SpeedOfLight \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct \
    "$S/tune.bin" "softmax f32 16384x8192 axis 0" >"$OUT/ncu/softmax-axis0-f32-stash.txt" 2>&1
grep -E "softmax_cols|Duration|dram__bytes|hit_rate|DRAM Throughput" "$OUT/ncu/softmax-axis0-f32-stash.txt" | head -20
