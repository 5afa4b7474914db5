"""rms_norm on the baseline backends (each impl in the signature its backend's ``add_op`` documents).

- torch: ``out.copy_(torch.nn.functional.rms_norm(x, (n,), weight, eps))`` (torch >= 2.4: f32 math inside for
  f16/bf16); where it is missing, the formula in f32, ``x32 * rsqrt(mean(x32**2) + eps) * weight32``, rounded once by
  the copy: no ``out=`` variant, so one extra write and read of the output;
- torch-compile: the same function (:func:`torch_rms_norm_fn`);
- liger: ``LigerRMSNormFunction.apply(x, weight, eps)``: casting mode ``llama`` (its default: the sum of squares and
  rstd in f32, ``x * rstd`` rounded to the dtype before the weight multiply, as torch's), offset 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...baselines.liger_backend import LigerOp

__all__ = ["IMPLS", "torch_rms_norm_fn"]


def torch_rms_norm_fn(torch, params) -> Callable[..., Any]:
    """``(x, weight) -> y``: ``torch.nn.functional.rms_norm`` (torch >= 2.4: f32 math inside for f16/bf16), else the
    formula in f32, rounded once by the caller's ``copy_`` (the reference's order)."""
    eps = float(params["eps"])
    rms_norm = getattr(torch.nn.functional, "rms_norm", None)
    if rms_norm is not None:
        return lambda x, w: rms_norm(x, (int(x.shape[-1]),), w, eps)
    rsqrt = torch.rsqrt

    def formula(x, w):
        xf = x.float()
        return xf * rsqrt(xf.square().mean(-1, keepdim=True) + eps) * w.float()

    return formula


def _torch(torch, inputs, out, params) -> Callable[[], Any]:
    x, w = inputs
    rms_norm = torch_rms_norm_fn(torch, params)
    return lambda: out.copy_(rms_norm(x, w))  # no out= variant: one extra write and read of the output


IMPLS = {"torch": _torch, "torch-compile": torch_rms_norm_fn, "liger": LigerOp("rms_norm", "LigerRMSNormFunction")}
