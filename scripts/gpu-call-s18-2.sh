#!/usr/bin/env bash
# Session 18, call 2: the default set's small copies ("copy ... MiB s18": 2 MiB 16-bit copies ran 0.944-0.985x torch's
# cudaMemcpyAsync in sessions 14-17) in other block shapes and through the driver's copy; and call 1's "rows order s18"
# groups again (every dyn variant now starts from a zeroed counter: call 1's first dyn row of each group read nothing).
# Run as: bash scripts/gpu-call-s18-2.sh   (carry: ["build/tune.bin"])
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 200 build/tune.bin "${TUNE_GROUPS:-MiB s18|rows order s18}" >"$OUT/tune-s18-2.log" 2>&1
grep -v "WRONG at" "$OUT/tune-s18-2.log" | cut -c1-110
