#!/usr/bin/env bash
# Session 24, call 4 (~6 minutes; call 3 again without its MetaX step: call 3's nvidia build failed on a constexpr
# host function called from the kernel, fixed here; its MetaX shim suite passed): call 2's tensor-core sum moved from the general rows kernel (no gain there: the
# library 88.2-88.4% beside tune's one-trip kernels' 90.4-90.9%) into reduce_rows_trips_kernel, which now takes
# 16-bit rows of exactly 8192 elements. The reduce tests (test_reduce_rows_tensor_core_sums with the bf16 eps fixed),
# memcheck + racecheck over it and the whole-trips test; tune's "rows mma s24" groups (the library now the 16-bit
# trips kernel, beside call 2's variants) built while the tests run; the large reduce_sum sweep beside torch; the
# MetaX shim suite (not run since session 22).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s24-4.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
(bash scripts/tune/build.sh "$S/tune" >"$S/tune-build.log" 2>&1; echo "tune build rc=$?" >>"$S/tune-build.log") &
tune_pid=$!
OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia" \
OPRT_SUITE_TESTS="tests/oprt_nvidia/test_nvidia_paths.py tests/oprt_nvidia/test_nvidia_build.py -k reduce" \
    OPRT_SUITE_STEP_TIMEOUT=300 OPRT_SUITE_SANITIZERS="memcheck racecheck" \
    OPRT_SUITE_SANITIZE="s24trips=tests/oprt_nvidia/test_nvidia_paths.py;-k;tensor_core or whole_trips" \
    bash scripts/gpu-suite.sh "$S/t" install test sanitize >/dev/null 2>&1
cp "$S/t/pytest.log" "$OUT/pytest-reduce.log"
cp "$S/t/summary.txt" "$OUT/summary-reduce.txt"
mkdir -p "$OUT/sanitizer"
for f in "$S"/t/sanitizer/*.log; do tail -n 5 "$f" >"$OUT/sanitizer/$(basename "$f")"; done
grep "==\|passed\|failed\|SUMMARY" "$S/t/summary.txt"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
wait "$tune_pid"; tail -n 1 "$S/tune-build.log"
timeout 90 "$S/tune" "rows mma s24" >"$OUT/tune-s24-4.log" 2>&1
echo "tune rc=$?"
grep -E "^## |library|redm NT128 U8 RPB1 mode[01] chains1|redm NT256 U4 RPB1 mode3" "$OUT/tune-s24-4.log" | grep -v " WRONG at" | sed 's/  */ /g'
GPU_BENCH_SHOW="\| no \||rows with|reduce_sum \| 16384x8192|8192x8192-axis-1" gpu_bench bench-large-reduce-s24c 150 large reduce_sum
