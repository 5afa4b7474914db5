#!/usr/bin/env bash
# Session 23, call 1 (~4 minutes): tune.cu's "reduce band s23" groups (band-ordered column tiles for reduce_sum over
# axis 0, reduce_cols.cuh's reduce_cols_band_kernel, against the library's column kernel) on 8192^2 f32, 16384 x 8192
# f16, 8192^2 f16, 16384^2 f16 and f32.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s23-1.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
if ! bash scripts/tune/build.sh "$S/tune" >"$S/tune-build.log" 2>&1; then
    tail -n 30 "$S/tune-build.log" | tee "$OUT/tune-build.log"
    exit 1
fi
timeout 400 "$S/tune" "reduce band s23" >"$OUT/tune-s23-1.log" 2>&1
echo "tune rc=$?"
grep -E "^## |library|band" "$OUT/tune-s23-1.log" | sed 's/  */ /g'
