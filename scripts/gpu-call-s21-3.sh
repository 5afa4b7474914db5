#!/usr/bin/env bash
# Session 21, call 3: where the op API's host time goes on the GPU host (scripts/host_profile.py: each piece of the
# fast path alone; calls 1-2 read 9.9-11.6 us through the op API against 6.7-8.1 in session 18), then the whole MetaX
# test suite under the nvcc-shim flavour (every test poisons its outputs through oprt_memset, a kernel since d5b9e5b).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s21-3.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia oprt_metax" bash scripts/gpu-suite.sh "$S/t" install >/dev/null 2>&1
grep "==" "$S/t/summary.txt"
timeout 60 python scripts/host_profile.py >"$OUT/host-profile-s21.log" 2>&1
cat "$OUT/host-profile-s21.log"
OPRT_SUITE_TESTS=tests/oprt_metax OPRT_SUITE_STEP_TIMEOUT=330 bash scripts/gpu-suite.sh "$S/m" test >/dev/null 2>&1
cp "$S/m/pytest.log" "$OUT/pytest-metax.log"
grep "==\|passed\|failed" "$S/m/summary.txt"
grep -E "FAILED|Error" "$S/m/pytest.log" | head -20
