#!/usr/bin/env bash
# Build, test and benchmark oprt on an offline GPU host in one go; everything lands in OUTDIR.
#
#   scripts/gpu-suite.sh OUTDIR [PHASE ...]
#
# PHASES (default: install test sanitize bench), run in this order whatever the order given:
#   install   wheels from .whl/ (python3 -m pip --no-index), then each of OPRT_SUITE_PACKAGES with
#             pip install --no-index --no-build-isolation (one at a time: a failing backend does not stop the others);
#             the liger backend's Liger-Kernel comes from .whl/ too (liger_kernel-*.whl, with packaging-*.whl where
#             the host lacks it): summary.txt says whether it imports; likewise tilelang (tilelang-*.whl with
#             apache_tvm_ffi, z3_solver, torch_c_dlpack_ext, ml_dtypes, cloudpickle: examples/oprt-tilelang/README.md)
#             nvidia-cutlass-*.whl in .whl/ (installed with the others, before oprt_nvidia: its build then finds the CUTLASS
#             headers and compiles the CUTLASS sm_90 matmul kernels; OPRT_ENABLE_CUTE=on makes a failure to find them stop
#             that install): summary.txt gives the nvidia build's CuTe line
#   test      pytest over OPRT_SUITE_TESTS (default: tests, so the nvidia and metax GPU tests run), junit XML + log
#   tune      scripts/tune/build.sh, then each harness of OPRT_SUITE_TUNE_OPS (default: elementwise reduce softmax),
#             OPRT_TUNE_FILTER its group filter: tune-OP.log each
#   launch    scripts/tune/launch_cost.cu: one launch's host time in C: launch-cost.log
#   sweep     oprt-bench --mode test over OPRT_SUITE_SWEEP_SETS (default: smoke edge default large) on the GPU backends,
#             --ops OPRT_SUITE_SWEEP_OPS (default all)
#             (OPRT_SUITE_SWEEP_DTYPES="f32 f16 bf16": one process per dtype, in parallel)
#   isolation oprt-bench on nvidia beside the faulty test backend (segfault, hang, raise on chosen cases), then beside
#             faultygpu (CuPy kernels that trap, write out of bounds and spin on the cases of OPRT_SUITE_GPU_FAULTS),
#             checked by scripts/check_faults.py (isolation-gpu-check.log): faulting rows name the fault, others ok
#   quick     a quick look (OPRT_SUITE_QUICK: oprt-bench options, default a 4-row softmax on nvidia and torch) three
#             times, the first with --recalibrate: each run's phase times and wall time (quick-N.log)
#   overhead  scripts/host_overhead.py (host time of one op call) and scripts/host_profile.py (its pieces)
#   sanitize  compute-sanitizer (OPRT_SUITE_SANITIZERS, default memcheck racecheck initcheck) over the test groups
#             of OPRT_SUITE_SANITIZE: '|'-separated NAME=PYTEST-ARGS, ';' between the args; sanitizer/NAME-TOOL.log
#   fuzz      hypothesis fuzzing of the GPU libraries' C ABI and the op API (OPRT_FUZZ_EXAMPLES, default 10000)
#   check     scripts/check_baselines.py (OPRT_SUITE_CHECK_PARTS, default timing,peaks): check-baselines/
#   bench     oprt-bench sweeps beside torch: OPRT_SUITE_BENCH, space-separated [NAME=]CASESET:BACKENDS[:OPS[:DTYPES
#             [:BASELINE]]], each into OUTDIR/NAME (default NAME: bench-CASESET-BACKENDS...); default: the default and
#             large case sets on the GPU backends (+ torch on both, cupy on default)
#   models    oprt-bench --cases models over OPRT_SUITE_MODELS_OPS (default the model ops: oprt_core.operators' group
#             "model") on OPRT_SUITE_MODELS_BACKENDS (default: the GPU backends, torch, torch-compile, liger) and
#             OPRT_SUITE_MODELS_DTYPES (default all), baseline torch, into OUTDIR/models-DTYPES (torch-compile's
#             compile time per case: the compile_s column); step limit OPRT_SUITE_MODELS_TIMEOUT (s, default 1800);
#             then scripts/perf_table.py --below per GPU backend: OUTDIR/models-DTYPES-below-BACKEND.log
#   telemetry a small sweep (nvidia, core ops, smoke cases, f32 f16) with GPU telemetry (nvidia-ml-py: its wheel in
#             .whl/ where the host lacks it) and --profile ncu:2 into OUTDIR/telemetry (results.csv, run.json,
#             report.html, profiles/*.ncu-rep); telemetry-check.log counts the filled telemetry cells, clock drops
#             and profiled rows
#   graph     the default case set of OPRT_SUITE_GRAPH_OPS (default the core ops) on nvidia and torch twice, with
#             --timing graph (graph-default/) and with events (events-default/): graph rows say timer=graph, the
#             events' median of launch-bound rows in event_median_ms; OPRT_SUITE_GRAPH_ARGS (oprt-bench options,
#             default --cases default) and OPRT_SUITE_GRAPH_NAME (the folders' suffix) sweep other cases
#   ab        oprt-bench ab nvidia nvidia and nvidia metax (where metax is built) on OPRT_SUITE_AB_OPS (default the
#             core ops over an axis) f32 default cases: ab-nvidia-nvidia/, ab-nvidia-metax/ (ab.csv, ab.json, ab.txt)
#   fleet     the default sweep of OPRT_SUITE_FLEET_OPS (default the core ops) on nvidia with --cluster local (one
#             worker per GPU) and the same on the first GPU alone (CUDA_VISIBLE_DEVICES): fleet-cluster/, fleet-1gpu/,
#             their wall times in fleet-times.txt and their row-by-row comparison in fleet-compare.txt; needs the
#             fleet extra (dask, distributed wheels in .whl/). Where metax is built: two workers on the same GPU(s)
#             under one scheduler, one offering nvidia and torch, the other metax, and one run routed across both
#             (fleet-routed/), beside the two halves run separately and merged (fleet-merged/, compared with it)
#   variants  scripts/env_variants.sh over the library's tune switches: OPRT_SUITE_VARIANTS, '|'-separated entries
#             NAME@VARIANT;VARIANT;...@OPRT-BENCH-ARGS (a VARIANT: space-separated NAME=VALUE, '-' for none), each into
#             OUTDIR/variants-NAME/vN (variants.txt maps them), its tables in variants-NAME.log, e.g.
#             'mm@-;OPRT_NVIDIA_MATMUL_STREAMK=1@--shapes scripts/shapes/gemm-prompts.json --backends nvidia,torch
#             --dtypes bf16'
#   compare   oprt-bench compare of a run against a committed one: OPRT_SUITE_COMPARE, space-separated NAME:REF_DIR
#             (default: each bench-CASESET-* folder of OUTDIR against results/h200/CASESET where that exists), the
#             output into compare-NAME.txt (OPRT_SUITE_COMPARE_ARGS: more compare options, default --all)
#   verify    a change checked in one run (the `verify` profile: `scripts/gpu-suite.sh OUTDIR verify` = install verify):
#             the GPU tests (OPRT_VERIFY_TESTS) in OPRT_VERIFY_SHARDS (default 8) parallel pytest processes,
#             verify-shard-N.xml each; the ops the change touches (OPRT_VERIFY_OPS, else `python -m oprt_bench.touched
#             BASE`, BASE OPRT_VERIFY_BASE or the commit of results/h200/CASES) swept on OPRT_VERIFY_CASES (default
#             default) on OPRT_VERIFY_BACKENDS (default the GPU backends and torch, the last one the baseline) into
#             verify-sweep/ and
#             compared with results/h200/CASES; scripts/verify_summary.py's table last (verify-summary.log)
# Other variables: OPRT_SUITE_STEP_TIMEOUT (s a step, default 400), OPRT_SUITE_DEADLINE_S (s from the suite's start
# after which no step starts and to which each step's limit is cut, so that the suite ends, and its outputs can be
# copied, inside a machine's time limit), OPRT_SUITE_BUDGET (oprt-bench --time-budget of
# bench, default 0.3), OPRT_SUITE_BENCH_MODE (its --mode, default all), OPRT_METAX_TOOLCHAIN (default nvcc-shim), OPRT_SUITE_WHEEL_DIRS
# (the folders whose wheels install installs, default .whl; the project's own wheels there, from
# scripts/build-wheels.sh, replace building a package when .whl/oprt-wheels.txt's source hash is the tree's),
# OPRT_SUITE_COPY_TO (a folder that gets summary.txt and suite.tar.gz, all written so far, after every step: a
# run cut short still brings back what it did).
# OUTDIR gets every log, summary.txt (each step's exit status, time and last lines; printed last), the runs' CSV /
# HTML, and suite.tar.gz holding all of it. Nothing is downloaded: wheels the host lacks travel in .whl/.
set -uo pipefail
OUTDIR=${1:?usage: scripts/gpu-suite.sh OUTDIR [PHASE ...]}
shift
PHASES=${*:-install test sanitize bench}
# the verify profile: install, then the verify phase (sharded GPU tests, the touched ops' sweep, one table)
[ "$PHASES" = verify ] && PHASES="install verify"
for phase in $PHASES; do
    case $phase in
        install | test | verify | tune | launch | sweep | isolation | quick | overhead | sanitize | fuzz | check | bench \
            | models | telemetry | graph | ab | fleet | variants | compare) ;;
        *) echo "gpu-suite.sh: unknown phase '$phase' (see the header)" >&2; exit 2 ;;
    esac
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
# The host's python3 is itself a venv holding torch, cupy and triton (/opt/torch/.venv): install into it
# (the machine is fresh every time), so those stay importable.
PYBIN=$(dirname "$(python3 -c 'import sys; print(sys.executable)')")
export PATH="$PYBIN:$PATH"
export PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
SUMMARY="$OUTDIR/summary.txt"
cd "$ROOT"
note() { echo "== $*" | tee -a "$SUMMARY"; }
has() { [[ " $PHASES " == *" $1 "* ]]; }
ops_of() { # GROUP [PARAM]: the built-in ops of an oprt_core.operators group (those with PARAM), comma-separated
    python3 -c "import sys; from oprt_core import operators as o; group, param = sys.argv[1], sys.argv[2:]; \
print(','.join(s.name for s in o.specs(group) if not param or any(p.name == param[0] for p in s.params)))" "$@"
}
run_logged() { # name command...: run, keep the log, record the exit status and duration
    local name=$1; shift
    local t0=$SECONDS limit=${OPRT_SUITE_STEP_TIMEOUT:-400}
    if [ -n "${OPRT_SUITE_DEADLINE_S:-}" ]; then  # no step past the deadline; none runs beyond it
        local left=$((OPRT_SUITE_DEADLINE_S - SECONDS))
        if [ "$left" -lt 5 ]; then
            note "$name: skipped, OPRT_SUITE_DEADLINE_S=${OPRT_SUITE_DEADLINE_S} reached"
            echo "skipped: the suite's deadline (OPRT_SUITE_DEADLINE_S) was reached" >"$OUTDIR/$name.log"
            return 124
        fi
        [ "$left" -lt "$limit" ] && limit=$left
    fi
    timeout "$limit" "$@" >"$OUTDIR/$name.log" 2>&1
    local rc=$?
    note "$name: exit $rc in $((SECONDS - t0)) s"
    tail -n 3 "$OUTDIR/$name.log" | sed 's/^/   /' | tee -a "$SUMMARY"
    copy_out
    return $rc
}

