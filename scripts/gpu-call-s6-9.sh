#!/usr/bin/env bash
# Session 6, call 9 (~3.5 device minutes): the columns finishing pass with 8 loads in flight a thread
# (32 splits for the 1-D blocks of 16384 f32 columns: 4 round trips instead of 8): the reduce-path tests,
# the large reduce_sum sweep again, and the default softmax + reduce_sum sets (the default target, >= 0.95x
# torch, after session 6's axis-0 softmax and reduce changes).
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
bash scripts/gpu-suite.sh "$S/t" install >/dev/null 2>&1
timeout 100 python -m pytest -q -p no:cacheprovider tests/oprt_nvidia/test_nvidia_paths.py -k "reduce" >"$OUT/pytest.log" 2>&1
tail -n 2 "$OUT/pytest.log"
timeout 150 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases large \
    --ops reduce_sum --time-budget 0.2 --out "$S/bench-large-reduce_sum-s6b" >"$S/bench-large-reduce_sum-s6b.log" 2>&1
tar -czf "$OUT/bench-large-reduce_sum-s6b.tar.gz" -C "$S" bench-large-reduce_sum-s6b bench-large-reduce_sum-s6b.log
python3 scripts/perf_table.py "$S"/bench-large-reduce_sum-s6b/results.csv 2>&1 | grep -E "axis0|rows with"
timeout 150 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --cases default \
    --ops softmax,reduce_sum --time-budget 0.2 --out "$S/bench-default-s6" >"$S/bench-default-s6.log" 2>&1
tar -czf "$OUT/bench-default-s6.tar.gz" -C "$S" bench-default-s6 bench-default-s6.log
tail -n 1 "$S/bench-default-s6.log"
python3 scripts/perf_table.py "$S"/bench-default-s6/results.csv 2>&1 | grep -E "\| no \||rows with"
