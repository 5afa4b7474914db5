#!/usr/bin/env bash
# Session 15, call 1: where the bench's 8192^2 and 16-bit 16384^2 reductions lose time. (1) tune's "reduce probe s15"
# groups: the library after the bench's memset flush, after a read of the flush buffer (L2 clean), and the library's
# column shape with L2 evict_first loads; the 8192^2 f32 rows again at a padded pitch (8320) and at other widths.
# (2) ncu on the library's kernels of four of those shapes (ncu flushes and invalidates the caches: the kernel's own
# time without any write-back). (3) the large reduce_sum sweep beside torch (last run in session 12).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s15-1.sh   (carry: [".whl", "build/tune.bin"])
set -u
source scripts/gpu-call-lib.sh
timeout 120 build/tune.bin "reduce probe s15" >"$OUT/tune-s15-1.log" 2>&1
grep -v "WRONG at" "$OUT/tune-s15-1.log" | grep -E "^## |library|cols|cudaMemcpy"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum
for g in "f32 8192x8192 pitch 8192 axis 0" "f32 8192x8192 pitch 8192 axis -1" "f16 8192x8192 pitch 8192 axis 0" \
         "f16 8192x8192 pitch 8192 axis -1" "f16 16384x16384 pitch 16384 axis 0"; do
    echo "== ncu: $g" >>"$OUT/ncu-s15-1.log"
    OPRT_TUNE_VARIANTS=none timeout 60 ncu --clock-control none --metrics $M -k regex:reduce_ --launch-skip 2 \
        --launch-count 4 build/tune.bin "reduce probe s15 $g" >>"$OUT/ncu-s15-1.log" 2>&1
done
grep -E "^== |reduce_(cols|rows)|gpu__time|dram__" "$OUT/ncu-s15-1.log" | cut -c1-150
gpu_install
gpu_bench bench-large-reduce_sum-s15 200 large reduce_sum
