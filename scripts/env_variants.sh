#!/usr/bin/env bash
# Run one oprt-bench sweep once per environment variant (a library's tune switches, e.g. OPRT_NVIDIA_NORM_P),
# each into its own run folder, then print each run's table: the variants of one kernel side by side.
#
#   scripts/env_variants.sh OUTDIR VARIANT... -- OPRT-BENCH-ARGS...
#
# VARIANT: space-separated NAME=VALUE assignments for one run ("-" for none), e.g.
#   scripts/env_variants.sh /tmp/v - "OPRT_NVIDIA_NORM_P=4" "OPRT_NVIDIA_NORM_P=4 OPRT_NVIDIA_NORM_RAW=1" -- \
#       --ops rms_norm --backends nvidia --dtypes bf16 --cases default --baseline none
# Run folders: OUTDIR/v1, v2, ... (OUTDIR/variants.txt maps each to its assignments); exit status: the worst run's.
set -uo pipefail
OUTDIR=${1:?usage: scripts/env_variants.sh OUTDIR VARIANT... -- OPRT-BENCH-ARGS...}
shift
variants=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do variants+=("$1"); shift; done
[ "${1:-}" = "--" ] || { echo "env_variants.sh: missing -- before the oprt-bench arguments" >&2; exit 2; }
shift
[ ${#variants[@]} -gt 0 ] || { echo "env_variants.sh: no variant given" >&2; exit 2; }
mkdir -p "$OUTDIR"
: >"$OUTDIR/variants.txt"
worst=0
i=0
for v in "${variants[@]}"; do
    i=$((i + 1))
    assigns=()
    [ "$v" = "-" ] || read -r -a assigns <<<"$v"
    for a in "${assigns[@]}"; do
        [[ $a == *=* ]] || { echo "env_variants.sh: '$a' is not NAME=VALUE" >&2; exit 2; }
    done
    echo "v$i: ${v}" | tee -a "$OUTDIR/variants.txt"
    env "${assigns[@]}" oprt-bench "$@" --out "$OUTDIR/v$i" --table plain >"$OUTDIR/v$i.txt" 2>"$OUTDIR/v$i.err"
    rc=$?
    [ $rc -gt $worst ] && worst=$rc
    cat "$OUTDIR/v$i.txt"
    tail -n 1 "$OUTDIR/v$i.err"
done
exit $worst
