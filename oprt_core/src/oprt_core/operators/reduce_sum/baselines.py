"""reduce_sum on the baseline backends (each impl in the signature its backend's ``add_op`` documents).

- torch: ``torch.sum(x, dim, keepdim=..., out=out)`` (dim None = all; f16/bf16 accumulate in f32 inside torch);
- torch-compile: ``torch.sum(x, dim=axis, keepdim=keepdims)``;
- cupy: ``cupy.sum(x, axis, keepdims=..., out=out)``; for f16/bf16 with ``dtype=float32``: CuPy's own float16 sum
  (through CUB) accumulates in half precision and misses the f32-accumulation budget. Where this CuPy refuses an
  f32 sum into a narrow ``out``, it sums into an f32 buffer of the output's shape and copies (one extra small pass).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def _torch(torch, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    axis, keep = params["axis"], params["keepdims"]
    total = torch.sum
    return lambda: total(x, dim=axis, keepdim=keep, out=out)


def _torch_compile(torch, params) -> Callable[..., Any]:
    axis, keep, total = params["axis"], params["keepdims"], torch.sum
    return lambda x: total(x, dim=axis, keepdim=keep)


_SUM_F32_INTO_NARROW: dict[int, bool] = {}


def _sum_f32_into_narrow(cp) -> bool:
    """Whether ``cupy.sum(x16, dtype=float32, out=out16)`` works here (f32 accumulation, narrow output)."""
    key = id(cp)
    if key not in _SUM_F32_INTO_NARROW:
        try:
            x = cp.full((2, 3000), 0.1, cp.float16)
            out = cp.empty((2,), cp.float16)
            cp.sum(x, axis=1, dtype=cp.float32, out=out)
            ok = bool(abs(float(out[0]) - 3000 * float(np.float16(0.1))) < 1.0)
        except Exception:  # noqa: BLE001 - fall back to an f32 result buffer
            ok = False
        _SUM_F32_INTO_NARROW[key] = ok
    return _SUM_F32_INTO_NARROW[key]


def _cupy(cp, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    axis, keep = params["axis"], params["keepdims"]
    total = cp.sum
    if x.dtype == np.float32:
        return lambda: total(x, axis=axis, keepdims=keep, out=out)
    # f16/bf16: cupy.sum's own float16 path (CUB) accumulates in half precision; ask for f32 accumulation
    f32 = cp.float32
    if _sum_f32_into_narrow(cp):
        return lambda: total(x, axis=axis, dtype=f32, keepdims=keep, out=out)
    result = cp.empty(out.shape, f32)  # one extra write + read of the (reduced) output
    copyto = cp.copyto

    def run() -> None:
        total(x, axis=axis, dtype=f32, keepdims=keep, out=result)
        copyto(out, result, casting="same_kind")

    return run


IMPLS = {"torch": _torch, "torch-compile": _torch_compile, "cupy": _cupy}
