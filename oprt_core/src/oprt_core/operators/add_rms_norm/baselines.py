"""add_rms_norm on the baseline backends (each impl in the signature its backend's ``add_op`` documents).

- torch: ``torch.add(x, residual, out=h)``, then rms_norm of h (rms_norm's torch call) into out: eager torch's
  pre-norm block, h written and read again;
- torch-compile: ``h = x + residual`` rounded to the dtype, then rms_norm of h, in one graph;
- liger: ``LigerFusedAddRMSNormFunction.apply(x, residual, weight, eps)`` (``liger_kernel.ops.fused_add_rms_norm``,
  in Liger-Kernel releases that have it; unavailable in older ones): returns (out, h), both allocated into oprt's
  outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...baselines.liger_backend import LigerOp
from ..rms_norm.baselines import torch_rms_norm_fn


def _torch(torch, inputs, outs, params) -> Callable[[], Any]:
    x, r, w = inputs
    y, h = outs
    rms_norm, add = torch_rms_norm_fn(torch, params), torch.add

    def run() -> Any:
        add(x, r, out=h)
        return y.copy_(rms_norm(h, w))

    return run


def _torch_compile(torch, params) -> Callable[..., Any]:
    """``(x, residual, weight) -> (out, h)``: h = x + residual rounded to the dtype, then rms_norm of h."""
    rms_norm = torch_rms_norm_fn(torch, params)

    def fn(x, r, w):
        h = x + r
        return rms_norm(h, w), h

    return fn


IMPLS = {"torch": _torch, "torch-compile": _torch_compile,
         "liger": LigerOp("add_rms_norm", "LigerFusedAddRMSNormFunction",
                          module="liger_kernel.ops.fused_add_rms_norm")}
