#!/usr/bin/env bash
# Session 5, GPU call 3: 16-bit softmax exps through ex2.approx (exp_t), the axis-0 kernel's rescale only
# where a warp's max moved and no per-element -inf select. The softmax GPU tests on it, tune.cu's axis-0 /
# rows groups, and ncu on the f16 axis-0 kernel again.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT/ncu"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
OPRT_SUITE_TESTS="tests/oprt_nvidia -k softmax" OPRT_SUITE_STEP_TIMEOUT=150 bash scripts/gpu-suite.sh "$S/t" install test >/dev/null 2>&1 &
bash scripts/tune/build.sh "$S/tune.bin" >"$OUT/tune-build.log" 2>&1
wait
cp "$S/t/pytest.log" "$OUT/pytest.log"; grep -v "^name\|^NVIDIA" "$S/t/summary.txt"; grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
timeout 200 "$S/tune.bin" "axis 0|cluster rows|fast rows" >"$OUT/tune.log" 2>&1
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
timeout 100 ncu --clock-control none --kernel-name-base demangled -k "regex:oprt_nv::softmax_cols" -c 1 \
    --section SpeedOfLight --section WarpStateStats --metrics "$M" "$S/tune.bin" "softmax f16 16384x8192 axis 0" >"$OUT/ncu/softmax-axis0-f16.txt" 2>&1
grep -E "Duration|dram__|Throughput|Warp Cycles Per Issued" "$OUT/ncu/softmax-axis0-f16.txt" | head
cat "$OUT/tune.log"
