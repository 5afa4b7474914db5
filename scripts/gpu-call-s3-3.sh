#!/usr/bin/env bash
# Session 3, GPU call 3: the cluster-columns softmax (axis 0), fast cluster rows (width 65536), pairs
# transpose without divisions, bf16 conversion by shift: kernel-path and op-API tests, compute-sanitizer
# (memcheck, racecheck) over the new paths, and tune (the new kernels in several configurations).
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia tests/plugins/oprt-testplugin"
bash scripts/gpu-suite.sh "$S/i" install >/dev/null 2>&1
OPRT_SUITE_TESTS="tests/oprt_nvidia/test_nvidia_paths.py tests/oprt_nvidia/test_nvidia_ops.py tests/oprt_core/test_ops_api.py" \
  OPRT_SUITE_STEP_TIMEOUT=150 bash scripts/gpu-suite.sh "$S/t" test >/dev/null 2>&1 &
bash scripts/tune/build.sh "$S/tune.bin" >"$S/tune-build.log" 2>&1
wait
cp "$S/t/suite.tar.gz" "$OUT/t.tar.gz"
timeout 150 "$S/tune.bin" "cluster rows|axis 0|fast rows|transposed|f16 32768x4096|f16 1048576x128" >"$S/tune.log" 2>&1
cp "$S/tune.log" "$S/tune-build.log" "$OUT/"
OPRT_SUITE_SANITIZERS="memcheck racecheck" OPRT_SUITE_STEP_TIMEOUT=70 \
  OPRT_SUITE_SANITIZE="new-paths=tests/oprt_nvidia/test_nvidia_paths.py;-k;cluster or fast_rows or transpose or long_rows" \
  bash scripts/gpu-suite.sh "$S/z" sanitize >/dev/null 2>&1
cp "$S/z/suite.tar.gz" "$OUT/z.tar.gz"
cat "$S/i/summary.txt" "$S/t/summary.txt" "$S/z/summary.txt" | grep -v "^name\|^NVIDIA"
grep -E "FAILED|Error|error" "$S/t/pytest.log" | head -30
echo; cat "$S/tune.log"
