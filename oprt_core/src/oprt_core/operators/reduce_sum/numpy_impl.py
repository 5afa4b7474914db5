"""reduce_sum on the numpy backend."""

from __future__ import annotations

import numpy as np

from .._numpy import F32, quiet


@quiet
def run(inputs, out, params) -> None:
    s = np.sum(inputs[0].astype(F32), axis=params["axis"], keepdims=params["keepdims"], dtype=F32)
    np.copyto(out, np.asarray(s).astype(out.dtype))
