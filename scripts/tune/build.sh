#!/usr/bin/env bash
# Builds the tune harness with the library's sources: one binary per OP (elementwise, reduce, softmax, launch_cost;
# default: all) into DIR (default .tunebin/ at the repository root). The library's translation units are compiled
# once and shared; every nvcc runs in parallel. With -l LIBDIR the harnesses link against a built liboprt_nvidia.so
# in LIBDIR instead (e.g. the installed oprt_nvidia package's folder): only the harnesses compile, and the library
# launches are that build's, not the working tree's.
#   scripts/tune/build.sh [-o DIR] [-l LIBDIR] [OP ...]
#   .tunebin/softmax ['title|title...']     # each harness's optional filter: substrings of group titles
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=$ROOT/.tunebin
LIBDIR=
USAGE="usage: scripts/tune/build.sh [-o DIR] [-l LIBDIR] [OP ...]"
while [ $# -gt 0 ]; do
    case $1 in
        -o) DIR=${2:?$USAGE}; shift 2 ;;
        -l) LIBDIR=${2:?$USAGE}; shift 2 ;;
        -*) echo "build.sh: unknown option $1; $USAGE" >&2; exit 2 ;;
        *) break ;;
    esac
done
if [ -n "$LIBDIR" ] && [ ! -f "$LIBDIR/liboprt_nvidia.so" ]; then
    echo "build.sh: no liboprt_nvidia.so in $LIBDIR" >&2
    exit 2
fi
OPS=${*:-elementwise reduce softmax launch_cost}
for op in $OPS; do
    [ -f "$ROOT/scripts/tune/$op.cu" ] || { echo "build.sh: no scripts/tune/$op.cu" >&2; exit 2; }
done
mkdir -p "$DIR"
OBJ=$(mktemp -d)
trap 'rm -rf "$OBJ"' EXIT
CORE=$ROOT/oprt_core/src/oprt_core
FLAGS=(-O3 -std=c++17 -arch=sm_90 -I"$CORE/include" -I"$CORE/include/oprt_shared")
pids=()
# the library's translation units: the shared runtime and every op folder's kernel source (oprt_core.build's
# kernel_sources), unless a built library is linked instead
if [ -z "$LIBDIR" ]; then
    for f in "$CORE"/include/oprt_shared/*.cu "$CORE"/operators/*/*.cu; do
        nvcc "${FLAGS[@]}" -c "$f" -o "$OBJ/lib-$(basename "$f" .cu).o" &
        pids+=($!)
    done
fi
# The harnesses' copies of the library's header kernels live in another namespace (-Doprt_kernels=oprt_tune): otherwise
# they and the library's share host stubs and launcher statics (the linker keeps one inline definition), and a
# kernel attribute set through one copy is not seen by the other's launch. launch_cost.cu includes no such header.
for op in $OPS; do
    ns=(-Doprt_kernels=oprt_tune -Xptxas -v)
    [ "$op" = launch_cost ] && ns=()
    nvcc "${ns[@]}" "${FLAGS[@]}" -c "$ROOT/scripts/tune/$op.cu" -o "$OBJ/main-$op.o" >"$OBJ/$op.ptxas" 2>&1 &
    pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
for op in $OPS; do
    grep -v 'ptxas info\|bytes stack frame\|^$' "$OBJ/$op.ptxas" || true  # errors and warnings, not the register report
done
[ "$rc" -eq 0 ] || { echo "tune build: a translation unit failed" >&2; exit 1; }
if [ -n "$LIBDIR" ]; then
    LIBDIR=$(cd "$LIBDIR" && pwd)
    LINK=(-L"$LIBDIR" -loprt_nvidia -Xlinker -rpath -Xlinker "$LIBDIR")
else
    LINK=("$OBJ"/lib-*.o)
fi
for op in $OPS; do
    nvcc -arch=sm_90 "$OBJ/main-$op.o" "${LINK[@]}" -o "$DIR/$op"
    echo "built $DIR/$op"
done
