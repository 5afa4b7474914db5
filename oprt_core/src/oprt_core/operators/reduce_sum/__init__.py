"""reduce_sum: the sum over one axis or over all, f32 accumulation (README.md: budget, bytes, flops)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import model_shapes
from ...dtypes import DTYPES, DType
from ...model_shapes import ModelShape, conv
from ...spec import Budget, Case, OpSpec, Param
from .._shared import EPS32, OPRT_AXIS_ALL, TINY32, axis_case, check_axis

__all__ = ["SPEC", "GROUP", "ORDER", "ROLES", "MODEL_SHAPES"]

GROUP = "core"
ORDER = 40
ROLES = {"sum-all": {"axis": None}}  # oprt_core.operators.ROLES

_WIDTHS = model_shapes.WIDTHS
#: the ``models`` set: row sums of hidden states and logits, column sums over a batch's tokens (bias and
#: norm-weight gradients), means over tokens and channels
MODEL_SHAPES: tuple[ModelShape, ...] = (
    ModelShape("llama2-13b/hidden/16384tok", (16384, 5120), _WIDTHS[2][3], "hidden"),
    *(ModelShape(f"{name}/4096tok", (4096, width), source, kind)
      for name, width, kind, source in _WIDTHS if kind == "hidden" and width != 5120),
    *(ModelShape(f"{name}/2048tok-axis0", (2048, width), source, kind, 0) for name, width, kind, source in _WIDTHS),
    ModelShape("gpt2/vocab/512tok", (512, 50257), model_shapes.VOCABS[0][3], "vocab"),
    ModelShape("llama3-8b/vocab/512tok", (512, 128256), model_shapes.VOCABS[1][3], "vocab"),
    # sentence-embedding mean pooling: the sum over 512 tokens of 768 channels, a middle axis
    ModelShape("bert-base/mean-pool/b64", (64, 512, 768), "google-bert/bert-base-uncased config.json hidden_size "
               "768, max_position_embeddings 512", "hidden", 1),
    conv("resnet50/input/b64"),  # over the 3 colour channels
    conv("resnet50/stage4/b64"),  # over 2048 channels of a 7x7 map: a middle axis with a short inner extent
    ModelShape("probe/cube50", (50, 50, 50, 50), "a 4-D cube over its third axis", "probe", 2),
)


def _out_shape(shapes, params) -> tuple[int, ...]:
    shape = shapes[0]
    axis, keep = params["axis"], params["keepdims"]
    if axis is None:
        return tuple(1 for _ in shape) if keep else ()
    ax = axis % len(shape)
    return tuple(1 if i == ax else s for i, s in enumerate(shape)) if keep else shape[:ax] + shape[ax + 1:]


def _reference(x: np.ndarray, axis: int | None = -1, keepdims: bool = False) -> np.ndarray:
    return np.sum(x, axis=axis, keepdims=keepdims)


def _tolerance(dt: DType, inputs64, ref, params) -> tuple[Any, float]:
    x = inputs64[0]
    axis = params["axis"]
    n = x.size if axis is None else x.shape[axis]
    scale = np.sum(np.abs(x), axis=axis, keepdims=params["keepdims"])
    return math.log2(n + 1) * EPS32 * scale + TINY32, dt.eps


def _bytes(case: Case, dt: DType) -> int:
    out = _out_shape([case.shape], case.param_dict)
    return (case.numel + math.prod(out)) * dt.itemsize


_rc = axis_case

SPEC = OpSpec(
    name="reduce_sum",
    doc="Sum over one axis (negative allowed) or over all (axis=None); f32 accumulation.",
    api_doc="""The sum of ``x`` over one axis, or over all elements with ``axis=None``; accumulated in f32 (at least)
    and rounded once to ``x``'s dtype. An empty axis sums to 0.

    Args:
        x: an array of f32, f16 or bf16 (numpy, or on a GPU backend its own arrays, CuPy arrays or torch
            tensors), any strides; a Python list or scalar is converted by ``numpy.asarray``, Python floats to
            f32 (ints and bools are refused).
        axis: the axis to reduce (negative counts from the end), or None for all.
        keepdims: keep the reduced axis as extent 1 (with ``axis=None``: every axis).
    """,
    n_inputs=1,
    input_names=("x",),
    params=(Param("axis", (int,), -1, "axis to reduce, negative counts from the end; None for all", allow_none=True,
                  ctype="int32_t", c_none=OPRT_AXIS_ALL),
            Param("keepdims", (bool,), False, "keep the reduced axis as extent 1", ctype="int32_t")),
    reference_fn=_reference,
    output_shape_fn=_out_shape,
    param_check_fn=lambda shapes, p: check_axis("reduce_sum", shapes[0], p["axis"], True),
    bytes_fn=_bytes,
    flops_fn=lambda case: case.numel,
    budgets={d: Budget(DTYPES[d].eps, 0.0) for d in DTYPES},
    tolerance_fn=_tolerance,
    case_sets={
        "smoke": [_rc((64, 1000)), _rc((64, 1000), 0), _rc((1000,), None)],
        "default": [_rc((4096, 4096)), _rc((4096, 4096), 0), _rc((1 << 24,), None), _rc((64, 4096, 64), 1),
                    _rc((16384, 1024)), _rc((4096, 4096), -1, "transposed")],
        # 16384 x 8192: the 2-D reductions at 256 MiB in f16 / bf16 too (8192^2 is 128 MiB there)
        "large": [_rc((8192, 8192)), _rc((8192, 8192), 0), _rc((16384, 8192)), _rc((16384, 8192), 0),
                  _rc((16384, 16384)), _rc((16384, 16384), 0), _rc((1 << 27,), None)],
        "edge": [
            _rc((1,)), _rc((0,)), _rc((5, 0)), _rc((0, 5)), _rc((0, 5), 0), _rc((7,), None), _rc((), None),
            _rc((3, 1001), 0), _rc((33, 65), -2), _rc((33, 65), -1, keepdims=True),
            _rc((33, 65), None, keepdims=True), _rc((5, 7, 9), 1), _rc((37, 129), 0, "transposed"),
            _rc((129, 255), 1, "step2"), _rc((999,), 0, "offset1"), _rc((17, 31), -1, "reversed"),
            _rc((4, 2, 3, 5, 7, 11), 3), _rc((1, 1, 1), None),
        ],
        "models": [_rc(m.shape, m.axis, name=m.name) for m in MODEL_SHAPES],
    },
    custom_case_fn=lambda shape, params: _rc(shape, params["axis"], keepdims=params["keepdims"]),
)
