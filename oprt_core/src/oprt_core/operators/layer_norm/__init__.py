"""layer_norm: ``out = (x - mean) / sqrt(var + eps) * weight + bias`` over the last axis (README.md: budget, bytes,
flops)."""

from __future__ import annotations

import math

import numpy as np

from ...dtypes import DTYPES, DType
from ...spec import Budget, OpSpec
from .._norm import (
    DEFAULT_EPS,
    INPUT_DOC,
    check_norm,
    eps_param,
    norm_bytes,
    norm_case,
    norm_case_sets,
    norm_output_shape,
    row_len,
    rows,
)
from .._shared import EPS32, subnormal

__all__ = ["SPEC", "GROUP", "ORDER", "norm_case"]

GROUP = "model"
ORDER = 130


def _parts(x: np.ndarray, weight: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(p, 1 / sqrt(var + eps)) with p = (x - mean) / sqrt(var + eps) * weight, in float64."""
    mean = np.mean(x, axis=-1, keepdims=True)
    d = x - mean
    with np.errstate(divide="ignore", invalid="ignore"):  # var + eps == 0 (a constant row, eps 0): NaN, as torch
        r = 1.0 / np.sqrt(np.mean(d * d, axis=-1, keepdims=True) + eps)
        return d * r * weight, r


def _reference(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    if x.size == 0:
        return np.empty(x.shape, np.float64)
    return _parts(x, weight, eps)[0] + bias


def _tolerance(dt: DType, inputs64, ref, params) -> tuple[np.ndarray, float]:
    x, weight, bias = inputs64
    n = row_len(x.shape)
    p, r = _parts(x, weight, params["eps"])
    lg = math.log2(n + 1)
    mean_abs = np.mean(np.abs(x), axis=-1, keepdims=True)
    atol = (np.abs(weight) * r * (lg * EPS32 * mean_abs) + np.abs(p) * ((lg / 2 + 6) * EPS32)
            + np.abs(bias) * EPS32 + subnormal(dt))
    return atol, dt.eps


SPEC = OpSpec(
    name="layer_norm",
    doc="out = (x - mean) / sqrt(var + eps) * weight + bias over the last axis (biased variance); weight and bias "
        "have shape (x.shape[-1],).",
    api_doc=f"""LayerNorm over the last axis: ``(x - mean) / sqrt(var + eps) * weight + bias`` with the biased
    variance (as ``torch.nn.functional.layer_norm``), each row on its own; computed in f32 and rounded once to
    ``x``'s dtype.

    Args:
        {INPUT_DOC}
        weight: an array of ``x``'s dtype and shape ``(n,)``.
        bias: an array of ``x``'s dtype and shape ``(n,)``.
        eps: a finite float >= 0 added to the variance.
    """,
    n_inputs=3,
    input_names=("x", "weight", "bias"),
    params=(eps_param(DEFAULT_EPS["layer_norm"]),),
    reference_fn=_reference,
    param_check_fn=check_norm("layer_norm"),
    output_shape_fn=norm_output_shape("layer_norm"),
    bytes_fn=norm_bytes,
    flops_fn=lambda case: 7 * case.numel + 4 * rows(case),
    # tolerance_fn gives each element its own atol
    budgets={d: Budget(DTYPES[d].eps, subnormal(DTYPES[d])) for d in DTYPES},
    tolerance_fn=_tolerance,
    case_sets=norm_case_sets("layer_norm"),
    custom_case_fn=lambda shape, params: norm_case("layer_norm", shape, eps=params["eps"]),
)
