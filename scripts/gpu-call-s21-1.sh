#!/usr/bin/env bash
# Session 21, call 1: the checks session 19 left for after 5e79210's oprt_memset kernel, which session 20 prepared
# (gpu-call-s20-3.sh) but whose results did not land: the GPU suite (every nvidia test), memcheck + racecheck over the
# memset, driver-copy and transpose tests, the host overhead and every op over the default case set. New this session:
# the MetaX backend's oprt_memset as the same kernel (nvcc-shim flavour): its memset tests under memcheck + racecheck.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s21-1.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia oprt_metax" OPRT_SUITE_STEP_TIMEOUT=300 \
    GPU_SUITE_SANITIZE="s21=tests/oprt_nvidia/test_nvidia_ops.py;tests/oprt_nvidia/test_nvidia_paths.py;-k;\
memset_spans or copy_driver_and_kernel or transpose|s21-metax=tests/oprt_metax/test_metax_ops.py;-k;memset_spans" \
    gpu_call_suite s21 ""
gpu_host_overhead host-overhead-s21
gpu_bench bench-default-s21 90 default all
