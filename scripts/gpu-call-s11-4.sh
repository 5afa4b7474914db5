#!/usr/bin/env bash
# Session 11, call 4: at the final library (kColsMerge 2, 1a4c8a2; call 3 ran the GPU suite and the large
# softmax sweep there): the host overhead in rounds (first, before any sweep), the default set of every op
# beside torch, and the large sweeps of copy / vector_add / relu / reduce_sum (last measured in session 9).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s11-4.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_install
timeout 100 python scripts/host_overhead.py --rounds 5 --csv "$OUT/host-overhead-s11.csv" >"$OUT/host-overhead-s11.log" 2>&1
tail -n 12 "$OUT/host-overhead-s11.log"
gpu_bench bench-default-s11 150 default all
gpu_bench bench-large-reduce_sum-s11 150 large reduce_sum
gpu_bench bench-large-ew-s11 170 large copy,vector_add,relu
