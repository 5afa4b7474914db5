# Sourced by scripts/gpu-call-*.sh (session 9 on): the setup and the GPU-suite step every device call repeats.
#   source scripts/gpu-call-lib.sh
#   gpu_call_suite NAME 'PYTEST -k EXPRESSION'   # install, every nvidia test, memcheck + racecheck over
#                                                # test_nvidia_paths.py -k EXPRESSION; logs into $OUT
#                                                # (GPU_SUITE_SANITIZE: gpu-suite.sh's whole OPRT_SUITE_SANITIZE
#                                                # spec instead, e.g. several groups)
#   gpu_install                                  # install only
#   gpu_pytest NAME LIMIT ARGS...                # pytest ARGS (installed already) under LIMIT s: $OUT/pytest-NAME.log,
#                                                # its exit, time and last line printed, then its FAILED / ERROR lines
#   gpu_sanitize NAME EXPR                       # memcheck + racecheck over test_nvidia_paths.py -k EXPR (installed
#                                                # already): the logs' tails in $OUT/sanitizer, $OUT/summary-sanitize.txt
#   gpu_host_overhead NAME                       # scripts/host_overhead.py, 5 rounds: $OUT/NAME.{csv,log}
#   gpu_host_profile NAME                        # scripts/host_profile.py (the op API's call in pieces): $OUT/NAME.log
#   gpu_launch_cost NAME                         # scripts/tune/launch_cost.cu built with the library's sources
#                                                # and run (one launch's host time in C): $OUT/NAME.log
#   gpu_bench NAME TIMEOUT CASES OPS [ARGS...]   # an oprt-bench sweep beside torch (ARGS: more oprt-bench
#                                                # options); prints its rows that miss a target (GPU_BENCH_SHOW:
#                                                # another grep -E pattern for the perf table), $OUT/NAME.tar.gz
#   gpu_patch_compare TAG PATCH...               # each scripts/tune/patches/PATCH.patch applied, built, checked and
#                                                # timed against torch (placement_compare --quick), reverted
# Sets S (scratch) and OUT (what comes back); OPRT_GIT_COMMIT must be set by the caller (a full hash computed
# on the machine that holds the checkout: the device's own git may report a stale commit).
S=/tmp/s; OUT=${OUT:-/tmp/out}; mkdir -p "$S" "$OUT"
# the softmax-columns tests that session 12 ran under compute-sanitizer (a pytest -k expression; sessions
# 10-11 ran the first four terms)
COLS_SANITIZE_K="group or cols_special or negative_infinity or nan_block or cluster_cols_extremes or cluster_cols_wide"
export OPRT_SUITE_PACKAGES="oprt_core oprt_bench oprt_nvidia"

gpu_call_suite() {
    local name=$1 expr=$2
    # 420 s a step: tests/oprt_nvidia takes ~275-340 s on the H200 (session 23's call 4 ran under the old 200 and was cut
    # at ~98%; session 24's call 1 under 330 at ~99%)
    OPRT_SUITE_TESTS=tests/oprt_nvidia OPRT_SUITE_STEP_TIMEOUT=${OPRT_SUITE_STEP_TIMEOUT:-420} \
        OPRT_SUITE_SANITIZERS="memcheck racecheck" \
        OPRT_SUITE_SANITIZE="${GPU_SUITE_SANITIZE:-$name=tests/oprt_nvidia/test_nvidia_paths.py;-k;$expr}" \
        bash scripts/gpu-suite.sh "$S/t" install test sanitize >/dev/null 2>&1
    cp "$S/t/pytest.log" "$OUT/pytest.log"
    cp "$S/t/summary.txt" "$OUT/summary-t.txt"
    _gpu_keep_sanitizer_logs
    grep "==\|passed\|failed\|SUMMARY" "$S/t/summary.txt"
    grep -E "FAILED|Error" "$S/t/pytest.log" | head -20
}

