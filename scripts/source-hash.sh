#!/usr/bin/env bash
# The hash of every file a package's wheel is built from (tracked or new, not ignored, and present): the package's
# folder, and for the compiled backends what their build reads of oprt-core: its build module, its include folder and
# the op folders' C sources (kernels, plans, sm90/). build-wheels.sh records it beside each wheel and gpu-suite.sh's
# install phase compares it, so a wheel built from other sources is never used.
#
#   scripts/source-hash.sh PACKAGE-FOLDER        (e.g. oprt_nvidia, examples/oprt-gelu)
set -euo pipefail
pkg=${1:?usage: scripts/source-hash.sh PACKAGE-FOLDER}
cd "$(dirname "$0")/.."
paths=("$pkg")
core=oprt_core/src/oprt_core
case $(basename "$pkg") in
    oprt_nvidia | oprt_metax | oprt-gelu)
        paths+=("$core/build.py" "$core/include")
        for ext in cu cuh h; do paths+=(":(glob)$core/operators/**/*.$ext"); done ;;
esac
# a tracked file deleted in the working tree is listed by git but not hashed
git ls-files -co --exclude-standard -z -- "${paths[@]}" | sort -zu \
    | while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done \
    | xargs -0 sha256sum | sha256sum | cut -c1-16
