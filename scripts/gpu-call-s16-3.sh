#!/usr/bin/env bash
# Session 16, call 3: the wide-column reduction at one 1-D block an SM with 16 rows in flight (reduce.cu,
# kColWideUnroll). (1) tune: the library (new rule) beside the old configuration on 16384^2 f16 and f32, and
# "vector_add f16 2^27 s16" (evict_first / .cs loads, streaming stores); (2) the large reduce_sum sweep beside torch
# under the default flush and under --flush clean.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s16-3.sh   (carry: [".whl", "build/tune.bin"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 120 build/tune.bin "reduce s16 f32 16384|reduce s16b f16 16384|vector_add f16 2^27 s16" >"$OUT/tune-s16-3.log" 2>&1
grep -v "WRONG at" "$OUT/tune-s16-3.log" | cut -c1-120
gpu_install
gpu_bench bench-large-reduce_sum-s16 200 large reduce_sum
gpu_bench bench-large-reduce_sum-clean-s16 200 large reduce_sum --flush clean
