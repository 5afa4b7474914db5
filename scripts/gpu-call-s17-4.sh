#!/usr/bin/env bash
# Session 17, call 4: reduce_sum over axis 0 with a column tile's splits as one thread-block cluster ("reduce s17":
# reduce_cols_kernel's kCluster, the splits' sums added through distributed shared memory, no finishing kernel),
# beside the library's shapes, 8192^2 and 16384^2 in f32 and f16.
# Run as: bash scripts/gpu-call-s17-4.sh   (carry: ["build/tune.bin"] built from 6d7b1d3: the kernel and groups were reverted in 330ca11)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 200 build/tune.bin "${TUNE_GROUPS:-reduce s17}" >"$OUT/tune-s17-4.log" 2>&1
grep -v "WRONG at" "$OUT/tune-s17-4.log" | cut -c1-120
