"""layer_norm on the baseline backends (each impl in the signature its backend's ``add_op`` documents).

- torch: ``torch.ops.aten.native_layer_norm.out(x, (n,), weight, bias, eps, out0=out, ...)`` (the kernel behind
  ``torch.nn.functional.layer_norm``; the per-row mean and rstd go to small buffers allocated once); where that
  overload is missing, ``out.copy_(torch.nn.functional.layer_norm(...))``;
- torch-compile: ``torch.nn.functional.layer_norm(x, (n,), weight, bias, eps)``;
- liger: ``LigerLayerNormFunction.apply(x, weight, bias, eps)`` (f32 math).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...baselines.liger_backend import LigerOp


def _torch(torch, inputs, out, params) -> Callable[[], Any]:
    x, w, b = inputs
    shape, eps = (int(x.shape[-1]),), float(params["eps"])
    overload = getattr(getattr(torch.ops.aten, "native_layer_norm", None), "out", None)
    if overload is None:
        layer_norm = torch.nn.functional.layer_norm
        return lambda: out.copy_(layer_norm(x, shape, w, b, eps))
    # the stats buffers as this torch's kernel makes them (shape and dtype vary by device and version)
    _, mean, rstd = (torch.empty_like(t) for t in torch.native_layer_norm(x, shape, w, b, eps))
    return lambda: overload(x, shape, w, b, eps, out0=out, out1=mean, out2=rstd)


def _torch_compile(torch, params) -> Callable[..., Any]:
    eps, layer_norm = float(params["eps"]), torch.nn.functional.layer_norm
    return lambda x, w, b: layer_norm(x, (int(x.shape[-1]),), w, b, eps)


IMPLS = {"torch": _torch, "torch-compile": _torch_compile,
         "liger": LigerOp("layer_norm", "LigerLayerNormFunction")}
