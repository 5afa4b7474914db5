#!/usr/bin/env bash
# Session 25's second call (~7 minutes). (1) The last 2 rows of call 1's large sweep (cut by its 520 s limit on a slow
# host: softmax 16384^2 over axis 0 in bf16, torch and nvidia) through oprt-bench --resume on the run folder carried in
# results/h200/bench-large-s25 (the resumed run's provenance must match: run with OPRT_RESUME_COMMIT=call 1's commit,
# whose library this tree has unchanged; checked here with git on the development machine before the call). (2) Every
# nvidia test start to end, as two pytest processes at once (test_nvidia_paths.py; the other files), so that a slow host
# stays under the step limit (session 24's one process was cut at ~99% by 330 s); memcheck + racecheck over the
# tensor-core row sums and the whole-trips test. (3) The default sweep of every op.
# Run as: OPRT_GIT_COMMIT=<full hash> OPRT_RESUME_COMMIT=<call 1's full hash> bash scripts/gpu-call-s25-2.sh
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
# (1)
cp -r results/h200/bench-large-s25 "$S/bench-large-s25"
OPRT_GIT_COMMIT=$OPRT_RESUME_COMMIT timeout 90 oprt-bench --resume "$S/bench-large-s25" >"$S/bench-large-s25-resume.log" 2>&1
tail -n 3 "$S/bench-large-s25-resume.log"
tar -czf "$OUT/bench-large-s25.tar.gz" -C "$S" bench-large-s25 bench-large-s25-resume.log
# (2)
T=tests/oprt_nvidia
gpu_pytest paths 400 $T/test_nvidia_paths.py &
gpu_pytest rest 400 $T/test_nvidia_build.py $T/test_nvidia_errors.py $T/test_nvidia_ops.py $T/test_tune_build.py &
wait
gpu_sanitize s25 "tensor_core or whole_trips"
# (3)
gpu_bench bench-default-s25 110 default all
