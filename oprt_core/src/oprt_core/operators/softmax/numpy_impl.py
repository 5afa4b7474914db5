"""softmax on the numpy backend."""

from __future__ import annotations

import numpy as np

from .._numpy import F32, quiet


@quiet
def run(inputs, out, params) -> None:
    x = inputs[0].astype(F32)
    if x.size:
        axis = params["axis"]
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        x = e / np.sum(e, axis=axis, keepdims=True, dtype=F32)
    np.copyto(out, x.astype(out.dtype))
