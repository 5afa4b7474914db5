"""add_rms_norm: ``h = x + residual``, ``out = rms_norm(h) * weight``, two outputs (README.md: budget, bytes, flops,
aliasing, and why it is an op of its own)."""

from __future__ import annotations

import math

import numpy as np

from ...dtypes import DTYPES, DType
from ...errors import InvalidArgumentError
from ...spec import Budget, Case, OpSpec, Output
from .._norm import (
    DEFAULT_EPS,
    INPUT_DOC,
    check_norm,
    eps_param,
    norm_case,
    norm_case_sets,
    rms_norm_ref,
    rms_rtol,
    row_len,
    rows,
)
from .._shared import subnormal

__all__ = ["SPEC", "GROUP", "ORDER", "norm_case"]

GROUP = "model"
ORDER = 120


def _output_shape(shapes: list[tuple[int, ...]], params: dict) -> tuple[int, ...]:
    """output_shape_fn of both outputs: x's shape, once residual has it and weight is (n,)."""
    x, residual, weight = (tuple(s) for s in shapes)
    if residual != x:
        raise InvalidArgumentError(f"add_rms_norm: shape mismatch: residual has shape {residual}, expected x's shape "
                                   f"{x}")
    if weight != (x[-1],):
        raise InvalidArgumentError(f"add_rms_norm: shape mismatch: weight has shape {weight}, expected ({x[-1]},) for "
                                   f"x of shape {x} (one weight per element of the last axis)")
    return x


def _reference(x: np.ndarray, residual: np.ndarray, weight: np.ndarray,
               eps: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    h = x + residual
    return rms_norm_ref(h, weight, eps), h


def _out_tolerance(dt: DType, inputs64, ref, params) -> tuple[float, float]:
    return subnormal(dt), rms_rtol(dt, row_len(inputs64[0].shape)) + dt.eps


def _bytes(case: Case, dt: DType) -> int:
    """x, residual and weight read, out and h written."""
    return (2 * case.numel + sum(math.prod(t.shape) for t in case.inputs)) * dt.itemsize


SPEC = OpSpec(
    name="add_rms_norm",
    doc="h = x + residual; out = h / sqrt(mean(h**2 over the last axis) + eps) * weight (two outputs: out, h); "
        "weight has shape (x.shape[-1],).",
    api_doc=f"""RMSNorm with the residual add fused (the pre-norm transformer block): ``h = x + residual``, then
    ``out = h / sqrt(mean(h**2) + eps) * weight`` over the last axis; returns ``(out, h)``. Computed in f32, each
    output rounded once to ``x``'s dtype. ``ops.rms_norm(x, weight, eps, residual=residual)`` is the same call.

    Args:
        {INPUT_DOC}
        residual: an array of ``x``'s dtype and shape.
        weight: an array of ``x``'s dtype and shape ``(n,)``.
        eps: a finite float >= 0 added to the mean of squares.
    """,
    n_inputs=3,
    input_names=("x", "residual", "weight"),
    outputs=(
        Output("out", inplace=("x", "residual"), tolerance_fn=_out_tolerance,
               doc="the normalised h, times weight"),
        Output("h", inplace=("x", "residual"),
               tolerance_fn=lambda dt, inputs64, ref, params: (subnormal(dt), dt.eps),
               doc="x + residual (the residual stream of the next block)"),
    ),
    params=(eps_param(DEFAULT_EPS["add_rms_norm"]),),
    reference_fn=_reference,
    param_check_fn=check_norm("add_rms_norm"),
    output_shape_fn=_output_shape,
    bytes_fn=_bytes,
    flops_fn=lambda case: 5 * case.numel + 3 * rows(case),
    # the budget at n = 4096 (the outputs' tolerance_fns give each case's own)
    budgets={d: Budget(rms_rtol(DTYPES[d], 4096) + DTYPES[d].eps, subnormal(DTYPES[d])) for d in DTYPES},
    case_sets=norm_case_sets("add_rms_norm"),
    custom_case_fn=lambda shape, params: norm_case("add_rms_norm", shape, eps=params["eps"]),
)
