#!/usr/bin/env bash
# Session 2, GPU call 2: after the issue-6 kernel changes: tune round 2 and host overhead (alone on the
# GPU), the nvidia GPU tests, then the large case set benchmarked beside torch in every dtype.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia tests/plugins/oprt-testplugin"
OPRT_TUNE_FILTER="axis 0|transposed" bash scripts/gpu-suite.sh "$S/a" install tune overhead >/dev/null 2>&1
cp "$S/a/tune.log" "$OUT/tune.log"; cp "$S/a/overhead.log" "$OUT/overhead.log"
OPRT_SUITE_TESTS="tests/oprt_nvidia tests/oprt_core/test_ops_api.py" bash scripts/gpu-suite.sh "$S/t" test >/dev/null 2>&1
cp "$S/t/suite.tar.gz" "$OUT/t.tar.gz"
OPRT_SUITE_STEP_TIMEOUT=${OPRT_SUITE_STEP_TIMEOUT:-300} OPRT_SUITE_BENCH="large:nvidia,torch" OPRT_SUITE_BENCH_MODE=bench \
  OPRT_SUITE_BUDGET=0.2 bash scripts/gpu-suite.sh "$S/b" bench >/dev/null 2>&1
cp "$S/b/suite.tar.gz" "$OUT/b.tar.gz"
cat "$S/a/summary.txt" "$S/t/summary.txt" "$S/b/summary.txt"
python3 scripts/perf_table.py "$S"/b/bench-large-*/results.csv 2>&1 | tail -60
echo; cat "$S/a/overhead.log"; echo; cat "$S/a/tune.log"
