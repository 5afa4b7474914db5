#!/usr/bin/env bash
# Session 11, call 6: is the lower large reduce_sum of calls 4-5 (16384^2 16-bit 92.5-94.4% against 95.1-99.3% in
# session 9's bench at d15ca48) the code (0c044c3: the first reduce kernel triggers its dependent only when split)
# or the machine? The f16 large reduce_sum rows with reduce.cu of 0c044c3~1 (build/ab/oprt_nvidia, carried) and
# with HEAD's, in turn.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s11-6.sh   (carry: [".whl", "build/ab"])
set -u
source scripts/gpu-call-lib.sh
gpu_install
export GPU_BENCH_SHOW="^\| reduce"
gpu_bench ab-new-1 60 large reduce_sum --dtypes f16
OPRT_INCLUDE_DIR=$PWD/oprt_core/src/oprt_core/include python3 -m pip install -q --no-index --no-build-isolation \
    --no-deps ./build/ab/oprt_nvidia >"$S/ab-install.log" 2>&1 || tail -5 "$S/ab-install.log"
gpu_bench ab-old-1 60 large reduce_sum --dtypes f16
