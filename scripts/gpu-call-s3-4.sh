#!/usr/bin/env bash
# Session 3, GPU call 4 (the last of the session's device time): the tuned configurations (cluster rows
# 256 x 8 f32 / 128 x 8 raw 16-bit, 1024-row reduce column chunks, plain-load transposed pairs): kernel-path
# tests, tune of the axis-0 and transposed groups (with why the cluster-columns launch was refused, if it
# was), then the large softmax / copy / reduce_sum rows and the default set of every op beside torch.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia tests/plugins/oprt-testplugin"
bash scripts/gpu-suite.sh "$S/i" install >/dev/null 2>&1 &
bash scripts/tune/build.sh "$S/tune.bin" >"$S/tune-build.log" 2>&1
wait
OPRT_SUITE_TESTS="tests/oprt_nvidia/test_nvidia_paths.py tests/oprt_nvidia/test_nvidia_ops.py" \
  OPRT_SUITE_STEP_TIMEOUT=100 bash scripts/gpu-suite.sh "$S/t" test >/dev/null 2>&1
cp "$S/t/suite.tar.gz" "$OUT/t.tar.gz"
timeout 60 "$S/tune.bin" "axis 0|transposed" >"$S/tune.log" 2>&1
cp "$S/tune.log" "$OUT/"
run_bench() { # name timeout args...
    local name=$1 to=$2; shift 2
    timeout "$to" oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench \
        --out "$S/$name" "$@" >"$S/$name.log" 2>&1
    echo "== $name: exit $?"; tail -n 2 "$S/$name.log"
    tar -czf "$OUT/$name.tar.gz" -C "$S" "$name" "$name.log"
}
run_bench bench-large-s3 230 --cases large --ops softmax,copy,reduce_sum --time-budget 0.2
run_bench bench-default-s3 130 --cases default --ops all --time-budget 0.1
cat "$S/i/summary.txt" "$S/t/summary.txt" | grep -v "^name\|^NVIDIA"
grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
python3 scripts/perf_table.py "$S"/bench-large-s3/results.csv 2>&1 | tail -45
python3 scripts/perf_table.py "$S"/bench-default-s3/results.csv 2>&1 | grep -v "| yes |" | tail -30
echo; cat "$S/tune.log"
