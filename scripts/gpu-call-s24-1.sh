#!/usr/bin/env bash
# Session 24, call 1 (~8 minutes on a fresh machine): every nvidia test at this session's start (the commits that
# sessions 23 checked on the CPU only: the band width range 18d2b51, the descriptor's device limits 0ca189f, the op
# API's device check 13c8a3d), memcheck + racecheck over the torch / CuPy / fast-path tests and the band tests, then
# tune's "rows bytes s24" group (one 256 MiB buffer reduced over the last axis as 16 KB and 32 KB rows, f16 and f32
# arithmetic), built while the tests run.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s24-1.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
(bash scripts/tune/build.sh "$S/tune" >"$S/tune-build.log" 2>&1; echo "tune build rc=$?" >>"$S/tune-build.log") &
tune_pid=$!
GPU_SUITE_SANITIZE="s24ops=tests/oprt_nvidia/test_nvidia_ops.py;-k;op_api_fast_path or torch_inputs or cupy_inputs|s24band=tests/oprt_nvidia/test_nvidia_paths.py;-k;band_columns" \
    gpu_call_suite s24 ""
wait "$tune_pid"; tail -n 1 "$S/tune-build.log"
timeout 60 "$S/tune" "rows bytes s24" >"$OUT/tune-s24-1.log" 2>&1
echo "tune rc=$?"
grep -E "^## |^cudaMemcpy|library|rows" "$OUT/tune-s24-1.log" | sed 's/  */ /g'
