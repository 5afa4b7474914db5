"""matmul on the numpy backend."""

from __future__ import annotations

import numpy as np

from .._numpy import F32, quiet


@quiet
def run(inputs, out, params) -> None:
    """float32 BLAS (f16/bf16 widened first: exact), alpha applied in f32, then beta * c added in f32 where beta != 0
    (c is not read otherwise), one rounding to the output dtype; allow_tf32 changes nothing here (the CPU has no
    TF32). c may be out itself: it is read into the f32 result before out is written."""
    a, b = (x.astype(F32) for x in inputs[:2])
    y = np.matmul(a, b)
    if params["alpha"] != 1:
        y *= F32(params["alpha"])
    if len(inputs) > 2 and params["beta"] != 0:
        y += F32(params["beta"]) * inputs[2].astype(F32)
    np.copyto(out, y.astype(out.dtype))
