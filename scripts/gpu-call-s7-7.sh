#!/usr/bin/env bash
# Session 7, call 7 (run as an inline command; kept here as run): the large copy / vector_add / relu sweep
# beside torch at 88d403b (kernels unchanged since session 4, not re-run since), stopped by its 170 s timeout
# after 27 of 30 rows (oprt-bench keeps finished rows on SIGTERM).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/s
python3 -m pip install -q --no-index --find-links .whl ./oprt_core ./oprt_bench >/dev/null 2>&1
OPRT_GIT_COMMIT=88d403b3e0643659ea12fd78407c865ed94e01d2 timeout 170 oprt-bench --backends nvidia,torch \
    --baseline torch --isolation none --mode bench --cases large --ops copy,vector_add,relu --time-budget 0.2 \
    --out /tmp/s/bench-large-ew-s7 >/tmp/s/bench-large-ew-s7.log 2>&1
tar -czf "$OUT/ew.tar.gz" -C /tmp/s bench-large-ew-s7 bench-large-ew-s7.log
python3 scripts/perf_table.py /tmp/s/bench-large-ew-s7/results.csv 2>&1 | grep -E "\| (copy|vector_add|relu)|rows with"
