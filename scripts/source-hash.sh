#!/usr/bin/env bash
# The hash of every file a package's wheel is built from (tracked or new, not ignored): the package's folder, and for
# the compiled backends the oprt include folder their build compiles. build-wheels.sh records it beside each wheel
# and gpu-suite.sh's install phase compares it, so a wheel built from other sources is never used.
#
#   scripts/source-hash.sh PACKAGE-FOLDER        (e.g. oprt_nvidia, examples/oprt-gelu)
set -euo pipefail
pkg=${1:?usage: scripts/source-hash.sh PACKAGE-FOLDER}
cd "$(dirname "$0")/.."
paths=("$pkg")
case $(basename "$pkg") in
    oprt_nvidia | oprt_metax | oprt-gelu) paths+=(oprt_core/src/oprt_core/include) ;;
esac
git ls-files -co --exclude-standard -z -- "${paths[@]}" | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
