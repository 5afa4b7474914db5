"""silu_mul: ``out = gate / (1 + exp(-gate)) * up``, the SwiGLU gate (README.md: budget, bytes, flops, aliasing)."""

from __future__ import annotations

import numpy as np

from ... import model_shapes
from ...dtypes import DTYPES, DType
from ...errors import InvalidArgumentError
from ...spec import Budget, Case, OpSpec, TensorCase, format_shape
from .._shared import EPS32, subnormal

__all__ = ["SPEC", "GROUP", "ORDER", "silu_mul_case"]

GROUP = "model"
ORDER = 140


def _check(shapes: list[tuple[int, ...]], params: dict) -> None:
    gate, up = shapes
    if tuple(gate) != tuple(up):
        raise InvalidArgumentError(f"silu_mul: shape mismatch: gate has shape {tuple(gate)} and up {tuple(up)}; "
                                   "they must be equal (for one packed [..., 2d] tensor t pass t[..., :d], t[..., d:])")


def _reference(gate: np.ndarray, up: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # exp(-gate) overflows float64 only for gate < -709: sigmoid is 0 there
        return gate / (1.0 + np.exp(-gate)) * up


def _atol(dt: DType) -> float:
    return max(subnormal(dt), 3e-37)


def silu_mul_case(shape: tuple[int, ...], layout: str = "contiguous", up_layout: str | None = None,
                  name: str | None = None) -> Case:
    """A case of silu_mul: gate of ``shape`` laid out as ``layout``, up of the same shape (``up_layout``, default
    ``layout``); ``name`` the case's name (default: from its shape and layouts)."""
    shape = tuple(shape)
    up_layout = layout if up_layout is None else up_layout
    label = format_shape(shape) + ("" if layout == "contiguous" else f"-{layout}")
    if up_layout != layout:
        label += f"-up_{up_layout}"
    label = name or label
    return Case("silu_mul", label, (TensorCase(shape, layout), TensorCase(shape, up_layout)))


def _case_sets() -> dict[str, list[Case]]:
    c = silu_mul_case
    return {
        "smoke": [c((4, 64)), c((3, 5, 33), "step2")],
        # tokens x intermediate size (Llama 7B 11008, Mistral / Llama 3 8B 14336)
        "default": [c((4096, 4096)), c((2048, 14336)), c((4096, 11008)), c((16384, 8192))],
        "large": [c((16384, 14336)), c((32768, 8192))],
        "edge": [
            c((1,)), c((0,)), c((7,)), c((0, 5)), c((1000003,)), c((3, 5, 7)), c((37, 129), "transposed"),
            c((129, 255), "step2"), c((999,), "offset1"), c((17, 31), "reversed"), c((5, 31), "broadcast0"),
            c((33, 65), "contiguous", "step2"),
        ],
        # MLP and MoE expert activations of published models at 1, 128 and 4096 tokens (oprt_core.model_shapes)
        "models": [c(m.shape, name=m.name) for m in model_shapes.ELEMENTWISE if m.kind in ("mlp", "expert")],
    }


SPEC = OpSpec(
    name="silu_mul",
    doc="out = silu(gate) * up = gate / (1 + exp(-gate)) * up, elementwise (the SwiGLU gate); any strides.",
    api_doc="""The SwiGLU gate: ``silu(gate) * up = gate / (1 + exp(-gate)) * up`` elementwise; computed in f32 and
    rounded once to the inputs' dtype. For one packed tensor ``t`` of shape ``(..., 2d)`` (gate and up
    projections side by side) pass ``t[..., :d], t[..., d:]``: strided views, nothing is copied.

    Args:
        gate, up: arrays of one dtype (f32, f16 or bf16) and one shape, any strides; a Python list is converted by
            ``numpy.asarray``, Python floats to f32.
    """,
    n_inputs=2,
    input_names=("gate", "up"),
    inplace=("gate", "up"),
    reference_fn=_reference,
    param_check_fn=_check,
    bytes_fn=lambda case, dt: 3 * case.numel * dt.itemsize,
    flops_fn=lambda case: 5 * case.numel,
    budgets={d: Budget(DTYPES[d].eps + 8 * EPS32, _atol(DTYPES[d])) for d in DTYPES},
    tolerance_fn=lambda dt, inputs64, ref, params: (_atol(dt), dt.eps + 8 * EPS32),
    case_sets=_case_sets(),
    custom_case_fn=lambda shape, params: silu_mul_case(shape),
)
