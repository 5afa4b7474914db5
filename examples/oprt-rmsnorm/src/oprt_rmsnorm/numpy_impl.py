"""``rms_norm_example`` for the numpy backend: f32 arithmetic, one rounding to the output dtype at the end."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["rms_norm_numpy"]

_F32 = np.float32


def rms_norm_numpy(inputs: Sequence[np.ndarray], out: np.ndarray, params: Mapping[str, Any]) -> None:
    """The numpy backend's implementation: ``impl(inputs, out, params)`` writes into ``out``."""
    x, weight = (np.asarray(a).astype(_F32) for a in inputs)
    if x.shape[-1] == 0:  # nothing to normalise (out is empty too)
        return
    mean_sq = np.mean(np.square(x), axis=-1, keepdims=True, dtype=_F32)
    r = _F32(1) / np.sqrt(mean_sq + _F32(params["eps"]))
    np.copyto(out, (x * r * weight).astype(out.dtype))
