"""Launches torch's f16 add and the nvidia backend's vector_add of 2^27 elements twice each, for ncu (session 14).

    ncu --clock-control none --kernel-name-base demangled -k 'regex:CUDAFunctor_add|ew_contig' \\
        --section LaunchStats --section SpeedOfLight python scripts/vadd_profile.py

The 16-bit vector_add runs 0.993-0.998x torch (docs/performance.md, "Session 14"); this shows both kernels'
launch shapes and throughputs side by side.
"""

from __future__ import annotations

import numpy as np
import torch

from oprt_core.core_ops import CORE_OPS
from oprt_core.spec import Case, TensorCase
from oprt_nvidia.plugin import make_backend

N = 1 << 27


def main() -> None:
    be = make_backend()
    if not be.availability().ok:
        raise SystemExit(f"nvidia unavailable: {be.availability().reason}")
    spec = {s.name: s for s in CORE_OPS}["vector_add"]
    case = Case("vector_add", str(N), (TensorCase((N,), "contiguous"),) * 2, ())
    host = spec.make_inputs(case, "f16", np.random.default_rng(0))
    full = spec.validate_params({})
    ours = be.prepare("vector_add", [be.to_device(x) for x in host], be.empty((N,), "f16"), full)
    a, b = (torch.as_tensor(x.astype(np.float32), device="cuda").half() for x in host)
    out = torch.empty_like(a)
    for _ in range(2):
        torch.add(a, b, out=out)
        ours()
    torch.cuda.synchronize()
    be.synchronize()


if __name__ == "__main__":
    main()
