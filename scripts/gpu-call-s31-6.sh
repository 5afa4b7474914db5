#!/usr/bin/env bash
# Session 31, call 6 (~6 minutes, the session's last device time): the large sweep of the ops other than reduce_sum
# (swept twice at this library in calls 2 and 5) beside torch at --target-ci 0, written straight under $OUT so that a
# cut run still brings back its finished rows.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s31-6.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
timeout "${SWEEP_LIMIT:-330}" oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench \
    --time-budget 0.2 --target-ci 0 --out "$OUT/bench-large-s31-rest" --cases large --ops copy,vector_add,relu,softmax \
    >"$OUT/bench-large-s31-rest.log" 2>&1
tail -n 1 "$OUT/bench-large-s31-rest.log"
python3 scripts/perf_table.py "$OUT/bench-large-s31-rest/results.csv" 2>&1 | grep -E "\| no \||rows with"