_gpu_keep_sanitizer_logs() {  # the tails of gpu-suite.sh's sanitizer logs (the whole logs stay in $S/t)
    mkdir -p "$OUT/sanitizer"
    local f
    for f in "$S"/t/sanitizer/*.log; do tail -n 5 "$f" >"$OUT/sanitizer/$(basename "$f")"; done
}

gpu_pytest() {
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    timeout "$limit" python -m pytest -q -ra -p no:cacheprovider "$@" >"$OUT/pytest-$name.log" 2>&1
    echo "pytest-$name: exit $? in $((SECONDS - t0)) s: $(tail -n 1 "$OUT/pytest-$name.log")"
    grep -E "^(FAILED|ERROR)|launched '" "$OUT/pytest-$name.log" | head -40
}

gpu_sanitize() {
    local name=$1 expr=$2
    OPRT_SUITE_TESTS=tests/oprt_nvidia OPRT_SUITE_SANITIZERS="memcheck racecheck" \
        OPRT_SUITE_SANITIZE="$name=tests/oprt_nvidia/test_nvidia_paths.py;-k;$expr" \
        bash scripts/gpu-suite.sh "$S/t" sanitize >/dev/null 2>&1
    _gpu_keep_sanitizer_logs
    cp "$S/t/summary.txt" "$OUT/summary-sanitize.txt"
    grep "==\|passed\|failed\|SUMMARY" "$S/t/summary.txt"
}

gpu_install() {
    bash scripts/gpu-suite.sh "$S/t" install >/dev/null 2>&1
    grep "==" "$S/t/summary.txt"
}

gpu_host_overhead() {
    timeout 100 python scripts/host_overhead.py --rounds 5 --csv "$OUT/$1.csv" >"$OUT/$1.log" 2>&1
    tail -n 7 "$OUT/$1.log"
}

gpu_host_profile() {
    timeout 100 python scripts/host_profile.py >"$OUT/$1.log" 2>&1
    cat "$OUT/$1.log"
}

gpu_launch_cost() {
    if ! bash scripts/tune/build.sh "$S/launch_cost" scripts/tune/launch_cost.cu >"$S/launch-cost-build.log" 2>&1; then
        tail -n 20 "$S/launch-cost-build.log" | tee "$OUT/$1.log"
        return 1
    fi
    timeout 60 "$S/launch_cost" >"$OUT/$1.log" 2>&1
    cat "$OUT/$1.log"
}

gpu_bench() {
    local name=$1 limit=$2 cases=$3 ops=$4
    shift 4
    timeout "$limit" oprt-bench --backends nvidia,torch --baseline torch --isolation none --mode bench \
        --time-budget 0.2 --out "$S/$name" --cases "$cases" --ops "$ops" "$@" >"$S/$name.log" 2>&1
    tail -n 1 "$S/$name.log"
    python3 scripts/perf_table.py "$S/$name/results.csv" 2>&1 | grep -E "${GPU_BENCH_SHOW:-\| no \||rows with}"
    tar -czf "$OUT/$name.tar.gz" -C "$S" "$name" "$name.log"
}

gpu_patch_compare() {  # TAG PATCH...: each patch of scripts/tune/patches applied, built, checked by oprt-bench --mode
    # test (default copy / vector_add / relu), timed against torch by placement_compare --quick, reverted; logs
    # $OUT/{check,placement}-TAG-PATCH.log (the patched library stays installed: reinstall before timing the library)
    local tag=$1 p f
    shift
    for p in "$@"; do
        f=scripts/tune/patches/$p.patch
        patch -p1 -s <"$f" || { echo "patch $p does not apply"; continue; }
        bash scripts/gpu-suite.sh "$S/t-$p" install >/dev/null 2>&1
        grep "==" "$S/t-$p/summary.txt"
        echo "== $p $(date +%T)"
        timeout 120 oprt-bench --backends nvidia --baseline none --ops copy,vector_add,relu --cases default \
            --mode test --isolation none --out "$S/check-$p" -q 2>&1 | tee "$OUT/check-$tag-$p.log"
        timeout 120 python scripts/placement_compare.py --quick --reps 300 2>&1 | tee "$OUT/placement-$tag-$p.log"
        patch -R -p1 -s <"$f" || { echo "patch $p does not revert"; return 1; }
    done
}
