#!/usr/bin/env bash
# Session 26, call 1 (~3 minutes). (1) tune's "reduce bulk s26" groups: reduce_sum over axis 0 with the rows fetched
# by 1-D bulk copies (scripts/tune/reduce_bulk.cuh) against the library, 8192^2 f32, 16384 x 8192 f16, 16384^2 f32;
# the tune binary is built on the dev machine from this commit (scripts/tune/build.sh .tunebin/tune) and carried, and
# runs while the install compiles (the GPU idle but for it). (2) The GPU path tests prepared in session 25: the (1, 64)
# softmax expectation, the layout-only expectations on every GPU, the softmax rows assertions (_rows_path), never run
# on a GPU; then the build tests of oprt_nvidia_last_launch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s26-1.sh   (carry: [".whl", ".tunebin"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install &
inst=$!
timeout 150 .tunebin/tune "reduce bulk s26" >"$OUT/tune-s26-1.log" 2>&1
echo "tune rc=$?"
grep -E "^## |^cudaMemcpy|library|bulk|WRONG" "$OUT/tune-s26-1.log" | sed 's/  */ /g'
wait "$inst"
T=tests/oprt_nvidia
gpu_pytest paths-s26-1 200 $T/test_nvidia_paths.py $T/test_nvidia_build.py
