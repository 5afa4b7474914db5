#!/usr/bin/env bash
# Session 2, GPU call 3 (the last of the session's device time): the final issue-6 kernels: nvidia GPU
# tests, compute-sanitizer over every kernel path test, then the large reduce_sum/softmax rows and the
# default set benchmarked beside torch (the elementwise kernels are unchanged since call 2).
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia tests/plugins/oprt-testplugin"
OPRT_SUITE_TESTS="tests/oprt_nvidia tests/oprt_core/test_ops_api.py" OPRT_SUITE_STEP_TIMEOUT=120 \
  bash scripts/gpu-suite.sh "$S/t" install test >/dev/null 2>&1
cp "$S/t/suite.tar.gz" "$OUT/t.tar.gz"
OPRT_SUITE_SANITIZE="nvidia-paths=tests/oprt_nvidia/test_nvidia_paths.py" OPRT_SUITE_STEP_TIMEOUT=55 \
  bash scripts/gpu-suite.sh "$S/z" sanitize >/dev/null 2>&1
cp "$S/z/suite.tar.gz" "$OUT/z.tar.gz"
OPRT_SUITE_STEP_TIMEOUT=190 OPRT_SUITE_BENCH="large:nvidia,torch:reduce_sum,softmax" OPRT_SUITE_BENCH_MODE=bench \
  OPRT_SUITE_BUDGET=0.2 bash scripts/gpu-suite.sh "$S/b" bench >/dev/null 2>&1
cp "$S/b/suite.tar.gz" "$OUT/b.tar.gz"
OPRT_SUITE_STEP_TIMEOUT=110 OPRT_SUITE_BENCH="default:nvidia,torch:copy,vector_add,relu,reduce_sum,softmax" \
  OPRT_SUITE_BENCH_MODE=bench OPRT_SUITE_BUDGET=0.1 bash scripts/gpu-suite.sh "$S/d" bench >/dev/null 2>&1
cp "$S/d/suite.tar.gz" "$OUT/d.tar.gz"
cat "$S/t/summary.txt" "$S/z/summary.txt" "$S/b/summary.txt" "$S/d/summary.txt" | grep -v "^name\|^NVIDIA"
python3 scripts/perf_table.py "$S"/b/bench-large-*/results.csv 2>&1 | tail -40
python3 scripts/perf_table.py "$S"/d/bench-default-*/results.csv 2>&1 | grep -v "| yes |" | tail -40
