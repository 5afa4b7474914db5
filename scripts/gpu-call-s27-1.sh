#!/usr/bin/env bash
# Session 27, call 1 (~5 minutes): is the 16-bit vector_add's 0.992-0.999x torch the bench's sampling? The same
# prepared launchers under the bench's sampling (torch first, 5-16 samples at --target-ci 0.01), reversed, over the
# whole budget (--target-ci 0) and interleaved (scripts/tie_compare.py), with the GPU's power, clocks and temperature
# logged every 100 ms; then the contiguous 2^27 copy / vector_add / relu rows of oprt-bench at the default CI and
# with --target-ci 0.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s27-1.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.limit --format=csv,noheader
Q=timestamp,power.draw,clocks.sm,clocks.mem,temperature.gpu,temperature.memory,clocks_throttle_reasons.active
nvidia-smi --query-gpu=$Q --format=csv -lms 100 >"$OUT/smi-s27-1.csv" 2>&1 &
SMI=$!
gpu_install
echo "== tie_compare $(date +%T)"
timeout 200 python scripts/tie_compare.py --rounds 10 --json "$OUT/tie-s27-1.json" 2>&1 | tee "$OUT/tie-compare-s27-1.log"
echo "== benches $(date +%T)"
GPU_BENCH_SHOW='\| (copy|vector_add|relu) \||rows with' gpu_bench bench-ew-s27-ci01 100 large copy,vector_add,relu \
    --shape 134217728
GPU_BENCH_SHOW='\| (copy|vector_add|relu) \||rows with' gpu_bench bench-ew-s27-full 100 large copy,vector_add,relu \
    --shape 134217728 --target-ci 0
echo "== done $(date +%T)"
kill $SMI
