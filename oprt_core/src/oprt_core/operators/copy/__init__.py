"""copy: ``out = x``, laid out contiguously from any input strides (README.md: budget, bytes, flops, aliasing)."""

from __future__ import annotations

import numpy as np

from ...dtypes import DTYPES
from ...spec import Budget, OpSpec
from .._shared import rw_bytes, unary_case_sets

__all__ = ["SPEC", "GROUP", "ORDER", "ROLES"]

GROUP = "core"
ORDER = 10
ROLES: dict[str, dict] = {"bandwidth-probe": {}}  # oprt_core.operators.ROLES


def _reference(x: np.ndarray) -> np.ndarray:
    return x.copy()


SPEC = OpSpec(
    name="copy",
    doc="out = x; any input strides (transposed, stepped, broadcast, reversed).",
    api_doc="""Copy ``x`` into a new array (or into ``out``): the same values and dtype, laid out contiguously.

    Args:
        x: an array of f32, f16 or bf16 (numpy, or on a GPU backend its own arrays, CuPy arrays or torch
            tensors), any strides; a Python list or scalar is converted by ``numpy.asarray``, Python floats to
            f32 (ints and bools are refused).
    """,
    n_inputs=1,
    input_names=("x",),
    inplace=("x",),
    reference_fn=_reference,
    bytes_fn=rw_bytes,
    flops_fn=lambda case: 0,
    budgets={d: Budget(rtol=0.0, atol=0.0) for d in DTYPES},
    case_sets=unary_case_sets("copy"),
)
