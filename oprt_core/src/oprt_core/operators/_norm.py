"""What the norms (rms_norm, add_rms_norm, layer_norm) share: their params and shape checks, the float64 RMSNorm,
rms_norm's rtol, bytes, and their cases (:func:`norm_case`, the case sets)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .. import model_shapes
from ..dtypes import DType
from ..errors import InvalidArgumentError
from ..spec import Case, Param, TensorCase, format_shape
from ._shared import EPS32

__all__ = ["DEFAULT_EPS", "INPUT_DOC", "check_norm", "norm_output_shape", "eps_param", "rms_norm_ref", "rms_rtol",
           "row_len", "rows", "norm_bytes", "norm_case", "norm_case_sets"]

#: Each norm's default eps.
DEFAULT_EPS = {"rms_norm": 1e-6, "add_rms_norm": 1e-6, "layer_norm": 1e-5}

#: The ``x`` entry of a norm's ``api_doc``.
INPUT_DOC = """x: an array of f32, f16 or bf16 (numpy, or on a GPU backend its own arrays, CuPy arrays or torch
            tensors) of shape ``(..., n)``, at least 1-d, any strides; a Python list is converted by
            ``numpy.asarray``, Python floats to f32."""


def row_len(shape: tuple[int, ...]) -> int:
    return shape[-1] if shape else 1


def check_norm(op: str) -> Callable[[list[tuple[int, ...]], dict], None]:
    """param_check_fn of a norm: x at least 1-d, eps >= 0 (the vectors' shapes: ``norm_output_shape``)."""

    def check(shapes: list[tuple[int, ...]], params: dict) -> None:
        if not shapes[0]:
            raise InvalidArgumentError(f"{op}: x must have at least 1 dim (rows along its last axis), got a 0-d input")
        if params["eps"] < 0:
            raise InvalidArgumentError(f"{op}: eps must be >= 0, got {params['eps']!r}")

    return check


def norm_output_shape(op: str) -> Callable[[list[tuple[int, ...]], dict], tuple[int, ...]]:
    """output_shape_fn of a norm: x's shape, once each input after x (weight, bias) has shape (n,)."""

    def shape_of(shapes: list[tuple[int, ...]], params: dict) -> tuple[int, ...]:
        x = tuple(shapes[0])
        for name, shape in zip(("weight", "bias"), shapes[1:]):
            if tuple(shape) != (x[-1],):
                raise InvalidArgumentError(
                    f"{op}: shape mismatch: {name} has shape {tuple(shape)}, expected ({x[-1]},) for x of shape "
                    f"{x} (one {name} per element of the last axis)")
        return x

    return shape_of


def eps_param(default: float) -> Param:
    return Param("eps", (float, int), default, "added to the variance (mean of squares) before the square root",
                 ctype="float")


def rms_norm_ref(x: np.ndarray, weight: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """RMSNorm in float64 (rms_norm's reference; add_rms_norm's of its h)."""
    if x.size == 0:
        return np.empty(x.shape, np.float64)
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def rms_rtol(dt: DType, n: int) -> float:
    """rms_norm's rtol for rows of ``n`` (rms_norm/README.md)."""
    return dt.eps + (math.log2(n + 1) / 2 + 4) * EPS32


def rows(case: Case) -> int:
    x = case.inputs[0].shape
    return math.prod(x[:-1]) if x else 1


def norm_bytes(case: Case, dt: DType) -> int:
    """x read and out written, and each (n,) vector read."""
    return (2 * case.numel + sum(math.prod(t.shape) for t in case.inputs[1:])) * dt.itemsize


def norm_case(op: str, shape: tuple[int, ...], layout: str = "contiguous", eps: float | None = None,
              weight_layout: str = "contiguous", data: str = "uniform", name: str | None = None) -> Case:
    """A case of rms_norm, add_rms_norm or layer_norm: x (and add_rms_norm's residual) of ``shape`` laid out as
    ``layout``, weight (and bias) of shape ``(shape[-1],)``; ``eps`` None: the op's default; ``name`` the case's
    name (default: from its shape)."""
    shape = tuple(shape)
    default = DEFAULT_EPS[op]
    eps = default if eps is None else eps
    label = name or (format_shape(shape) + ("" if layout == "contiguous" else f"-{layout}")
                     + ("" if weight_layout == "contiguous" else f"-weight_{weight_layout}")
                     + ("" if eps == default else f"-eps{eps:g}"))
    vec = TensorCase(shape[-1:], weight_layout)
    x = TensorCase(shape, layout)
    tensors = (x, vec) if op == "rms_norm" else (x, x, vec) if op == "add_rms_norm" else (x, vec, vec)
    return Case(op, label, tensors, (("eps", eps),), data)


def norm_case_sets(op: str) -> dict[str, list[Case]]:
    c = lambda shape, layout="contiguous", **kw: norm_case(op, shape, layout, **kw)  # noqa: E731
    return {
        "smoke": [c((4, 64)), c((3, 5, 33), eps=0.1), c((17, 65), "transposed")],
        # tokens x hidden size of real models (Llama 7B 4096, 13B 5120, 70B 8192; an MLP width 14336)
        "default": [c((4096, 4096)), c((8192, 5120)), c((4096, 8192)), c((2048, 14336)), c((16384, 8192))],
        "large": [c((32768, 4096)), c((32768, 8192)), c((16384, 14336))],
        "edge": [
            c((1,)), c((7,)), c((1, 1)), c((7, 1)), c((0, 5)), c((5, 0)), c((3, 1001)), c((1, 4099)),
            c((2, 3, 5, 33)), c((37, 129), "transposed"), c((129, 255), "step2"), c((999,), "offset1"),
            c((17, 31), "reversed"), c((5, 31), "broadcast0"), c((33, 65), weight_layout="step2"),
            c((19, 77), weight_layout="reversed"), c((9, 300), eps=0), c((2, 20000)),
        ],
        # the hidden states of published models at 1, 128 and 4096 tokens (oprt_core.model_shapes)
        "models": [c(m.shape, name=m.name) for m in model_shapes.ELEMENTWISE if m.kind in model_shapes.HIDDEN_KINDS],
    }
