#!/usr/bin/env bash
# Session 6, call 4 (~2.5 device minutes): call 3 ruled out the exps (no exps: slower) and the cluster
# exchange (+2.8 points without it); the kernel without both still makes 58% where the plain probe in the
# same order makes 82%. Here the differences left: the probe launched as clusters of 8 and/or capped at 2
# blocks an SM (the library's residency), the library kernel in three more L2 hint modes (demote lines after
# their last read; evict_last on half the first reads; no evict_last), and ncu's L2 hit rate of the probe.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT/ncu"
bash scripts/tune/build.sh "$S/tune.bin" >"$OUT/tune-build.log" 2>&1 || { tail -20 "$OUT/tune-build.log"; exit 1; }
OPRT_TUNE_VARIANTS="segfast1|cluster" timeout 120 "$S/tune.bin" "pattern probes" >"$OUT/tune-probes.log" 2>&1
echo "### probes: exit $?"; cat "$OUT/tune-probes.log"
OPRT_TUNE_VARIANTS="cols mode" timeout 150 \
    "$S/tune.bin" "softmax f32 16384x8192 axis 0|softmax f16 16384x8192 axis 0" >"$OUT/tune-modes.log" 2>&1
echo "### modes: exit $?"; cat "$OUT/tune-modes.log"
OPRT_TUNE_VARIANTS="passes3 lanes8 threads512 U4 seg2048 segfast1|cluster8 maxB2" timeout 150 ncu --clock-control none \
    -k "regex:strip_probe" -c 2 --section SpeedOfLight \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum \
    "$S/tune.bin" "pattern probes" >"$OUT/ncu/probe-segfast1.txt" 2>&1
grep -E "strip_probe|Duration|dram__bytes|hit_rate|DRAM Throughput" "$OUT/ncu/probe-segfast1.txt" | head -20
