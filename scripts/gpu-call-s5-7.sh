#!/usr/bin/env bash
# Session 5, GPU call 7 (the last device seconds): the axis-0 wide-range / moving-max test added after the
# final sweeps, with the other cluster-columns and wide-range tests.
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
OPRT_SUITE_TESTS="tests/oprt_nvidia/test_nvidia_paths.py -k cluster_cols_or_wide_range" OPRT_SUITE_STEP_TIMEOUT=60 \
    bash scripts/gpu-suite.sh "$S/t" install >/dev/null 2>&1
timeout 60 python -m pytest -q -p no:cacheprovider tests/oprt_nvidia/test_nvidia_paths.py -k "cluster_cols or wide_range" \
    >"$OUT/pytest.log" 2>&1
tail -n 5 "$OUT/pytest.log"
