#!/usr/bin/env bash
# Builds scripts/tune/tune.cu (or MAIN, e.g. scripts/tune/launch_cost.cu) with the library's sources into BINARY:
# one nvcc per translation unit, in parallel, then the link (a single nvcc over every file takes ~70 s; this
# takes the longest file's time).
#   scripts/tune/build.sh BINARY [MAIN]
set -euo pipefail
BIN=${1:?usage: scripts/tune/build.sh BINARY [MAIN]}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MAIN=${2:-$ROOT/scripts/tune/tune.cu}
OBJ=$(mktemp -d)
trap 'rm -rf "$OBJ"' EXIT
pids=()
# tune.cu's own copies of the library's header kernels live in another namespace (-Doprt_kernels=oprt_tune):
# otherwise they and the library's share host stubs and launcher statics (one inline definition kept by
# the linker), and a kernel attribute set through one copy is not seen by the other's launch.
for f in "$MAIN" "$ROOT"/oprt_core/src/oprt_core/include/oprt_kernels/*.cu; do
    ns=""
    [ "$(basename "$f")" = tune.cu ] && ns="-Doprt_kernels=oprt_tune"
    nvcc $ns -O3 -std=c++17 -arch=sm_90 -Xptxas -v -I"$ROOT/oprt_core/src/oprt_core/include" -I"$ROOT/oprt_core/src/oprt_core/include/oprt_kernels" \
        -c "$f" -o "$OBJ/$(basename "$f" .cu).o" &
    pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
[ "$rc" -eq 0 ] || { echo "tune build: a translation unit failed" >&2; exit 1; }
nvcc -arch=sm_90 "$OBJ"/*.o -o "$BIN"
