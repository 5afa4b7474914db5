"""relu on the numpy backend."""

from __future__ import annotations

import numpy as np

from .._numpy import F32, quiet


@quiet
def run(inputs, out, params) -> None:
    """x where x > 0, else x * negative_slope; with a zero slope +0.0 for x <= 0 (as torch.relu: not -0.0 from
    -1 * 0.0), and NaN stays NaN."""
    x = inputs[0].astype(F32)
    slope = params["negative_slope"]
    y = np.where(x <= 0, F32(0), x) if slope == 0 else np.where(x > 0, x, x * F32(slope))
    np.copyto(out, y.astype(out.dtype))
