"""silu_mul on the baseline backends (each impl in the signature its backend's ``add_op`` documents).

- torch: ``torch.mul(torch.nn.functional.silu(gate), up, out=out)``: the two kernels of eager SwiGLU, with a
  full-size temporary;
- torch-compile: ``silu(gate) * up``;
- cupy: a one-line ``cupy.ElementwiseKernel`` ``out = g / (1 + exp(-g)) * up`` in f32 (``g`` = gate in f32), one
  rounding to the dtype (CuPy has no silu); any strides;
- liger: ``LigerSiLUMulFunction.apply(gate, up)``: silu in f32, rounded to the dtype, times up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...baselines.liger_backend import LigerOp


def _torch(torch, inputs, out, params) -> Callable[[], Any]:
    gate, up = inputs
    silu, mul = torch.nn.functional.silu, torch.mul
    return lambda: mul(silu(gate), up, out=out)


def _torch_compile(torch, params) -> Callable[..., Any]:
    silu = torch.nn.functional.silu
    return lambda gate, up: silu(gate) * up


_KERNELS: dict[int, Any] = {}


def _cupy(cp, inputs, out, params) -> Callable[[], Any]:
    gate, up = inputs
    key = id(cp)
    if key not in _KERNELS:
        _KERNELS[key] = cp.ElementwiseKernel(
            "T gate, T up", "T out",
            "const float g = static_cast<float>(gate); "
            "out = static_cast<T>(g / (1.0f + expf(-g)) * static_cast<float>(up))",
            "oprt_silu_mul")
    kernel = _KERNELS[key]
    return lambda: kernel(gate, up, out)


IMPLS = {"torch": _torch, "torch-compile": _torch_compile, "cupy": _cupy,
         "liger": LigerOp("silu_mul", "LigerSiLUMulFunction")}
