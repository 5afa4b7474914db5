"""softmax on the baseline backends (each impl in the signature its backend's ``add_op`` documents).

- torch: ``torch.ops.aten._softmax.out(x, dim, False, out=out)``, the kernel behind ``torch.softmax``; where that
  overload is missing, ``out.copy_(torch.softmax(x, dim))`` (one extra read and write of the output). torch's
  softmax kernel makes a non-contiguous input contiguous first, as ``torch.softmax`` does for its users;
- torch-compile: ``torch.softmax(x, dim)``;
- cupy: CuPy has no softmax kernel; ``cupyx.scipy.special.softmax`` is ``e = exp(x - amax(x)); e / sum(e)`` in the
  input dtype with three full-size temporaries. The backend runs the same expression in f32 into a workspace
  allocated once by ``prepare``: ``amax`` (small, into a preallocated buffer), ``subtract(x, m, dtype=float32,
  out=w)``, ``exp(w, out=w)``, ``sum(w, out=s)``, ``divide(w, s, out=out)``: 5 kernels moving ~5x the ideal bytes
  (x read twice, the f32 workspace written twice and read three times);
- liger: ``LigerSoftmaxFunction.apply(x)``: the last axis only (other axes: unsupported).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...baselines.liger_backend import LigerOp, row_refusal


def _torch(torch, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    dim = params["axis"]
    softmax_out = getattr(getattr(torch.ops.aten, "_softmax", None), "out", None)
    if softmax_out is not None:
        return lambda: softmax_out(x, dim, False, out=out)
    softmax = torch.softmax
    return lambda: out.copy_(softmax(x, dim))  # no out= in this torch: one extra write + read of the output


def _torch_compile(torch, params) -> Callable[..., Any]:
    return lambda x: torch.softmax(x, params["axis"])


def _cupy(cp, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    if x.size == 0:
        return lambda: None  # nothing to write (and amax of an empty axis has no identity)
    axis = params["axis"]
    ax = axis % x.ndim
    red_shape = tuple(1 if i == ax else n for i, n in enumerate(x.shape))
    f32 = cp.float32
    work = cp.empty(x.shape, f32)  # the workspace, allocated once
    m = cp.empty(red_shape, x.dtype)
    s = cp.empty(red_shape, f32)
    amax, subtract, exp, total, divide = cp.amax, cp.subtract, cp.exp, cp.sum, cp.divide

    def run() -> None:
        amax(x, axis=axis, keepdims=True, out=m)
        subtract(x, m, out=work, dtype=f32)
        exp(work, out=work)
        total(work, axis=axis, keepdims=True, out=s)
        divide(work, s, out=out)

    return run


def _liger_rows(op: str, shape: Sequence[int], params: Mapping[str, Any]) -> str | None:
    """Liger's softmax: over the last axis only, a row in one Triton block."""
    shape = tuple(shape)
    if shape and params.get("axis", -1) % len(shape) != len(shape) - 1:
        return f"Liger's softmax is over the last axis only (axis {params.get('axis')} of a {len(shape)}-d input)"
    return row_refusal(op, shape, params)


IMPLS = {"torch": _torch, "torch-compile": _torch_compile, "cupy": _cupy,
         "liger": LigerOp("softmax", "LigerSoftmaxFunction", case_refusal=_liger_rows)}
