"""relu on the baseline backends (each impl in the signature its backend's ``add_op`` documents).

- torch: slope 0: ``torch.clamp_min(x, 0, out=out)``, the kernel ``torch.relu`` itself runs (aten's relu is
  ``clamp_min(self, 0)``; ``relu.out`` is only a generated wrapper that would compute into a temporary and copy);
  slope != 0: ``torch._C._nn.leaky_relu(x, slope, out=out)``, the kernel behind
  ``torch.nn.functional.leaky_relu``;
- torch-compile: ``torch.relu(x)``, or ``torch.nn.functional.leaky_relu(x, slope)``;
- cupy: slope 0: ``cupy.maximum(x, 0, out=out)``; slope != 0: a one-line ``cupy.ElementwiseKernel``
  ``y = v > 0 ? v : v * slope`` in f32 (CuPy has no relu).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def _torch(torch, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    slope = float(params["negative_slope"])
    if slope == 0.0:
        clamp_min = torch.clamp_min
        return lambda: clamp_min(x, 0, out=out)
    leaky = torch._C._nn.leaky_relu
    return lambda: leaky(x, slope, out=out)


def _torch_compile(torch, params) -> Callable[..., Any]:
    slope = float(params["negative_slope"])
    if slope == 0.0:
        return torch.relu
    leaky = torch.nn.functional.leaky_relu
    return lambda x: leaky(x, slope)


_LEAKY_KERNELS: dict[int, Any] = {}


def _leaky_kernel(cp) -> Any:
    key = id(cp)
    if key not in _LEAKY_KERNELS:
        _LEAKY_KERNELS[key] = cp.ElementwiseKernel(
            "T x, float32 slope", "T y",
            "const float v = static_cast<float>(x); y = static_cast<T>(v > 0.0f ? v : v * slope)",
            "oprt_leaky_relu")
    return _LEAKY_KERNELS[key]


def _cupy(cp, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    slope = float(params["negative_slope"])
    if slope == 0.0:
        maximum = cp.maximum
        return lambda: maximum(x, 0, out=out)  # a Python 0 takes x's dtype (weak scalar)
    kernel = _leaky_kernel(cp)
    s = np.float32(slope)
    return lambda: kernel(x, s, out)


_cupy.probe_params = ({"negative_slope": 0.5}, {"negative_slope": 0.0})  # type: ignore[attr-defined]  # both paths

IMPLS = {"torch": _torch, "torch-compile": _torch_compile, "cupy": _cupy}
