"""vector_add: ``out = a + b`` with numpy broadcasting (README.md: budget, bytes, flops, aliasing)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ... import model_shapes
from ...dtypes import DTYPES, DType
from ...errors import InvalidArgumentError
from ...model_shapes import ModelShape, tokens
from ...spec import Budget, Case, OpSpec, TensorCase, format_shape

__all__ = ["SPEC", "GROUP", "ORDER", "BIAS_SHAPES"]

GROUP = "core"
ORDER = 20

#: a bias broadcast onto each model activation: a row of ``width`` onto every token, a per-channel (C, 1, 1) onto a
#: feature map (the ``models`` set's broadcast adds; its other adds are of two model_shapes.ELEMENTWISE tensors)
BIAS_SHAPES: tuple[ModelShape, ...] = (
    *(m for w in model_shapes.WIDTHS for m in tokens(*w, model_shapes.WIDTH_TOKENS, bias=True)),
    *(ModelShape(m.name.replace("/b64", "+bias/b64"), m.shape, m.source, "conv", bias=(m.shape[1], 1, 1))
      for m in model_shapes.ELEMENTWISE if m.kind == "conv"),
)


def _broadcast_shape(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        # vector_add's inputs by name (b against a); any other count of shapes as they are
        what = (f"b has shape {tuple(shapes[1])}, a has {tuple(shapes[0])}: shape mismatch, they" if len(shapes) == 2
                else f"shape mismatch: {' and '.join(map(str, shapes))}")
        raise InvalidArgumentError(f"vector_add: {what} do not broadcast together") from None


def _bytes(case: Case, dt: DType) -> int:
    a, b = (t.shape for t in case.inputs)
    return (math.prod(a) + math.prod(b) + math.prod(_broadcast_shape([a, b]))) * dt.itemsize


def _case(a: tuple, b: tuple, la: str = "contiguous", lb: str = "contiguous", name: str | None = None) -> Case:
    label = name or "+".join(format_shape(s) + ("" if layout == "contiguous" else f"-{layout}")
                             for s, layout in ((a, la), (b, lb)))
    if a == b and la == lb == "contiguous" and name is None:
        label = format_shape(a)
    return Case("vector_add", label, (TensorCase(a, la), TensorCase(b, lb)))


def _check_broadcast(shapes: list[tuple[int, ...]]) -> None:
    """InvalidArgumentError unless the shapes broadcast together."""
    _broadcast_shape(shapes)


SPEC = OpSpec(
    name="vector_add",
    doc="out = a + b with numpy broadcasting; any strides.",
    api_doc="""``a + b`` elementwise with numpy broadcasting, computed in f32 and rounded once to the inputs' dtype.

    Args:
        a, b: arrays of one dtype (f32, f16 or bf16), any strides, shapes that broadcast together (the
            output has the broadcast shape); a Python list or scalar is converted by ``numpy.asarray``, Python
            floats to f32.
    """,
    n_inputs=2,
    input_names=("a", "b"),
    inplace=("a", "b"),
    reference_fn=lambda a, b: a + b,
    output_shape_fn=lambda shapes, params: _broadcast_shape(shapes),
    param_check_fn=lambda shapes, params: _check_broadcast(shapes),
    bytes_fn=_bytes,
    flops_fn=lambda case: math.prod(_broadcast_shape([t.shape for t in case.inputs])),
    budgets={d: Budget(DTYPES[d].eps, 0.0) for d in DTYPES},
    case_sets={
        "smoke": [_case((1000,), (1000,)), _case((17, 33), (33,))],
        "default": [_case((1 << 20,), (1 << 20,)), _case((1 << 24,), (1 << 24,)),
                    _case((4096, 4096), (4096, 4096)), _case((4096, 4096), (4096,))],
        "large": [_case((1 << 27,), (1 << 27,))],
        "edge": [
            _case((1,), (1,)), _case((0,), (0,)), _case((), ()), _case((7,), (7,)),
            _case((1000003,), (1000003,)), _case((33, 65), (33, 65), "transposed", "contiguous"),
            _case((129, 255), (129, 255), "step2", "transposed"),
            _case((999,), (999,), "offset1", "offset1"),
            _case((37, 129), (129,)), _case((37, 1), (1, 129)), _case((5, 1, 7), (3, 1)),
            _case((4, 31), (4, 31), "broadcast0", "reversed"), _case((0, 3), (3,)),
        ],
        # a residual add of two such tensors, and a bias broadcast onto each token (or each channel's map)
        "models": [_case(m.shape, m.shape, name=m.name) for m in model_shapes.ELEMENTWISE]
        + [_case(m.shape, m.bias, name=m.name) for m in BIAS_SHAPES if m.bias is not None],
    },
)
