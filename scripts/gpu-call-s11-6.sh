#!/usr/bin/env bash
# Session 11, call 6: is the lower large reduce_sum of calls 4-5 (16384^2 16-bit 92.5-94.4% against 95.1-99.3% in
# session 9's bench at d15ca48) the code (0c044c3: the first reduce kernel triggers its dependent only when split)
# or the machine? The f16 large reduce_sum rows with reduce.cu of 0c044c3~1 (build/ab/oprt_nvidia, carried) and
# with HEAD's, in turn.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s11-6.sh   (carry: [".whl", "build/ab"])
set -u
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"
bash scripts/gpu-suite.sh "$S/t" install >/dev/null 2>&1
grep "==" "$S/t/summary.txt"
bench() {  # NAME
    timeout 60 oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench --time-budget 0.2 \
        --out "$S/$1" --cases large --ops reduce_sum --dtypes f16 >"$S/$1.log" 2>&1
    tail -n 1 "$S/$1.log"
    python3 scripts/perf_table.py "$S/$1/results.csv" 2>&1 | grep -E "^\| reduce"
    tar -czf "$OUT/$1.tar.gz" -C "$S" "$1" "$1.log"
}
bench ab-new-1
OPRT_INCLUDE_DIR=$PWD/oprt_core/src/oprt_core/include python3 -m pip install -q --no-index --no-build-isolation \
    --no-deps ./build/ab/oprt_nvidia >"$S/ab-install.log" 2>&1 || tail -5 "$S/ab-install.log"
bench ab-old-1
