#!/usr/bin/env bash
# Prepared in session 5 for the next session's first GPU call (~4 device minutes; nothing here has run):
#  1. the axis-0 test written after session 5's last call (test_softmax_cluster_cols_wide_range_and_moving_max)
#     with the other cluster-columns and wide-range tests;
#  2. tune.cu's new experiments, each kind in its own process so a crash cannot hide the others:
#     the axis-0 pattern probes (is the strip pattern what caps the softmax near 60%?), the axis-0 band
#     pipeline (softmax_bandpipe.cuh: bands separated by kernel boundaries, with and without programmatic
#     dependent launch) and the one-kernel cluster reduce_sum over axis 0 (against the library's two kernels);
#  3. ncu on the library's reduce_sum axis-0 kernel (8192^2 f32): duration against the event-timed figure.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT/ncu"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
bash scripts/gpu-suite.sh "$S/t" install >/dev/null 2>&1 &
bash scripts/tune/build.sh "$S/tune.bin" >"$OUT/tune-build.log" 2>&1
wait
timeout 90 python -m pytest -q -p no:cacheprovider tests/oprt_nvidia/test_nvidia_paths.py -k "cluster_cols or wide_range" \
    >"$OUT/pytest.log" 2>&1
tail -n 3 "$OUT/pytest.log"
OPRT_TUNE_VARIANTS="probe" timeout 120 "$S/tune.bin" "pattern probes" >"$OUT/tune-probes.log" 2>&1
echo "### probes: exit $?"; cat "$OUT/tune-probes.log"
OPRT_TUNE_VARIANTS="pipe" timeout 120 "$S/tune.bin" "softmax f32 16384x8192 axis 0|softmax f16 16384x8192 axis 0" \
    >"$OUT/tune-pipe.log" 2>&1
echo "### bandpipe: exit $?"; cat "$OUT/tune-pipe.log"
OPRT_TUNE_VARIANTS="cluster cols|library" timeout 120 "$S/tune.bin" "reduce_sum f32 8192x8192 axis 0|reduce_sum f32 8192x16384 axis 0" \
    >"$OUT/tune-reduce-cluster.log" 2>&1
echo "### reduce cluster: exit $?"; cat "$OUT/tune-reduce-cluster.log"
OPRT_TUNE_VARIANTS="library" timeout 120 ncu --clock-control none -k "regex:reduce_cols" -c 2 --section SpeedOfLight \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum "$S/tune.bin" "reduce_sum f32 8192x8192 axis 0" \
    >"$OUT/ncu/reduce-axis0-f32.txt" 2>&1
grep -E "reduce_cols|Duration|dram__|DRAM Throughput" "$OUT/ncu/reduce-axis0-f32.txt" | head -12
