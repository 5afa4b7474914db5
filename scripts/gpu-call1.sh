#!/usr/bin/env bash
# Session 2, GPU call 1: kernel-variant microbenchmark + host overhead (alone on the GPU), then in
# parallel: the large case set in test mode on nvidia and metax (one process per dtype) and the
# metax / examples / isolation / integrity tests, fuzzing and the nvidia+faulty isolation sweep.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
bash scripts/gpu-suite.sh "$S/a" install tune overhead
cp "$S/a/suite.tar.gz" "$OUT/a.tar.gz"; cp "$S/a/tune.log" "$OUT/tune.log" 2>/dev/null
export OPRT_SUITE_STEP_TIMEOUT=${OPRT_SUITE_STEP_TIMEOUT:-330}
(OPRT_SUITE_SWEEP_SETS=large OPRT_SUITE_SWEEP_DTYPES="f32 f16 bf16" \
  OPRT_SUITE_SWEEP_OPS=copy,vector_add,relu,reduce_sum,softmax bash scripts/gpu-suite.sh "$S/b" sweep >/dev/null 2>&1;
  cp "$S/b/suite.tar.gz" "$OUT/b.tar.gz") &
(OPRT_SUITE_TESTS="tests/oprt_metax tests/examples tests/oprt_bench/test_isolation.py tests/oprt_bench/test_integrity.py" \
  OPRT_FUZZ_EXAMPLES=2500 bash scripts/gpu-suite.sh "$S/c" test fuzz isolation >/dev/null 2>&1;
  cp "$S/c/suite.tar.gz" "$OUT/c.tar.gz") &
wait
cat "$S/b/summary.txt" "$S/c/summary.txt"
echo; cat "$S/a/overhead.log"; echo; cat "$S/a/tune.log"
