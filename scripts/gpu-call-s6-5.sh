#!/usr/bin/env bash
# Session 6, call 5 (~2.5 device minutes). Calls 1-4's "three sweeps" probe was a reversed copy: its first
# sweep's loads were dead code (acc unused for kPasses 3), which is why ncu saw 537 MB read. Fixed here; the
# probes again (with the real first sweep), then the axis-0 softmax at smaller L2 footprints (128 KB and
# 64 KB a block instead of 256 KB: the library's re-reads miss L2, 893 MB read of 537), f32 and f16, and
# ncu's DRAM bytes of the library against 8 lanes x 1024 rows in clusters of 16 (f32).
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT/ncu"
bash scripts/tune/build.sh "$S/tune.bin" >"$OUT/tune-build.log" 2>&1 || { tail -20 "$OUT/tune-build.log"; exit 1; }
OPRT_TUNE_VARIANTS="passes3" timeout 120 "$S/tune.bin" "pattern probes" >"$OUT/tune-probes.log" 2>&1
echo "### probes: exit $?"; cat "$OUT/tune-probes.log"
OPRT_TUNE_VARIANTS="nb<=16|lanes4|cols mode1 lanes8 threads512 U8 seg2048|cols mode1 lanes8 threads512 U4 seg2048" timeout 150 \
    "$S/tune.bin" "softmax f32 16384x8192 axis 0|softmax f16 16384x8192 axis 0" >"$OUT/tune-footprint.log" 2>&1
echo "### footprint: exit $?"; cat "$OUT/tune-footprint.log"
OPRT_TUNE_VARIANTS="cols mode1 lanes8 threads512 U8 seg1024" timeout 150 ncu --clock-control none \
    -k "regex:softmax_cols_cluster" -c 2 --section SpeedOfLight \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct \
    "$S/tune.bin" "softmax f32 16384x8192 axis 0" >"$OUT/ncu/softmax-axis0-f32-seg1024.txt" 2>&1
grep -E "softmax_cols|Duration|dram__bytes|hit_rate|DRAM Throughput" "$OUT/ncu/softmax-axis0-f32-seg1024.txt" | head -20