copy_out() { # OPRT_SUITE_COPY_TO: the summary and everything so far (one archive) copied there after a phase
    [ -n "${OPRT_SUITE_COPY_TO:-}" ] || return 0
    mkdir -p "$OPRT_SUITE_COPY_TO"
    local part
    part=$(mktemp /tmp/suite-part.XXXXXX)
    tar -czf "$part" --exclude=suite.tar.gz -C "$OUTDIR" . 2>/dev/null && mv "$part" "$OPRT_SUITE_COPY_TO/suite.tar.gz"
    rm -f "$part"
    cp "$SUMMARY" "$OPRT_SUITE_COPY_TO/summary.txt"
}

export OPRT_GIT_COMMIT=${OPRT_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null)}
note "gpu-suite on $(hostname) at $(date -u +%FT%TZ), commit ${OPRT_GIT_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv \
    >"$OUTDIR/nvidia-smi.txt" 2>&1 && cat "$OUTDIR/nvidia-smi.txt" >>"$SUMMARY"

if has install; then
    t_install=$SECONDS
    wheels=()
    for d in ${OPRT_SUITE_WHEEL_DIRS:-.whl}; do
        compgen -G "$d/*.whl" >/dev/null && wheels+=("$d"/*.whl)
    done
    if [ "${#wheels[@]}" -gt 0 ]; then
        run_logged install-wheels python3 -m pip install --no-index --no-deps --no-compile "${wheels[@]}"
    fi
    # a project wheel (scripts/build-wheels.sh) stands for a build only when built from these very sources
    stamp=.whl/oprt-wheels.txt
    # one package at a time, so a backend that fails to build does not stop the others
    pkgs=${OPRT_SUITE_PACKAGES:-"oprt_core oprt_bench oprt_nvidia oprt_metax tests/plugins/oprt-testplugin \
tests/plugins/oprt-faultyplugin examples/oprt-gelu examples/oprt-triton examples/oprt-tilelang"}
    for pkg in $pkgs; do
        [ -d "$pkg" ] || continue
        if [ -f "$stamp" ] && grep -q "^$pkg $(bash scripts/source-hash.sh "$pkg") " "$stamp" \
            && compgen -G ".whl/$(basename "$pkg" | tr - _)-*.whl" >/dev/null; then
            note "install-$(basename "$pkg"): from its wheel ($(grep "^$pkg " "$stamp" | cut -d' ' -f3-))"
            continue  # installed above
        fi
        [ -f "$stamp" ] && grep -q "^$pkg " "$stamp" && note "install-$(basename "$pkg"): its wheel is from other sources"
        OPRT_METAX_TOOLCHAIN=${OPRT_METAX_TOOLCHAIN:-nvcc-shim} run_logged "install-$(basename "$pkg")" \
            python3 -m pip install -v --no-index --no-build-isolation --no-deps "./$pkg"
    done
    # a wheel's build log travels inside its package
    [ -f "$OUTDIR/install-oprt_nvidia.log" ] || python3 -c "import pathlib, oprt_nvidia; \
print((pathlib.Path(oprt_nvidia.__file__).parent / 'build-ptxas.log').read_text())" \
        >"$OUTDIR/install-oprt_nvidia.log" 2>&1
    note "install: $((SECONDS - t_install)) s"
    note "liger-kernel: $(python3 -c 'import importlib.metadata as m, liger_kernel.ops; print(m.version("liger-kernel"))' \
        2>&1 | tail -n 1)"
    note "tilelang: $(python3 -c 'import tilelang; print(tilelang.__version__)' 2>&1 | tail -n 1)"
    # the nvidia build log's title says whether it compiled the CUTLASS kernels, and from which headers
    note "nvidia CuTe: $(grep -o -m 1 -E '(CuTe kernels for sm_90a from|no CuTe kernels) [^,]*' \
        "$OUTDIR/install-oprt_nvidia.log" 2>/dev/null || echo 'no build log')"
fi

if has test; then
    # shellcheck disable=SC2086
    run_logged pytest python -m pytest ${OPRT_SUITE_TESTS:-tests} -q -ra -p no:cacheprovider --junitxml="$OUTDIR/pytest.xml"
    oprt-bench backends >"$OUTDIR/backends.txt" 2>&1
fi

GPU_BACKENDS=nvidia
oprt-bench backends --json 2>/dev/null | python -c "import json,sys; d=json.load(sys.stdin); \
    sys.exit(0 if any(b['name']=='metax' and b['available'] for b in d.get('backends', [])) else 1)" \
    && GPU_BACKENDS=nvidia,metax

if has verify; then
    # 1. the GPU tests in OPRT_VERIFY_SHARDS parallel pytest processes on the one GPU, the collected tests dealt
    #    round-robin (a file's parametrized cases spread over every shard)
    vtests=${OPRT_VERIFY_TESTS:-"tests/oprt_nvidia tests/oprt_metax tests/examples tests/oprt_bench/test_baselines.py \
tests/oprt_bench/test_baselines_compile_liger.py"}
    nshards=${OPRT_VERIFY_SHARDS:-8}
    # shellcheck disable=SC2086
    python -m pytest --collect-only -q -p no:cacheprovider --rootdir "$ROOT" $vtests >"$OUTDIR/verify-collect.log" 2>&1
    grep '::' "$OUTDIR/verify-collect.log" | awk -v n="$nshards" -v d="$OUTDIR" '{print > (d "/verify-shard-" (NR-1)%n ".args")}'
    note "verify: $(grep -c '::' "$OUTDIR/verify-collect.log") tests in $nshards shards"
    t_tests=$SECONDS
    for f in "$OUTDIR"/verify-shard-*.args; do
        k=$(basename "$f" .args)
        { run_logged "$k" python -m pytest "@$f" -q -ra -p no:cacheprovider --rootdir "$ROOT" \
            --junitxml="$OUTDIR/$k.xml"; echo $? >"$OUTDIR/$k.rc"; } &
    done
    wait
    note "verify: tests $((SECONDS - t_tests)) s"
    copy_out
    # 2. the ops the change touches (OPRT_VERIFY_OPS, else python -m oprt_bench.touched OPRT_VERIFY_BASE) swept on
    #    OPRT_VERIFY_CASES beside torch, then compared with the committed run of that case set where there is one
    vcases=${OPRT_VERIFY_CASES:-default}
    # the base: OPRT_VERIFY_BASE, else the commit the committed run of the case set was measured at
    vbase=${OPRT_VERIFY_BASE:-$(python -c "import json, sys; print(json.load(open(sys.argv[1]))['git']['commit'])" \
        "results/h200/$vcases/run.json" 2>/dev/null)}
    git cat-file -e "${vbase:-none}^{commit}" 2>/dev/null || vbase=""
    note "verify: changes since ${vbase:-the last commit}"
    # shellcheck disable=SC2086
    vops=${OPRT_VERIFY_OPS:-$(python -m oprt_bench.touched $vbase 2>>"$OUTDIR/verify-touched.log")}
    note "verify: ops touched: ${vops:-none}"
    if [ -n "$vops" ] && [ "$vops" != none ]; then
        vbackends=${OPRT_VERIFY_BACKENDS:-$GPU_BACKENDS,torch}
        run_logged verify-sweep oprt-bench --ops "$vops" --backends "$vbackends" --baseline "${vbackends##*,}" \
            --cases "$vcases" --time-budget "${OPRT_SUITE_BUDGET:-0.1}" --out "$OUTDIR/verify-sweep"
        if [ -f "results/h200/$vcases/run.json" ]; then
            run_logged verify-compare oprt-bench compare "results/h200/$vcases" "$OUTDIR/verify-sweep"
        fi
    fi
    # 3. one table: the tests by shard, the sweep by op and backend, the comparison's verdicts
    # (not a step: it runs past the deadline too, so that a cut run still ends with its table)
    python scripts/verify_summary.py "$OUTDIR" >"$OUTDIR/verify-summary.log" 2>&1
    note "verify-summary: exit $?"
    cat "$OUTDIR/verify-summary.log" >>"$SUMMARY"
    copy_out
fi

if has tune; then
    tune_ops=${OPRT_SUITE_TUNE_OPS:-elementwise reduce softmax}
    # shellcheck disable=SC2086
    if run_logged tune-build bash scripts/tune/build.sh -o "$OUTDIR/tunebin" $tune_ops; then
        for op in $tune_ops; do
            run_logged "tune-$op" "$OUTDIR/tunebin/$op" ${OPRT_TUNE_FILTER:+"$OPRT_TUNE_FILTER"}
        done
    fi
    rm -rf "$OUTDIR/tunebin"
fi

if has launch; then
    run_logged launch-build bash scripts/tune/build.sh -o "$OUTDIR/tunebin" launch_cost \
        && run_logged launch-cost "$OUTDIR/tunebin/launch_cost"
    rm -rf "$OUTDIR/tunebin"
fi

if has sweep; then
    for cs in ${OPRT_SUITE_SWEEP_SETS:-smoke edge default large}; do
        # one process per entry of OPRT_SUITE_SWEEP_DTYPES, in parallel; unset: one process, every dtype
        for dt in ${OPRT_SUITE_SWEEP_DTYPES:-all}; do
            name="sweep-$cs${OPRT_SUITE_SWEEP_DTYPES:+-$dt}"
            run_logged "$name" oprt-bench --backends "$GPU_BACKENDS" --mode test --cases "$cs" \
                --ops "${OPRT_SUITE_SWEEP_OPS:-all}" --dtypes "$dt" --baseline none --out "$OUTDIR/$name" \
                --format csv -q &
        done
        wait
    done
fi

if has isolation; then
    # a real GPU backend beside one that segfaults, hangs and raises: the faulty rows are errors, nvidia's ok
    OPRT_FAULTY_PLAN=${OPRT_FAULTY_PLAN:-"copy/1000:segv,relu/1000:hang,softmax/64x1000-axis-1:raise"} \
        run_logged isolation oprt-bench --backends nvidia,faulty --baseline nvidia --cases smoke \
        --time-budget 0.05 --case-timeout 5 --out "$OUTDIR/isolation-nvidia-faulty"
    # device faults: faultygpu (CuPy's kernels) traps, writes out of bounds and spins on the planned cases; each
    # costs its rows, the worker is replaced, every other row (softmax after them: CuPy's own kernels) is ok
    gpu_plan=${OPRT_SUITE_GPU_FAULTS:-"relu/1000:trap,copy/33x65-transposed:oob,reduce_sum/64x1000-axis0:gpuhang"}
    # the core ops only: a plugin op installed beside them (the test plugin's) is unsupported on both backends
    OPRT_FAULTY_PLAN=$gpu_plan run_logged isolation-gpu oprt-bench --backends nvidia,faultygpu --baseline nvidia \
        --ops "$(ops_of core)" --cases smoke --dtypes f32,f16 --time-budget 0.05 --case-timeout 10 \
        --out "$OUTDIR/isolation-nvidia-faultygpu"
    run_logged isolation-gpu-check python scripts/check_faults.py "$OUTDIR/isolation-nvidia-faultygpu" \
        --plan "$gpu_plan" --backend faultygpu
fi

if has quick; then
    # a quick look, as a user's first command: the first run measures the calibration (--recalibrate), the next
    # ones reuse it; --verbose names the seconds of each phase, `time` the wall time
    quick=${OPRT_SUITE_QUICK:-"--ops softmax --backends nvidia,torch --shape 57700x577 --shape 4096x50257 --dtypes f16"}
    for i in 1 2 3; do
        # shellcheck disable=SC2086 # word splitting of the options is wanted
        run_logged "quick-$i" /usr/bin/time -f "wall %e s" oprt-bench $quick --verbose \
            --out "$OUTDIR/quick-$i" $([ "$i" = 1 ] && echo --recalibrate)
        grep -h "^time: plan\|^wall" "$OUTDIR/quick-$i.log" | sed 's/^/   /' | tee -a "$SUMMARY"
    done
fi

if has overhead; then
    run_logged overhead python scripts/host_overhead.py --backend nvidia --csv "$OUTDIR/host-overhead.csv"
    run_logged host-profile python scripts/host_profile.py
fi

if has sanitize; then
    # OPRT_SUITE_SANITIZE: '|'-separated NAME=PYTEST-ARGS groups (';' between pytest args), one log per tool
    mkdir -p "$OUTDIR/sanitizer"
    groups=${OPRT_SUITE_SANITIZE:-"nvidia=tests/oprt_nvidia/test_nvidia_ops.py;tests/oprt_nvidia/test_nvidia_paths.py;\
tests/oprt_nvidia/test_nvidia_matmul.py;-k;not default and not large"}
    IFS='|' read -r -a group_list <<<"$groups"
    for group in "${group_list[@]}"; do
        gname=${group%%=*}
        IFS=';' read -r -a gargs <<<"${group#*=}"
        for tool in ${OPRT_SUITE_SANITIZERS:-memcheck racecheck initcheck}; do
            run_logged "sanitizer-$gname-$tool" compute-sanitizer --tool "$tool" --error-exitcode 99 \
                --target-processes all python -m pytest -q -p no:cacheprovider -m "not slow" "${gargs[@]}"
            mv "$OUTDIR/sanitizer-$gname-$tool.log" "$OUTDIR/sanitizer/$gname-$tool.log"
        done
    done
fi

if has fuzz; then
    # >= 10000 examples per fuzz test against each GPU library (the C ABI) and the Python op API
    OPRT_FUZZ_EXAMPLES=${OPRT_FUZZ_EXAMPLES:-10000} run_logged fuzz python -m pytest tests/oprt_core/test_fuzz_cabi.py \
        tests/oprt_core/test_fuzz_ops.py -q -ra -p no:cacheprovider -k "not host and not numpy" \
        --hypothesis-show-statistics
fi

if has check; then
    run_logged check-baselines python scripts/check_baselines.py "$OUTDIR/check-baselines" \
        --parts "${OPRT_SUITE_CHECK_PARTS:-timing,peaks}"
fi

if has bench; then
    for spec in ${OPRT_SUITE_BENCH:-"default:$GPU_BACKENDS,torch,cupy large:$GPU_BACKENDS,torch"}; do
        name=""
        [[ $spec == *=* ]] && { name=${spec%%=*}; spec=${spec#*=}; }
        IFS=: read -r cs backends ops dtypes baseline <<<"$spec"
        name=${name:-"bench-$cs-${backends//,/-}${ops:+-${ops//,/-}}${dtypes:+-${dtypes//,/-}}"}
        run_logged "$name" oprt-bench --backends "$backends" --cases "$cs" --ops "${ops:-all}" \
            --dtypes "${dtypes:-all}" --baseline "${baseline:-torch}" --out "$OUTDIR/$name" \
            --time-budget "${OPRT_SUITE_BUDGET:-0.3}" --mode "${OPRT_SUITE_BENCH_MODE:-all}"
    done
fi

if has models; then
    # torch-compile compiles every case (seconds each): a longer step limit than the others
    mdt=${OPRT_SUITE_MODELS_DTYPES:-all}
    OPRT_SUITE_STEP_TIMEOUT=${OPRT_SUITE_MODELS_TIMEOUT:-1800} run_logged "models-${mdt//,/-}" oprt-bench \
        --backends "${OPRT_SUITE_MODELS_BACKENDS:-$GPU_BACKENDS,torch,torch-compile,liger}" --cases models \
        --ops "${OPRT_SUITE_MODELS_OPS:-$(ops_of model)}" --dtypes "$mdt" --baseline torch \
        --out "$OUTDIR/models-${mdt//,/-}" --time-budget "${OPRT_SUITE_BUDGET:-0.3}" --mode "${OPRT_SUITE_BENCH_MODE:-all}"
    # every row of each GPU backend below its target (the models set's and the core sets'): the table's last line
    # counts them
    for be in ${GPU_BACKENDS//,/ }; do
        run_logged "models-${mdt//,/-}-below-$be" python3 scripts/perf_table.py --below --backend "$be" \
            "$OUTDIR/models-${mdt//,/-}/results.csv"
    done
fi

if has telemetry; then
    python3 -c "import pynvml" 2>/dev/null || note "telemetry: nvidia-ml-py is not installed: the columns stay empty"
    # ncu where the CUDA toolkit or Nsight Compute put it, when PATH lacks it
    command -v ncu >/dev/null || for d in /usr/local/cuda/bin /opt/nvidia/nsight-compute/*; do
        [ -x "$d/ncu" ] && { export PATH="$PATH:$d"; break; }
    done
    run_logged telemetry oprt-bench --backends nvidia --ops "$(ops_of core)" --cases smoke \
        --dtypes f32,f16 --baseline none --telemetry --profile ncu:2 --out "$OUTDIR/telemetry"
    grep -h "profile" "$OUTDIR/telemetry.log" | sed 's/^/   /' | tee -a "$SUMMARY"
    run_logged telemetry-check python3 - "$OUTDIR/telemetry" <<'PY'
import csv, json, pathlib, sys
run = pathlib.Path(sys.argv[1])
rows = list(csv.DictReader((run / "results.csv").open()))
timed = [r for r in rows if r["median_ms"]]
filled = [r for r in timed if r["sm_mhz_start"] and r["power_w"] and r["energy_j"]]
meta = json.loads((run / "run.json").read_text())
print("telemetry:", json.dumps(meta["backends"]["nvidia"].get("telemetry")))
print(f"{len(filled)} of {len(timed)} timed rows have telemetry; clock drops: "
      f"{sum(r['clock_drop'] == '1' for r in timed)}; throttle reasons seen: "
      f"{sorted({x for r in timed for x in r['throttle_reasons'].split(';') if x})}")
profiled = [r for r in rows if r["ncu_report"]]
for r in profiled:
    print(f"profiled {r['op']} {r['case']} {r['dtype']}: {r['ncu_report']} DRAM {r['ncu_dram_bytes']} B "
          f"{r['ncu_dram_pct']}% of peak, ncu {r['ncu_time_ms']} ms against the sweep's median {r['median_ms']} ms")
print(f"{len(profiled)} rows profiled; report files: {sorted(p.name for p in (run / 'profiles').glob('*.ncu-rep'))}")
sys.exit(0 if timed and len(filled) == len(timed) and len(profiled) == 2 else 1)
PY
fi

if has graph; then
    # one sweep per timing method on the same cases, so their medians compare row by row
    gname=${OPRT_SUITE_GRAPH_NAME:-default}
    for timing in graph events; do
        # shellcheck disable=SC2086 # OPRT_SUITE_GRAPH_ARGS is word-split on purpose
        run_logged "$timing-$gname" oprt-bench --backends nvidia,torch --baseline torch \
            ${OPRT_SUITE_GRAPH_ARGS:---cases default} \
            --ops "${OPRT_SUITE_GRAPH_OPS:-$(ops_of core)}" --timing "$timing" \
            --time-budget "${OPRT_SUITE_BUDGET:-0.3}" --out "$OUTDIR/$timing-$gname"
    done
fi

if has ab; then
    for b in nvidia ${GPU_BACKENDS#nvidia}; do
        b=${b#,}
        [ -n "$b" ] || continue
        run_logged "ab-nvidia-$b" oprt-bench ab nvidia "$b" --ops "${OPRT_SUITE_AB_OPS:-$(ops_of core axis)}" \
            --cases default --dtypes f32 --out "$OUTDIR/ab-nvidia-$b"
        cp "$OUTDIR/ab-nvidia-$b.log" "$OUTDIR/ab-nvidia-$b/ab.txt" 2>/dev/null
    done
fi

if has fleet; then
    if python -c "import distributed" 2>/dev/null; then
        gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
        first=$(nvidia-smi -L 2>/dev/null | sed -n 's/^GPU \([0-9]*\):.*/\1/p' | head -n 1)
        fleet_args=(--backends nvidia --baseline none --cases default --time-budget "${OPRT_SUITE_BUDGET:-0.3}"
            --ops "${OPRT_SUITE_FLEET_OPS:-$(ops_of core)}")
        run_logged fleet-cluster /usr/bin/time -f "wall %e s" oprt-bench "${fleet_args[@]}" --cluster local \
            --out "$OUTDIR/fleet-cluster"
        CUDA_VISIBLE_DEVICES=${first:-0} run_logged fleet-1gpu /usr/bin/time -f "wall %e s" oprt-bench \
            "${fleet_args[@]}" --out "$OUTDIR/fleet-1gpu"
        {
            echo "GPUs: $gpus"
            echo "cluster ($gpus GPU(s)): $(grep -h '^wall' "$OUTDIR/fleet-cluster.log")"
            echo "one GPU (${first:-0}): $(grep -h '^wall' "$OUTDIR/fleet-1gpu.log")"
        } >"$OUTDIR/fleet-times.txt"
        sed 's/^/   /' "$OUTDIR/fleet-times.txt" | tee -a "$SUMMARY"
        run_logged fleet-compare oprt-bench compare "$OUTDIR/fleet-1gpu" "$OUTDIR/fleet-cluster" --all
        if [[ $GPU_BACKENDS == *metax* ]]; then
            # two "hosts" on one GPU: a scheduler and two oprt-bench workers, one offering nvidia and torch, the
            # other metax; one client run routed across both, beside two separate runs merged into one folder
            sched="$OUTDIR/fleet-scheduler.json"
            dask scheduler --no-dashboard --host 127.0.0.1 --scheduler-file "$sched" >"$OUTDIR/fleet-scheduler.log" 2>&1 &
            spid=$!
            for _ in $(seq 60); do [ -s "$sched" ] && break; sleep 0.5; done
            oprt-bench worker --scheduler-file "$sched" --backends nvidia,torch --name gpu0-nvidia \
                >"$OUTDIR/fleet-worker-nvidia.log" 2>&1 &
            w1=$!
            oprt-bench worker --scheduler-file "$sched" --backends metax --name gpu0-metax \
                >"$OUTDIR/fleet-worker-metax.log" 2>&1 &
            w2=$!
            python3 -c "import sys; from distributed import Client; \
Client(scheduler_file=sys.argv[1], timeout='60s').wait_for_workers(2, timeout=180)" "$sched" \
                >"$OUTDIR/fleet-wait.log" 2>&1 || note "fleet: the two workers did not both start (fleet-worker-*.log)"
            shared_args=(--baseline torch --cases default --time-budget "${OPRT_SUITE_BUDGET:-0.3}"
                --ops "${OPRT_SUITE_FLEET_OPS:-$(ops_of core)}")
            run_logged fleet-routed oprt-bench "${shared_args[@]}" --backends nvidia,metax,torch \
                --scheduler-file "$sched" --out "$OUTDIR/fleet-routed"
            kill "$w1" "$w2" "$spid" 2>/dev/null
            wait "$w1" "$w2" "$spid" 2>/dev/null
            run_logged fleet-part-nvidia oprt-bench "${shared_args[@]}" --backends nvidia,torch --out "$OUTDIR/fleet-part-nvidia"
            run_logged fleet-part-metax oprt-bench "${shared_args[@]}" --backends metax,torch --out "$OUTDIR/fleet-part-metax"
            run_logged fleet-merge oprt-bench merge "$OUTDIR/fleet-part-nvidia" "$OUTDIR/fleet-part-metax" \
                --on-duplicate first --out "$OUTDIR/fleet-merged"
            run_logged fleet-routed-vs-merged oprt-bench compare "$OUTDIR/fleet-merged" "$OUTDIR/fleet-routed" --all
        fi
    else
        note "fleet: skipped: dask distributed is not installed (put its wheels in .whl/: pip download 'dask' 'distributed')"
    fi
fi

if has variants; then
    [ -n "${OPRT_SUITE_VARIANTS:-}" ] || note "variants: none given (set OPRT_SUITE_VARIANTS, see the header)"
    IFS='|' read -r -a entries <<<"${OPRT_SUITE_VARIANTS:-}"
    for entry in "${entries[@]}"; do
        name=${entry%%@*}
        rest=${entry#*@}
        if [ "$rest" = "$entry" ] || [ "${rest#*@}" = "$rest" ]; then
            note "variants: '$entry' is not NAME@VARIANT;...@OPRT-BENCH-ARGS"
            continue
        fi
        IFS=';' read -r -a vlist <<<"${rest%%@*}"
        read -r -a bench_args <<<"${rest#*@}"
        run_logged "variants-$name" bash scripts/env_variants.sh "$OUTDIR/variants-$name" "${vlist[@]}" -- \
            "${bench_args[@]}"
    done
fi

if has compare; then
    pairs=${OPRT_SUITE_COMPARE:-}
    if [ -z "$pairs" ]; then  # each bench-CASESET-* run against the committed run of its case set
        for d in "$OUTDIR"/bench-*/; do
            [ -d "$d" ] || continue
            name=$(basename "$d")
            cs=${name#bench-}
            cs=${cs%%-*}
            [ -f "results/h200/$cs/run.json" ] && pairs="$pairs $name:results/h200/$cs"
        done
    fi
    [ -n "$pairs" ] || note "compare: no run to compare (set OPRT_SUITE_COMPARE=NAME:REF_DIR)"
    for pair in $pairs; do
        name=${pair%%:*}
        ref=${pair#*:}
        # shellcheck disable=SC2086
        run_logged "compare-$name" oprt-bench compare "$ref" "$OUTDIR/$name" ${OPRT_SUITE_COMPARE_ARGS:---all}
        mv "$OUTDIR/compare-$name.log" "$OUTDIR/compare-$name.txt"
    done
fi

note "done at $(date -u +%FT%TZ)"
tar -czf /tmp/suite.tar.gz -C "$OUTDIR" . && mv /tmp/suite.tar.gz "$OUTDIR/suite.tar.gz"
cat "$SUMMARY"
