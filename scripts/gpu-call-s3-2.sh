#!/usr/bin/env bash
# Session 3, GPU call 2: the fast-rows softmax, 2-byte transposed pairs and adaptive reduce unroll:
# the nvidia kernel-path tests and op-API tests, tune (16-bit groups with the new library rows, and the
# fast-rows kernel in other configurations), then the large softmax / reduce_sum / copy rows beside torch.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia tests/plugins/oprt-testplugin"
bash scripts/gpu-suite.sh "$S/i" install >/dev/null 2>&1
OPRT_SUITE_TESTS="tests/oprt_nvidia/test_nvidia_paths.py tests/oprt_nvidia/test_nvidia_ops.py tests/oprt_core/test_ops_api.py" \
  OPRT_SUITE_STEP_TIMEOUT=150 bash scripts/gpu-suite.sh "$S/t" test >/dev/null 2>&1
cp "$S/t/suite.tar.gz" "$OUT/t.tar.gz"
OPRT_TUNE_FILTER="f16|fast rows" bash scripts/gpu-suite.sh "$S/a" tune >/dev/null 2>&1
cp "$S/a/tune.log" "$S/a/tune-build.log" "$OUT/" 2>/dev/null
OPRT_SUITE_STEP_TIMEOUT=280 OPRT_SUITE_BENCH="large:nvidia,torch:softmax,reduce_sum,copy" OPRT_SUITE_BENCH_MODE=bench \
  OPRT_SUITE_BUDGET=0.2 bash scripts/gpu-suite.sh "$S/b" bench >/dev/null 2>&1
cp "$S/b/suite.tar.gz" "$OUT/b.tar.gz"
cat "$S/i/summary.txt" "$S/t/summary.txt" "$S/a/summary.txt" "$S/b/summary.txt" | grep -v "^name\|^NVIDIA"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -30
python3 scripts/perf_table.py "$S"/b/bench-large-*/results.csv 2>&1 | tail -60
echo; cat "$S/a/tune.log"
