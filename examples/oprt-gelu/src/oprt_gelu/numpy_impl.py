"""``gelu_tanh`` for the numpy backend: f32 arithmetic, one rounding to the output dtype at the end."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["gelu_tanh_numpy"]

_F32 = np.float32
_C = _F32(math.sqrt(2.0 / math.pi))
_A = _F32(0.044715)


def gelu_tanh_numpy(inputs: Sequence[np.ndarray], out: np.ndarray, params: Mapping[str, Any]) -> None:
    """The numpy backend's implementation: ``impl(inputs, out, params)`` writes into ``out`` (which may be x)."""
    x = np.asarray(inputs[0]).astype(_F32)
    y = _F32(0.5) * x * (_F32(1) + np.tanh(_C * (x + _A * x * x * x)))
    np.copyto(out, y.astype(out.dtype))
