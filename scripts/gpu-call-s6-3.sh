#!/usr/bin/env bash
# Session 6, call 3 (~2 device minutes): what the axis-0 softmax loses to, by elimination.
# Call 2: the strip order is not it (swizzled strips: no change) and the probes in the library's order
# reach 81.9% with the same three sweeps. Here the library's configuration without its exps (diag1),
# without its cluster exchange (diag2: cluster_sync replaced by __syncthreads) and without both (diag3),
# f32 and f16; then ncu's issue and memory view of the library kernel against diag1 (f32).
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT/ncu"
bash scripts/tune/build.sh "$S/tune.bin" >"$OUT/tune-build.log" 2>&1 || { tail -20 "$OUT/tune-build.log"; exit 1; }
OPRT_TUNE_VARIANTS="diag|cols mode1 lanes8 threads512 U8 seg2048|cols mode1 lanes8 threads512 U4 seg2048" timeout 150 \
    "$S/tune.bin" "softmax f32 16384x8192 axis 0|softmax f16 16384x8192 axis 0" >"$OUT/tune-diag.log" 2>&1
echo "### diag: exit $?"; cat "$OUT/tune-diag.log"
OPRT_TUNE_VARIANTS="diag1 cols" timeout 150 ncu --clock-control none -k "regex:softmax_cols_cluster" -c 2 \
    --section SpeedOfLight --section SchedulerStats --section WarpStateStats \
    --metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum \
    "$S/tune.bin" "softmax f32 16384x8192 axis 0" >"$OUT/ncu/softmax-axis0-f32-diag1.txt" 2>&1
grep -E "softmax_cols|Duration|dram__bytes|hit_rate|DRAM Throughput|inst_executed|Issued Warp|No Eligible|Stall|Compute \(SM\)" \
    "$OUT/ncu/softmax-axis0-f32-diag1.txt" | head -40
