#!/usr/bin/env bash
# Session 21, call 5, run at f084f10 (the change was reverted after it: docs/performance.md, "Session 21"): split
# column reductions finished in the column kernel's own cooperative launch (reduce.cu launch_cols, reduce_cols.cuh
# kCoop) instead of the finishing kernel. The reduce_sum path tests (the new test runs both paths and compares them
# bit for bit), memcheck + racecheck over the new test, then large reduce_sum beside torch, the same sweep on the
# finishing kernel (OPRT_NVIDIA_REDUCE_FINISH=kernel: the A/B on one machine; torch came along as oprt-bench's
# default baseline, and the 60 s limit stopped it after 22 of 30 rows), and default reduce_sum beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s21-5.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
gpu_install
timeout 120 python -m pytest -q -p no:cacheprovider tests/oprt_nvidia/test_nvidia_paths.py -k reduce \
    >"$OUT/pytest-reduce-s21-call5.log" 2>&1
tail -n 3 "$OUT/pytest-reduce-s21-call5.log"; grep -E "FAILED|Error" "$OUT/pytest-reduce-s21-call5.log" | head -10
mkdir -p "$OUT/sanitizer"
for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool "$tool" --error-exitcode 99 --target-processes all python -m pytest -q \
        -p no:cacheprovider tests/oprt_nvidia/test_nvidia_paths.py -k "reduce_cols_one_launch and not wide" \
        >"$S/san-$tool.log" 2>&1
    echo "$tool rc=$?"; tail -n 4 "$S/san-$tool.log" | tee "$OUT/sanitizer/s21-call5-$tool.log"
done
GPU_BENCH_SHOW="\| reduce_sum \||rows with" gpu_bench bench-large-reduce_sum-s21-coop 120 large reduce_sum
OPRT_NVIDIA_REDUCE_FINISH=kernel timeout 60 oprt-bench --backends nvidia --isolation none --mode bench \
    --time-budget 0.2 --out "$S/bench-large-reduce_sum-s21-finish" --cases large --ops reduce_sum \
    >"$S/bench-large-reduce_sum-s21-finish.log" 2>&1
tail -n 1 "$S/bench-large-reduce_sum-s21-finish.log"
tar -czf "$OUT/bench-large-reduce_sum-s21-finish.tar.gz" -C "$S" bench-large-reduce_sum-s21-finish \
    bench-large-reduce_sum-s21-finish.log
python3 - "$S" <<'PY'
import csv, sys
rows = {}
for tag in ("coop", "finish"):
    for r in csv.DictReader(open(f"{sys.argv[1]}/bench-large-reduce_sum-s21-{tag}/results.csv")):
        if r["backend"] == "nvidia" and "axis0" in r["case"]:
            rows.setdefault((r["case"], r["dtype"]), {})[tag] = (float(r["median_ms"]) * 1e3, r["pct_of_peak"])
for k, v in rows.items():
    c, f = v.get("coop"), v.get("finish")
    if c and f:
        print(f"{k[0]:<20} {k[1]:<5} one launch {c[0]:8.2f} us ({c[1]}%)  finishing kernel {f[0]:8.2f} us ({f[1]}%)")
PY
GPU_BENCH_SHOW="\| reduce_sum \||rows with" gpu_bench bench-default-reduce_sum-s21 40 default reduce_sum
