"""softmax: numerically stable softmax over one axis (README.md: budget, bytes, flops, aliasing)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ... import model_shapes
from ...dtypes import DTYPES, DType
from ...model_shapes import ModelShape, attention, conv, tokens
from ...spec import Budget, OpSpec, Param
from .._shared import EPS32, TINY32, axis_case, check_axis, rw_bytes

__all__ = ["SPEC", "GROUP", "ORDER", "MODEL_SHAPES"]

GROUP = "core"
ORDER = 50

#: the ``models`` set: LLM logits over the vocabulary, attention rows, and middle axes (a 4-D tensor over its
#: channels)
MODEL_SHAPES: tuple[ModelShape, ...] = (
    *(m for v in model_shapes.VOCABS for m in tokens(*v, model_shapes.VOCAB_TOKENS)),
    *attention(),
    conv("resnet50/input/b64"),  # over the 3 colour channels: a middle axis with a long inner extent
    # per-pixel class probabilities: 150 ADE20K classes at 1/4 of a 512x512 input, over axis 1
    ModelShape("segformer-b0-ade20k/logits/b8", (8, 150, 128, 128),
               "nvidia/segformer-b0-finetuned-ade-512-512 config.json num_labels 150; logits at 1/4 resolution",
               "conv", 1),
    # not a model: a middle axis whose inner extent (50) is shorter than a warp's loads
    ModelShape("probe/cube50", (50, 50, 50, 50), "a 4-D cube over its third axis", "probe", 2),
)


def _reference(x: np.ndarray, axis: int = -1) -> np.ndarray:
    if x.size == 0:
        return x.copy()
    out = np.empty(x.shape, np.float64)
    axis %= x.ndim
    # independent slices along another axis on threads for large inputs (numpy releases the GIL): a vocabulary-
    # wide softmax of a few thousand rows is ~200 M float64 elements
    split = next((d for d in range(x.ndim) if d != axis and x.shape[d] > 1), -1)
    pieces = min(os.cpu_count() or 1, 16, x.size >> 20, x.shape[split]) if split >= 0 else 1
    if pieces <= 1:
        _softmax_into(x, axis, out)
        return out
    bounds = np.linspace(0, x.shape[split], pieces + 1).astype(int)
    parts = [(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]

    def run(span: tuple[int, int]) -> None:
        index = (slice(None),) * split + (slice(*span),)
        _softmax_into(x[index], axis, out[index])

    with ThreadPoolExecutor(len(parts), thread_name_prefix="oprt-softmax-ref") as pool:
        list(pool.map(run, parts))
    return out


def _softmax_into(x: np.ndarray, axis: int, out: np.ndarray) -> None:
    """out = softmax(x) along ``axis``, in place (one temporary: the maxima and the sums)."""
    np.subtract(x, np.max(x, axis=axis, keepdims=True), out=out)
    np.exp(out, out=out)
    out /= np.sum(out, axis=axis, keepdims=True)


def _tolerance(dt: DType, inputs64, ref, params) -> tuple[float, float]:
    tiny = TINY32 if dt.name != "f16" else 6.0e-8
    return tiny, 2 * dt.eps + 128 * EPS32


def _rc(shape, axis=-1, layout="contiguous", **kw):
    return axis_case(shape, axis, layout, op="softmax", **kw)


SPEC = OpSpec(
    name="softmax",
    doc="Numerically stable softmax over one axis (negative allowed).",
    api_doc="""Softmax over one axis: ``exp(x - max) / sum(exp(x - max))`` along ``axis``, so the outputs along it are
    in [0, 1] and sum to 1; computed in f32 and rounded once to ``x``'s dtype. A slice holding +inf, or only
    -inf, gives NaN (without a warning), as torch does.

    Args:
        x: an array of f32, f16 or bf16 (numpy, or on a GPU backend its own arrays, CuPy arrays or torch
            tensors), any strides; a Python list or scalar is converted by ``numpy.asarray``, Python floats to
            f32 (ints and bools are refused).
        axis: the axis along which the outputs sum to 1 (negative counts from the end); a 0-d ``x`` has none.
    """,
    n_inputs=1,
    input_names=("x",),
    inplace=("x",),
    params=(Param("axis", (int,), -1, "axis along which the outputs sum to 1, negative counts from the end",
                  ctype="int32_t"),),
    reference_fn=_reference,
    param_check_fn=lambda shapes, p: check_axis("softmax", shapes[0], p["axis"], False),
    bytes_fn=rw_bytes,
    flops_fn=lambda case: 5 * case.numel,
    budgets={d: Budget(2 * DTYPES[d].eps + 128 * EPS32, 0.0) for d in DTYPES},
    tolerance_fn=_tolerance,
    case_sets={
        "smoke": [_rc((64, 1000)), _rc((1000, 33), 0)],
        "default": [_rc((65536, 128)), _rc((16384, 1024)), _rc((4096, 4096)), _rc((1024, 16384)),
                    _rc((128, 65536)), _rc((4096, 4096), 0)],
        # (1 << 20) x 128: width 128 at 256 MiB in f16 / bf16 too ((1 << 19) x 128 is 128 MiB there)
        "large": [_rc(s) for s in ((1 << 19, 128), (1 << 20, 128), (1 << 17, 1024), (1 << 15, 4096), (8192, 16384),
                                   (2048, 65536))]
        + [_rc((16384, 16384), 0)],
        "edge": [
            _rc((1,)), _rc((0,)), _rc((5, 0)), _rc((0, 5)), _rc((7, 1)), _rc((1, 1)), _rc((3, 1001)),
            _rc((33, 65), -2), _rc((5, 7, 9), 1), _rc((37, 129), -1, "transposed"), _rc((129, 255), 1, "step2"),
            _rc((999,), 0, "offset1"), _rc((17, 31), -1, "reversed"), _rc((8, 1000), data="large"),
            _rc((8, 33), 0, data="large"), _rc((4, 3, 2, 5, 7, 11), 2),
        ],
        "models": [_rc(m.shape, m.axis, name=m.name) for m in MODEL_SHAPES],
    },
    custom_case_fn=lambda shape, params: _rc(shape, params["axis"]),
)
