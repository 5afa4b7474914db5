"""What several built-in ops share: float constants, the dtypes' floor of relative error, the unary and axis cases
of the core ops, and the C value of ``axis=None``."""

from __future__ import annotations

import numpy as np

from .. import model_shapes
from ..dtypes import DTYPES, DType
from ..errors import InvalidArgumentError
from ..spec import Case, TensorCase, format_shape

__all__ = ["EPS32", "TINY32", "OPRT_AXIS_ALL", "subnormal", "unary_case", "unary_case_sets", "rw_bytes",
           "check_axis", "axis_case"]

EPS32 = DTYPES["f32"].eps
TINY32 = float(np.finfo(np.float32).tiny)
OPRT_AXIS_ALL = -128  # oprt.h: the C value of axis=None (reduce over all)


def subnormal(dt: DType) -> float:
    """The dtype's smallest subnormal (f32: its smallest normal, what a flush-to-zero kernel can still give)."""
    return TINY32 if dt.name == "f32" else dt.smallest_subnormal


def unary_case(op: str, shape: tuple[int, ...], layout: str = "contiguous", params=(), name: str | None = None,
               data: str = "uniform") -> Case:
    """A case of a one-input op: x of ``shape`` laid out as ``layout``; ``name`` default: from the shape."""
    label = name or (format_shape(shape) + ("" if layout == "contiguous" else f"-{layout}"))
    return Case(op, label, (TensorCase(tuple(shape), layout),), tuple(params), data)


def unary_case_sets(op: str, params=()) -> dict[str, list[Case]]:
    """copy's case sets, for ``op`` with ``params`` (relu's start from them)."""
    c = lambda shape, layout="contiguous", **kw: unary_case(op, shape, layout, params, **kw)  # noqa: E731
    return {
        "smoke": [c((1000,)), c((33, 65), "transposed")],
        "default": [c((1 << 20,)), c((1 << 24,)), c((4096, 4096)), c((4096, 4096), "transposed")],
        "large": [c((1 << 27,)), c((8192, 8192), "transposed"), c((16384, 16384), "transposed")],
        "edge": [
            c((1,)), c((0,)), c(()), c((7,)), c((1000003,)), c((3, 5, 7)), c((0, 5)),
            c((37, 129), "transposed"), c((129, 255), "step2"), c((999,), "offset1"), c((513, 3), "reversed"),
            c((5, 31), "broadcast0"), c((2, 3, 5, 7, 11), "transposed"),
        ],
        "models": [c(m.shape, name=m.name) for m in model_shapes.ELEMENTWISE],
    }


def rw_bytes(case: Case, dt: DType) -> int:
    """One read and one write of every element (an elementwise op of one input)."""
    return 2 * case.numel * dt.itemsize


def check_axis(op: str, shape: tuple[int, ...], axis: int | None, allow_none: bool) -> None:
    """InvalidArgumentError unless ``axis`` is an axis of ``shape`` (or None where ``allow_none``)."""
    if axis is None:
        if allow_none:
            return
        raise InvalidArgumentError(f"{op}: axis must be an int")
    nd = len(shape)
    if not -nd <= axis < nd:
        valid = f"{-nd}..{nd - 1}" if nd else "none (0-d input)"
        raise InvalidArgumentError(
            f"{op}: axis {axis} is out of range for a {nd}-d input of shape {shape} (valid: {valid}"
            + (", or None for all" if allow_none else "") + ")")


def axis_case(shape, axis=-1, layout="contiguous", keepdims=False, data="uniform", op="reduce_sum",
              name: str | None = None) -> Case:
    """A case of reduce_sum (params axis, keepdims) or softmax (``op``; param axis) over ``axis`` of x."""
    ax = "all" if axis is None else str(axis)
    label = f"{format_shape(shape)}-axis{ax}" + ("" if layout == "contiguous" else f"-{layout}")
    label += "-keepdims" if keepdims else ""
    params = (("axis", axis), ("keepdims", keepdims)) if op == "reduce_sum" else (("axis", axis),)
    if data != "uniform":
        label += f"-{data}"
    label = name or label
    return Case(op, label, (TensorCase(tuple(shape), layout),), params, data)
