"""rms_norm: ``out = x / sqrt(mean(x**2) + eps) * weight`` over the last axis (README.md: budget, bytes, flops).

:func:`api` makes ``oprt_core.ops.rms_norm``: the function made from :data:`SPEC`, with a ``residual`` argument
that calls add_rms_norm, the fused residual form."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

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
    rms_norm_ref,
    rms_rtol,
    row_len,
    rows,
)
from .._shared import subnormal

__all__ = ["SPEC", "GROUP", "ORDER", "norm_case", "api"]

GROUP = "model"
ORDER = 110


def _tolerance(dt: DType, inputs64, ref, params) -> tuple[float, float]:
    return subnormal(dt), rms_rtol(dt, row_len(inputs64[0].shape))


SPEC = OpSpec(
    name="rms_norm",
    doc="out = x / sqrt(mean(x**2 over the last axis) + eps) * weight; weight has shape (x.shape[-1],).",
    api_doc=f"""RMSNorm over the last axis: ``x / sqrt(mean(x**2) + eps) * weight``, each row on its own; computed in
    f32 and rounded once to ``x``'s dtype.

    Args:
        {INPUT_DOC}
        weight: an array of ``x``'s dtype and shape ``(n,)``.
        eps: a finite float >= 0 added to the mean of squares.
    """,
    n_inputs=2,
    input_names=("x", "weight"),
    params=(eps_param(DEFAULT_EPS["rms_norm"]),),
    reference_fn=rms_norm_ref,
    param_check_fn=check_norm("rms_norm"),
    output_shape_fn=norm_output_shape("rms_norm"),
    bytes_fn=norm_bytes,
    flops_fn=lambda case: 4 * case.numel + 3 * rows(case),
    # the budget at n = 4096 (tolerance_fn gives each case's own)
    budgets={d: Budget(rms_rtol(DTYPES[d], 4096), subnormal(DTYPES[d])) for d in DTYPES},
    tolerance_fn=_tolerance,
    case_sets=norm_case_sets("rms_norm"),
    custom_case_fn=lambda shape, params: norm_case("rms_norm", shape, eps=params["eps"]),
)


def api(functions: Mapping[str, Callable[..., Any]]) -> Callable[..., Any]:
    """``oprt_core.ops.rms_norm``, from the op functions made from the specs (``functions``, looked up when called):
    ``functions["rms_norm"]`` without ``residual``, ``functions["add_rms_norm"]`` with it."""
    alone = functions["rms_norm"]

    def rms_norm(x: Any, weight: Any, eps: float = SPEC.params[0].default, residual: Any = None, *,
                 backend: str = "numpy", out: Any | None = None) -> Any:
        """``residual`` None: rms_norm (below); else the fused residual form, :func:`add_rms_norm` ``(x, residual,
        weight, eps)``, which returns ``(out, h)`` with ``h = x + residual`` (``out``: a tuple of two arrays)."""
        if residual is None:
            return alone(x, weight, eps, backend=backend, out=out)
        return functions["add_rms_norm"](x, residual, weight, eps, backend=backend, out=out)

    rms_norm.__doc__ = (alone.__doc__ or "").replace(_EPS_DOC, _EPS_DOC + _RESIDUAL_DOC, 1)
    return rms_norm


# the ``residual`` argument's entry in the Args of the generated function's doc, after eps's
_EPS_DOC = "        eps: a finite float >= 0 added to the mean of squares.\n"
_RESIDUAL_DOC = (
    "        residual: None, or an array of ``x``'s dtype and shape: then the fused residual form, ``add_rms_norm(x,\n"
    "            residual, weight, eps)``, returning ``(out, h)`` with ``h = x + residual`` (``out`` a tuple of two\n"
    "            arrays).\n")
