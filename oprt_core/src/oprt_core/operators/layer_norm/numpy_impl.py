"""layer_norm on the numpy backend: f32 arithmetic, one rounding to the output dtype."""

from __future__ import annotations

import numpy as np

from .._numpy import F32, quiet


@quiet
def run(inputs, out, params) -> None:
    if out.size:  # nothing to write for an empty output (a row of 0 elements has no mean)
        x, w, b = (a.astype(F32) for a in inputs)
        d = x - np.mean(x, axis=-1, keepdims=True, dtype=F32)
        r = F32(1) / np.sqrt(np.mean(d * d, axis=-1, keepdims=True, dtype=F32) + F32(params["eps"]))
        np.copyto(out, (d * r * w + b).astype(out.dtype))
