#!/usr/bin/env bash
# Prepared in session 8 for the next session's first call (never run; ~5 device minutes):
#  1. every nvidia GPU test and compute-sanitizer memcheck + racecheck over the column / cluster tests at the
#     final session-8 commit (59687a1 changed the on-chip kernel's last argument to ColsProbe after the
#     last full run; call 10 ran only the 174 column / cluster tests on it);
#  2. tune: the on-chip kernel with fuller shared memory (27 rows a thread: 1376-row blocks, clusters of 12
#     for 16384 rows) against the library, its timeline (resident blocks), and how many clusters of each
#     size fit (cudaOccupancyMaxActiveClusters), and two clusters of 8 a strip exchanging through global
#     memory (softmax_pair.cuh; its timeline too): docs/performance.md, "Session 8", "Where the time goes".
# Build the tune binary here first (scripts/tune/build.sh build/tune.bin, ~70 s on 2 cores) and pass
# carry: [".whl", "build/tune.bin"]; without it this script builds it on the device (~70 s more).
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s9-1.sh
set -u
source scripts/gpu-call-lib.sh
BIN=build/tune.bin
if [ ! -x "$BIN" ]; then
    mkdir -p build && bash scripts/tune/build.sh "$BIN" >"$OUT/tune-build.log" 2>&1 &
fi
gpu_call_suite s9 "cols or cluster or negative_infinity or nan_block"
# added in session 9 before the run: what the flush's dirty L2 lines cost a small read-only sample
timeout 120 python scripts/flush_probe.py --csv "$OUT/flush-probe-s9.csv" 2>&1 | tee "$OUT/flush-probe-s9.log"
wait
timeout 90 "$BIN" "onchip timeline|onchip fuller smem" 2>&1 | tee "$OUT/tune-s9-1-fuller.log"
# the paired clusters wait on each other through global memory (a spin that traps after 0.2 s): run apart
# (a filter naming "pairs" gives the timeline its paired shape only)
timeout 60 "$BIN" "onchip pairs|onchip timeline" 2>&1 | tee "$OUT/tune-s9-1-pairs.log"
