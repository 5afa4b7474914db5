#!/usr/bin/env bash
# Session 17, call 2: the library with unsplit f32 rows of whole 8192-element trips in reduce_rows_trips_kernel (a block
# per row at two an SM, tune's red_rows_kernel<256, 8, 1> ported): tune's "rows pipe s17 f32" groups (the library's
# row is now the new path) first, then the large and default reduce_sum sweeps beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s17-2.sh   (carry: [".whl", "build/tune.bin"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 100 build/tune.bin "rows pipe s17 f32" >"$OUT/tune-s17-2.log" 2>&1
grep -v "WRONG at" "$OUT/tune-s17-2.log" | grep -E "##|library|grid = rows|NT512 U4, 2" | cut -c1-110
gpu_install
gpu_bench bench-large-reduce_sum-s17 200 large reduce_sum
gpu_bench bench-default-reduce_sum-s17 60 default reduce_sum
