"""relu: ``out = x > 0 ? x : x * negative_slope`` (README.md: budget, bytes, flops, aliasing)."""

from __future__ import annotations

import numpy as np

from ...dtypes import DTYPES, DType
from ...spec import Budget, Case, OpSpec, Param
from .._shared import TINY32, rw_bytes, unary_case, unary_case_sets

__all__ = ["SPEC", "GROUP", "ORDER"]

GROUP = "core"
ORDER = 30


def _reference(x: np.ndarray, negative_slope: float = 0.0) -> np.ndarray:
    return np.where(x > 0, x, x * negative_slope)


def _tolerance(dt: DType, inputs64, ref, params) -> tuple[float, float]:
    if params["negative_slope"] == 0.0:
        return 0.0, 0.0
    # x*slope can land in the dtype's subnormal range (f16: below 6.1e-5), where one rounding errs by
    # up to half the smallest subnormal, so relative error means nothing there.
    return max(TINY32, dt.smallest_subnormal), dt.eps


def _case_sets() -> dict[str, list[Case]]:
    base = unary_case_sets("relu", (("negative_slope", 0.0),))
    leaky = (("negative_slope", 0.1),)
    base["smoke"].append(unary_case("relu", (1000,), params=leaky, name="1000-leaky"))
    base["default"].append(unary_case("relu", (1 << 24,), params=leaky, name="16777216-leaky"))
    base["edge"].append(unary_case("relu", (257, 3), "transposed", leaky, name="257x3-transposed-leaky"))
    base["large"] = [c for c in base["large"] if c.inputs[0].layout == "contiguous"]
    return base


SPEC = OpSpec(
    name="relu",
    doc="out = x > 0 ? x : x * negative_slope (leaky relu when negative_slope != 0).",
    api_doc="""Leaky ReLU elementwise: ``x`` where ``x > 0``, else ``x * negative_slope``; with the default slope 0 the
    negative inputs (and -0.0) give +0.0, as ``torch.relu`` does; NaN stays NaN.

    Args:
        x: an array of f32, f16 or bf16 (numpy, or on a GPU backend its own arrays, CuPy arrays or torch
            tensors), any strides; a Python list or scalar is converted by ``numpy.asarray``, Python floats to
            f32 (ints and bools are refused).
        negative_slope: a finite float (or int) multiplying the negative inputs.
    """,
    n_inputs=1,
    input_names=("x",),
    inplace=("x",),
    params=(Param("negative_slope", (float, int), 0.0, "slope applied to negative inputs", ctype="float"),),
    reference_fn=_reference,
    bytes_fn=rw_bytes,
    flops_fn=lambda case: case.numel,
    budgets={d: Budget(DTYPES[d].eps, 0.0) for d in DTYPES},
    tolerance_fn=_tolerance,
    case_sets=_case_sets(),
    custom_case_fn=lambda shape, params: unary_case("relu", shape, params=tuple(sorted(params.items()))),
)
