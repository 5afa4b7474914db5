#!/usr/bin/env bash
# Session 24, call 2 (~7 minutes): 16-bit rows over the last axis summed on the tensor cores (reduce.cu row_partial,
# common.cuh warp_pack_sum4). The reduce tests (the new test_reduce_rows_tensor_core_sums among them) with memcheck +
# racecheck over the new test and the misaligned reductions; tune's "rows mma s24" groups (the sum's modes against
# the library, which now takes mode 3's sum) built while the tests run; the large reduce_sum sweep beside torch; the
# host overhead.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s24-2.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
(bash scripts/tune/build.sh "$S/tune" >"$S/tune-build.log" 2>&1; echo "tune build rc=$?" >>"$S/tune-build.log") &
tune_pid=$!
OPRT_SUITE_TESTS="tests/oprt_nvidia/test_nvidia_paths.py tests/oprt_nvidia/test_nvidia_build.py -k reduce" \
    OPRT_SUITE_STEP_TIMEOUT=300 OPRT_SUITE_SANITIZERS="memcheck racecheck" \
    OPRT_SUITE_SANITIZE="s24mma=tests/oprt_nvidia/test_nvidia_paths.py;-k;tensor_core or reduce_paths_misaligned" \
    bash scripts/gpu-suite.sh "$S/t" install test sanitize >/dev/null 2>&1
cp "$S/t/pytest.log" "$OUT/pytest-reduce.log"
cp "$S/t/summary.txt" "$OUT/summary-reduce.txt"
mkdir -p "$OUT/sanitizer"
for f in "$S"/t/sanitizer/*.log; do tail -n 5 "$f" >"$OUT/sanitizer/$(basename "$f")"; done
grep "==\|passed\|failed\|SUMMARY" "$S/t/summary.txt"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
wait "$tune_pid"; tail -n 1 "$S/tune-build.log"
timeout 90 "$S/tune" "rows mma s24" >"$OUT/tune-s24-2.log" 2>&1
echo "tune rc=$?"
grep -E "^## |library|redm" "$OUT/tune-s24-2.log" | grep -v " WRONG at" | sed 's/  */ /g'
GPU_BENCH_SHOW="\| no \||rows with|reduce_sum \| 16384x8192|8192x8192-axis-1" gpu_bench bench-large-reduce-s24 150 large reduce_sum
gpu_host_overhead host-overhead-s24
