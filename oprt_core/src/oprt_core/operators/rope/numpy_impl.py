"""rope on the numpy backend: f32 arithmetic, one rounding to the output dtype."""

from __future__ import annotations

import numpy as np

from .._numpy import F32, quiet


@quiet
def run(inputs, outs, params) -> None:
    """Each pair (x1, x2) -> (x1 c - x2 s, x2 c + x1 s) in f32; NaN for a token whose position is outside [0, P).
    Both results are computed before either is written (q_out may be q, k_out k)."""
    q, k, cos, sin, positions = inputs
    pos = np.asarray(positions, np.int64)
    valid = (pos >= 0) & (pos < cos.shape[0])
    rows = np.where(valid, pos, 0) if cos.shape[0] else np.zeros(0, np.int64)
    c = cos.astype(F32)[rows][:, None, :]
    s = sin.astype(F32)[rows][:, None, :]
    half = q.shape[-1] // 2
    i1, i2 = ((..., slice(0, half)), (..., slice(half, None))) if params["style"] == "neox" else \
        ((..., slice(0, None, 2)), (..., slice(1, None, 2)))
    results = []
    for x, out in zip((q, k), outs):
        xf = x.astype(F32)
        y = np.empty(x.shape, F32)
        y[i1] = xf[i1] * c - xf[i2] * s
        y[i2] = xf[i2] * c + xf[i1] * s
        y[~valid] = np.nan
        results.append(y.astype(out.dtype))
    for out, y in zip(outs, results):
        np.copyto(out, y)
