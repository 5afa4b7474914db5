#!/usr/bin/env bash
# Session 23, call 2 (~8 minutes): the band-ordered column tiles in the library (reduce.cu: column reductions of
# >= 128 MiB outside the 1-D wide blocks). The reduce_sum tests (paths, build, ops) with memcheck and racecheck over
# the new band test; tune's neighbours of call 1's best shape ("reduce band s23b"); large and default reduce_sum
# beside torch (the large set with 16384 x 8192 now).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s23-2.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
(bash scripts/tune/build.sh "$S/tune" >"$S/tune-build.log" 2>&1; echo "tune build rc=$?" >>"$S/tune-build.log") &
tune_pid=$!
gpu_install
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/oprt_nvidia/test_nvidia_paths.py -k reduce \
    tests/oprt_nvidia/test_nvidia_build.py >"$OUT/pytest-reduce.log" 2>&1
tail -n 3 "$OUT/pytest-reduce.log"; grep -E "^FAILED|Error" "$OUT/pytest-reduce.log" | head -10
mkdir -p "$OUT/sanitizer"
for tool in memcheck racecheck; do
    timeout 200 compute-sanitizer --tool "$tool" --error-exitcode 99 --target-processes all python3 -m pytest -q \
        -p no:cacheprovider tests/oprt_nvidia/test_nvidia_paths.py -k "band_columns and (full or partial or 3d)" \
        >"$S/san-$tool.log" 2>&1
    echo "sanitizer $tool rc=$?"; tail -n 4 "$S/san-$tool.log" | tee "$OUT/sanitizer/band-$tool.log"
done
wait "$tune_pid"; tail -n 1 "$S/tune-build.log"
timeout 150 "$S/tune" "reduce band s23b" >"$OUT/tune-s23-2.log" 2>&1
echo "tune rc=$?"
grep -E "^## |library|band" "$OUT/tune-s23-2.log" | grep -v WRONG | sed 's/  */ /g'
GPU_BENCH_SHOW="reduce_sum" gpu_bench bench-large-reduce_sum-s23 200 large reduce_sum
GPU_BENCH_SHOW="\| no \|" gpu_bench bench-default-reduce_sum-s23 100 default reduce_sum
