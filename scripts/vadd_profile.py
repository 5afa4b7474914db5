"""Launches torch's f16 add and the nvidia backend's vector_add of 2^27 elements twice each, for ncu (session 14).

    ncu --clock-control none --kernel-name-base demangled -k 'regex:CUDAFunctor_add|ew_contig' \\
        --section LaunchStats --section SpeedOfLight python scripts/vadd_profile.py

The 16-bit vector_add runs 0.993-0.998x torch (docs/performance.md, "Session 14"); this shows both kernels'
launch shapes and throughputs side by side.
"""

from __future__ import annotations

import torch
from flush_compare import prepared_pair  # scripts/ is sys.path[0] when run as a script

from oprt_nvidia.plugin import make_backend


def main() -> None:
    be = make_backend()
    if not be.availability().ok:
        raise SystemExit(f"nvidia unavailable: {be.availability().reason}")
    ours, theirs, _ = prepared_pair(be, "vector_add", "f16")
    for _ in range(2):
        theirs()
        ours()
    torch.cuda.synchronize()
    be.synchronize()


if __name__ == "__main__":
    main()
