#!/usr/bin/env bash
# Build the project's wheels for the offline GPU host on a machine with nvcc (no GPU needed), so that the host
# installs in seconds instead of compiling the CUDA libraries there.
#
#   scripts/build-wheels.sh [OUTDIR]          (default OUTDIR: .whl, the folder gpu-suite.sh installs from)
#
# Variables: OPRT_WHEEL_PYTHON (the interpreter whose ABI the wheels target, default python3.12: the GPU host's
# Python; a pyenv 3.12 is found where python3.12 is not on PATH), OPRT_CUDA_ARCHS (default 90a: the H100/H200
# with the CUTLASS sm_90a kernels), OPRT_WHEEL_PACKAGES (the package folders, default all of gpu-suite.sh's).
# A build venv under build/wheel-env-<python> holds setuptools, cffi (pinned to the cffi wheel the host gets from
# .whl/) and nvidia-cutlass (the CUTLASS headers). OUTDIR/oprt-wheels.txt holds a line per wheel, "FOLDER HASH
# PYTHON-ARCHS WHEEL", HASH its sources' (scripts/source-hash.sh): a package whose line matches its sources is not built again,
# and gpu-suite.sh's install phase uses a wheel only when it matches (otherwise it builds that package there).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUTDIR=${1:-.whl}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
PY=${OPRT_WHEEL_PYTHON:-python3.12}
if ! "$PY" -c pass 2>/dev/null; then
    cand=$(ls -d "$HOME"/.pyenv/versions/3.12*/bin/python3 2>/dev/null | tail -n 1 || true)
    [ -n "$cand" ] || { echo "build-wheels.sh: no $PY here (set OPRT_WHEEL_PYTHON)" >&2; exit 2; }
    PY=$cand
fi
TAG=$("$PY" -c 'import sys; print(f"py{sys.version_info[0]}{sys.version_info[1]}")')
ENV="$ROOT/build/wheel-env-$TAG"
[ -x "$ENV/bin/python" ] || "$PY" -m venv "$ENV"
"$ENV/bin/python" -m pip install -q --disable-pip-version-check setuptools wheel "cffi==2.0.0" pycparser nvidia-cutlass
PKGS=${OPRT_WHEEL_PACKAGES:-"oprt_core oprt_bench oprt_nvidia oprt_metax tests/plugins/oprt-testplugin \
tests/plugins/oprt-faultyplugin examples/oprt-gelu examples/oprt-triton examples/oprt-tilelang"}
export OPRT_CUDA_ARCHS=${OPRT_CUDA_ARCHS:-90a} OPRT_METAX_TOOLCHAIN=${OPRT_METAX_TOOLCHAIN:-nvcc-shim}
export OPRT_ENABLE_CUTE=${OPRT_ENABLE_CUTE:-on}
TARGET="$TAG-$(echo "$OPRT_CUDA_ARCHS" | tr '; ' ',,')"  # what else a wheel was built for
STAMP="$OUTDIR/oprt-wheels.txt"
touch "$STAMP"
t0=$SECONDS
for pkg in $PKGS; do
    hash=$(scripts/source-hash.sh "$pkg")
    name=$(basename "$pkg" | tr - _)
    if grep -q "^$pkg $hash $TARGET " "$STAMP" && compgen -G "$OUTDIR/$name-*.whl" >/dev/null; then
        echo "== $pkg: up to date"
        continue
    fi
    t=$SECONDS
    echo "== $pkg"
    rm -f "$OUTDIR/$name"-*.whl
    rm -rf "$pkg/build"  # a build folder of another Python would be reused
    log="$OUTDIR/build-$name.log"
    "$ENV/bin/python" -m pip wheel -v --disable-pip-version-check --no-deps --no-build-isolation -w "$OUTDIR" \
        "./$pkg" >"$log" 2>&1 \
        || { echo "build-wheels.sh: $pkg failed (log: $log)" >&2; tail -n 20 "$log" >&2; exit 1; }
    rm -rf "$pkg/build"
    wheel=$(cd "$OUTDIR" && ls "$name"-*.whl | head -n 1)
    grep -v "^$pkg " "$STAMP" >"$STAMP.tmp" || true
    echo "$pkg $hash $TARGET $wheel" >>"$STAMP.tmp"
    mv "$STAMP.tmp" "$STAMP"
    echo "   $wheel in $((SECONDS - t)) s"
done
echo "wheels in $OUTDIR ($((SECONDS - t0)) s):"
cat "$STAMP"
