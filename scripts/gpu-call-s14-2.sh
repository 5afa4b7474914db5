#!/usr/bin/env bash
# Session 14, call 2: (1) vector_add / copy of 2^27 16-bit elements in other block shapes beside the library's (the
# 16-bit vector_add has run 0.993-0.996x torch at ~102% of the peak in four sessions), and the large vector_add
# beside torch with a longer time budget; (2) the f16 axis-0 kernel under the cluster policy "load balancing" again
# (74.9% once in call 1); (3) ncu on the library's f16 axis-0 kernel (merge 4) and on the poly1 variant: pipe
# utilisation, issue, warp stalls; (4) the GPU fuzz at the session's library (merge 4; last fuzz at f6ad136, merge 2).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s14-2.sh   (carry: [".whl", "build/tune.bin"])
set -u
source scripts/gpu-call-lib.sh
timeout 150 build/tune.bin "vector_add f16 2^27 s14|copy f16 2^27 s14|softmax f16 16384x8192 axis 0 s13 merge3" \
    >"$OUT/tune-s14-2.log" 2>&1
timeout 60 build/tune.bin "softmax f16 16384x8192 axis 0 s13 merge3" >>"$OUT/tune-s14-2.log" 2>&1
grep -E "^## |B[0-9]|library|merge4|refused" "$OUT/tune-s14-2.log" | grep -v "WRONG at"
SECS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section InstructionStats"
OPRT_TUNE_VARIANTS="poly1 spread" timeout 150 ncu --clock-control none $SECS -k regex:softmax_cols_onchip_kernel \
    --launch-count 1 build/tune.bin "softmax f16 16384x8192 axis 0 s14 poly" >"$OUT/ncu-s14-lib.log" 2>&1
OPRT_TUNE_VARIANTS="poly1 spread" timeout 150 ncu --clock-control none $SECS -k regex:softmax_cols_onchip_kernel \
    --launch-skip 1 --launch-count 1 build/tune.bin "softmax f16 16384x8192 axis 0 s14 poly" >"$OUT/ncu-s14-poly1.log" 2>&1
grep -E "softmax_cols_onchip|SM Frequency|Duration|Issue Slots Busy|Executed Ipc A|No Eligible|Stall|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occ" \
    "$OUT/ncu-s14-lib.log" "$OUT/ncu-s14-poly1.log" | cut -c1-160 | head -60
gpu_install
gpu_bench bench-large-vadd-s14 150 large vector_add --time-budget 1.0
OPRT_FUZZ_EXAMPLES=10000 OPRT_SUITE_STEP_TIMEOUT=150 bash scripts/gpu-suite.sh "$S/f" fuzz >/dev/null 2>&1
grep "==\|passed\|failed" "$S/f/summary.txt"
cp "$S/f/fuzz.log" "$OUT/fuzz-s14.log" 2>/dev/null || ls "$S/f"
