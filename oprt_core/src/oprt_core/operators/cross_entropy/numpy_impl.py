"""cross_entropy on the numpy backend: f32 arithmetic, one rounding to the output dtype."""

from __future__ import annotations

import numpy as np

from .._numpy import F32, quiet


@quiet
def run(inputs, out, params) -> None:
    """Per row: m + log(sum(exp(x - m))) - x[target] in f32; 0 for ignored rows, NaN for a target out of range;
    the mean over the rows not ignored (NaN over none)."""
    logits, target = inputs
    x = logits.astype(F32)
    t = np.asarray(target, np.int64)
    v = x.shape[-1]
    ignored = t == params["ignore_index"]
    if x.size:
        valid = (t >= 0) & (t < v)
        m = np.max(x, axis=-1)
        lse = m + np.log(np.sum(np.exp(x - m[..., None]), axis=-1, dtype=F32))
        xt = np.take_along_axis(x, np.where(valid, t, 0)[..., None], axis=-1)[..., 0]
        loss = np.where(ignored, F32(0), np.where(valid, lse - xt, F32(np.nan))).astype(F32)
    else:
        loss = np.zeros(t.shape, F32)
    if params["reduction"] == "mean":
        loss = np.asarray(np.sum(loss, dtype=F32) / F32(np.count_nonzero(~ignored)))
    np.copyto(out, loss.astype(out.dtype))
