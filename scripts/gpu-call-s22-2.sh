#!/usr/bin/env bash
# Session 22, call 2 (~6 minutes): call 1's test_op_api_fast_path failed on torch by its own fault (round 0 found
# test_torch_inputs' vector_add layout already filed; a bf16 tensor's .numpy()): fixed, it runs again here on both
# backends with the torch / CuPy tests, under memcheck + racecheck too. Then the host overhead in rounds after
# 2189956's fast path, the call in pieces (host_profile.py), one launch's host time in C (tune/launch_cost.cu: the
# library's launches against an empty kernel through <<<>>>, cudaLaunchKernel and cuLaunchKernel), and every op
# over the default case set beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s22-2.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia oprt_metax" gpu_install
K="op_api_fast_path or torch_inputs or cupy_inputs"
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/oprt_nvidia/test_nvidia_ops.py \
    tests/oprt_metax/test_metax_ops.py -k "$K" >"$OUT/pytest-fastpath.log" 2>&1
tail -n 3 "$OUT/pytest-fastpath.log"
OPRT_SUITE_SANITIZERS="memcheck racecheck" OPRT_SUITE_STEP_TIMEOUT=150 \
    OPRT_SUITE_SANITIZE="s22b=tests/oprt_nvidia/test_nvidia_ops.py;tests/oprt_metax/test_metax_ops.py;-k;$K" \
    bash scripts/gpu-suite.sh "$S/san" sanitize >/dev/null 2>&1
mkdir -p "$OUT/sanitizer"
for f in "$S"/san/sanitizer/*.log; do tail -n 5 "$f" >"$OUT/sanitizer/$(basename "$f")"; done
grep "==\|passed\|failed\|SUMMARY" "$S/san/summary.txt"
gpu_host_overhead host-overhead-s22
gpu_host_profile host-profile-s22
gpu_launch_cost launch-cost-s22
gpu_bench bench-default-s22 90 default all
