"""add_rms_norm on the numpy backend: f32 arithmetic, one rounding of each output to its dtype."""

from __future__ import annotations

import numpy as np

from .._numpy import F32, quiet


@quiet
def run(inputs, outs, params) -> None:
    """h = x + residual rounded to the dtype, and normalised as rounded (as torch's x + residual, then rms_norm)."""
    y, h_out = outs
    if y.size:  # nothing to write for an empty output (a row of 0 elements has no mean)
        x, res, w = (a.astype(F32) for a in inputs)
        h = (x + res).astype(h_out.dtype)
        hf = h.astype(F32)
        r = F32(1) / np.sqrt(np.mean(hf * hf, axis=-1, keepdims=True, dtype=F32) + F32(params["eps"]))
        y_val = (hf * r * w).astype(y.dtype)
        np.copyto(h_out, h)  # both computed before either is written: out and h may each be x or residual
        np.copyto(y, y_val)
