"""The five core operators: copy, vector_add, relu, reduce_sum, softmax.

Registered by the built-in plugin :mod:`oprt_core.builtin` through
``oprt_register_ops``, exactly as a third-party op would be.

Error budgets (|out - ref| <= atol + rtol * |ref| against a float64 reference
computed from the same, already-rounded inputs):
- copy: bit exact; nothing is computed.
- relu: bit exact for slope 0; for a non-zero slope one rounding of x*slope to
  the output dtype (plus the slope's own f32 rounding), so rtol = eps(dtype).
- vector_add: one f32 add, then one rounding to the output dtype: rtol = eps(dtype)
  (a round-to-nearest half-ulp, doubled for the f32->f16/bf16 double rounding).
- reduce_sum: f32 accumulation of n terms in any order (sequential, pairwise or
  tree) errs at most ~log2(n) * eps(f32) * sum|x| for a tree, n * eps for a
  sequential loop in the worst case; random inputs keep a sequential loop well
  under the tree bound used here, log2(n+1) * eps(f32) * sum|x| (per output
  element), plus one rounding of the result to the output dtype (rtol = eps(dtype)).
  A dropped or doubled element (error ~|x| ~ 0.5) stays far outside it for every
  case size oprt sweeps up to ~2^20 elements per row.
- softmax: exp and the row sum in f32; exp(x - max) carries the rounding of
  (x - max), i.e. |x - max| * eps(f32) relative, which is <= ~100 * eps for
  every term that is not flushed to zero, and the division adds an ulp: rtol =
  2*eps(dtype) + 128*eps(f32); atol covers outputs below the dtype's subnormal
  range, where relative error has no meaning.

Aliasing (``inplace``): ``out`` may be exactly ``x`` for copy, relu and softmax, and exactly ``a`` or ``b`` for
vector_add (each element, or each softmax slice, is read before it is written); reduce_sum allows no aliasing. Any
other overlap of ``out`` and an input is refused.

Bytes moved (``bytes_fn``, the numerator of GB/s) count the logical elements each op reads and writes,
not DRAM traffic: an input of layout ``broadcast0`` (full shape, stride 0 on dim 0) is charged for every
element read, though it occupies, and is fetched from DRAM as, a single row (the rest are cache hits).
GB/s on those broadcast edge cases therefore overstates DRAM bandwidth; compare them only with each
other, not with the dense cases or the device's peak. (vector_add's shape broadcasting, a smaller
operand such as (N,) + (M, N), is charged once at the operand's own size.)

Flops (``flops_fn``, the numerator of TFLOP/s and of the report's roofline) count the floating-point operations
an ideal kernel does per call, each operation 1 (an exp or a division too): copy 0; relu 1 per element (the
compare; the leaky multiply is not counted apart); vector_add 1 per output element; reduce_sum 1 per input
element; softmax 5 per element (max, subtract, exp, sum, divide).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from . import model_shapes
from .dtypes import DTYPES, DType
from .errors import InvalidArgumentError
from .spec import Budget, Case, OpSpec, Param, TensorCase, format_shape

__all__ = ["CORE_OPS", "CORE_SPECS", "copy_spec", "vector_add_spec", "relu_spec", "reduce_sum_spec", "softmax_spec"]

_EPS32 = DTYPES["f32"].eps
OPRT_AXIS_ALL = -128  # oprt.h: the C value of axis=None (reduce over all)
MiB = 1 << 20


def _tc(*shape: int, layout: str = "contiguous") -> TensorCase:
    return TensorCase(tuple(shape), layout)


def _unary_case(op: str, shape: tuple[int, ...], layout: str = "contiguous", params=(), name: str | None = None,
                data: str = "uniform") -> Case:
    label = name or (format_shape(shape) + ("" if layout == "contiguous" else f"-{layout}"))
    return Case(op, label, (TensorCase(tuple(shape), layout),), tuple(params), data)


def _rw_bytes(case: Case, dt: DType) -> int:
    return 2 * case.numel * dt.itemsize


def _exact(_dt: str) -> Budget:
    return Budget(rtol=0.0, atol=0.0)


# ---------------------------------------------------------------------------------------
# copy

def _copy_ref(x: np.ndarray) -> np.ndarray:
    return x.copy()


def _copy_cases(op: str = "copy", params=()) -> dict[str, list[Case]]:
    c = lambda shape, layout="contiguous", **kw: _unary_case(op, shape, layout, params, **kw)  # noqa: E731
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


copy_spec = OpSpec(
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
    reference_fn=_copy_ref,
    bytes_fn=_rw_bytes,
    flops_fn=lambda case: 0,
    budgets={d: _exact(d) for d in DTYPES},
    case_sets=_copy_cases(),
)

# ---------------------------------------------------------------------------------------
# relu


def _relu_ref(x: np.ndarray, negative_slope: float = 0.0) -> np.ndarray:
    return np.where(x > 0, x, x * negative_slope)


def _relu_tolerance(dt: DType, inputs64, ref, params) -> tuple[float, float]:
    if params["negative_slope"] == 0.0:
        return 0.0, 0.0
    # x*slope can land in the dtype's subnormal range (f16: below 6.1e-5), where one rounding errs by
    # up to half the smallest subnormal, so relative error means nothing there.
    return max(float(np.finfo(np.float32).tiny), dt.smallest_subnormal), dt.eps


def _relu_cases() -> dict[str, list[Case]]:
    base = _copy_cases("relu", (("negative_slope", 0.0),))
    leaky = (("negative_slope", 0.1),)
    base["smoke"].append(_unary_case("relu", (1000,), params=leaky, name="1000-leaky"))
    base["default"].append(_unary_case("relu", (1 << 24,), params=leaky, name="16777216-leaky"))
    base["edge"].append(_unary_case("relu", (257, 3), "transposed", leaky, name="257x3-transposed-leaky"))
    base["large"] = [c for c in base["large"] if c.inputs[0].layout == "contiguous"]
    return base


relu_spec = OpSpec(
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
    reference_fn=_relu_ref,
    bytes_fn=_rw_bytes,
    flops_fn=lambda case: case.numel,
    budgets={d: Budget(DTYPES[d].eps, 0.0) for d in DTYPES},
    tolerance_fn=_relu_tolerance,
    case_sets=_relu_cases(),
    custom_case_fn=lambda shape, params: _unary_case("relu", shape, params=tuple(sorted(params.items()))),
)

# ---------------------------------------------------------------------------------------
# vector_add


def _broadcast_shape(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        # vector_add's inputs by name (b against a); any other count of shapes as they are
        what = (f"b has shape {tuple(shapes[1])}, a has {tuple(shapes[0])}: shape mismatch, they" if len(shapes) == 2
                else f"shape mismatch: {' and '.join(map(str, shapes))}")
        raise InvalidArgumentError(f"vector_add: {what} do not broadcast together") from None


def _vector_add_bytes(case: Case, dt: DType) -> int:
    a, b = (t.shape for t in case.inputs)
    return (math.prod(a) + math.prod(b) + math.prod(_broadcast_shape([a, b]))) * dt.itemsize


def _binary_case(a: tuple, b: tuple, la: str = "contiguous", lb: str = "contiguous", name: str | None = None) -> Case:
    label = name or "+".join(format_shape(s) + ("" if layout == "contiguous" else f"-{layout}")
                             for s, layout in ((a, la), (b, lb)))
    if a == b and la == lb == "contiguous" and name is None:
        label = format_shape(a)
    return Case("vector_add", label, (TensorCase(a, la), TensorCase(b, lb)))



def _check_broadcast(shapes: list[tuple[int, ...]]) -> None:
    """InvalidArgumentError unless the shapes broadcast together."""
    _broadcast_shape(shapes)

vector_add_spec = OpSpec(
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
    bytes_fn=_vector_add_bytes,
    flops_fn=lambda case: math.prod(_broadcast_shape([t.shape for t in case.inputs])),
    budgets={d: Budget(DTYPES[d].eps, 0.0) for d in DTYPES},
    case_sets={
        "smoke": [_binary_case((1000,), (1000,)), _binary_case((17, 33), (33,))],
        "default": [_binary_case((1 << 20,), (1 << 20,)), _binary_case((1 << 24,), (1 << 24,)),
                    _binary_case((4096, 4096), (4096, 4096)), _binary_case((4096, 4096), (4096,))],
        "large": [_binary_case((1 << 27,), (1 << 27,))],
        "edge": [
            _binary_case((1,), (1,)), _binary_case((0,), (0,)), _binary_case((), ()), _binary_case((7,), (7,)),
            _binary_case((1000003,), (1000003,)), _binary_case((33, 65), (33, 65), "transposed", "contiguous"),
            _binary_case((129, 255), (129, 255), "step2", "transposed"),
            _binary_case((999,), (999,), "offset1", "offset1"),
            _binary_case((37, 129), (129,)), _binary_case((37, 1), (1, 129)), _binary_case((5, 1, 7), (3, 1)),
            _binary_case((4, 31), (4, 31), "broadcast0", "reversed"), _binary_case((0, 3), (3,)),
        ],
        # a residual add of two such tensors, and a bias broadcast onto each token (or each channel's map)
        "models": [_binary_case(m.shape, m.shape, name=m.name) for m in model_shapes.ELEMENTWISE]
        + [_binary_case(m.shape, m.bias, name=m.name) for m in model_shapes.BIAS_ADD if m.bias is not None],
    },
)

# ---------------------------------------------------------------------------------------
# reduce_sum


def _reduce_out_shape(shapes, params) -> tuple[int, ...]:
    shape = shapes[0]
    axis, keep = params["axis"], params["keepdims"]
    if axis is None:
        return tuple(1 for _ in shape) if keep else ()
    ax = axis % len(shape)
    return tuple(1 if i == ax else s for i, s in enumerate(shape)) if keep else shape[:ax] + shape[ax + 1:]


def _check_axis(op: str, shape: tuple[int, ...], axis: int | None, allow_none: bool) -> None:
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


def _reduce_ref(x: np.ndarray, axis: int | None = -1, keepdims: bool = False) -> np.ndarray:
    return np.sum(x, axis=axis, keepdims=keepdims)


def _reduce_tolerance(dt: DType, inputs64, ref, params) -> tuple[Any, float]:
    x = inputs64[0]
    axis = params["axis"]
    n = x.size if axis is None else x.shape[axis]
    scale = np.sum(np.abs(x), axis=axis, keepdims=params["keepdims"])
    return math.log2(n + 1) * _EPS32 * scale + float(np.finfo(np.float32).tiny), dt.eps


def _reduce_bytes(case: Case, dt: DType) -> int:
    out = _reduce_out_shape([case.shape], case.param_dict)
    return (case.numel + math.prod(out)) * dt.itemsize


def _rc(shape, axis=-1, layout="contiguous", keepdims=False, data="uniform", op="reduce_sum",
        name: str | None = None) -> Case:
    ax = "all" if axis is None else str(axis)
    label = f"{format_shape(shape)}-axis{ax}" + ("" if layout == "contiguous" else f"-{layout}")
    label += "-keepdims" if keepdims else ""
    params = (("axis", axis), ("keepdims", keepdims)) if op == "reduce_sum" else (("axis", axis),)
    if data != "uniform":
        label += f"-{data}"
    label = name or label
    return Case(op, label, (TensorCase(tuple(shape), layout),), params, data)


reduce_sum_spec = OpSpec(
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
    reference_fn=_reduce_ref,
    output_shape_fn=_reduce_out_shape,
    param_check_fn=lambda shapes, p: _check_axis("reduce_sum", shapes[0], p["axis"], True),
    bytes_fn=_reduce_bytes,
    flops_fn=lambda case: case.numel,
    budgets={d: Budget(DTYPES[d].eps, 0.0) for d in DTYPES},
    tolerance_fn=_reduce_tolerance,
    case_sets={
        "smoke": [_rc((64, 1000)), _rc((64, 1000), 0), _rc((1000,), None)],
        "default": [_rc((4096, 4096)), _rc((4096, 4096), 0), _rc((1 << 24,), None), _rc((64, 4096, 64), 1),
                    _rc((16384, 1024)), _rc((4096, 4096), -1, "transposed")],
        # 16384 x 8192: the 2-D reductions at the 256 MiB in f16 / bf16 too (8192^2 is 128 MiB there)
        "large": [_rc((8192, 8192)), _rc((8192, 8192), 0), _rc((16384, 8192)), _rc((16384, 8192), 0),
                  _rc((16384, 16384)), _rc((16384, 16384), 0), _rc((1 << 27,), None)],
        "edge": [
            _rc((1,)), _rc((0,)), _rc((5, 0)), _rc((0, 5)), _rc((0, 5), 0), _rc((7,), None), _rc((), None),
            _rc((3, 1001), 0), _rc((33, 65), -2), _rc((33, 65), -1, keepdims=True),
            _rc((33, 65), None, keepdims=True), _rc((5, 7, 9), 1), _rc((37, 129), 0, "transposed"),
            _rc((129, 255), 1, "step2"), _rc((999,), 0, "offset1"), _rc((17, 31), -1, "reversed"),
            _rc((4, 2, 3, 5, 7, 11), 3), _rc((1, 1, 1), None),
        ],
        "models": [_rc(m.shape, m.axis, name=m.name) for m in model_shapes.REDUCE_SUM],
    },
    custom_case_fn=lambda shape, params: _rc(shape, params["axis"], keepdims=params["keepdims"]),
)

# ---------------------------------------------------------------------------------------
# softmax


def _softmax_ref(x: np.ndarray, axis: int = -1) -> np.ndarray:
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


def _softmax_tolerance(dt: DType, inputs64, ref, params) -> tuple[float, float]:
    tiny = float(np.finfo(np.float32).tiny) if dt.name != "f16" else 6.0e-8
    return tiny, 2 * dt.eps + 128 * _EPS32


softmax_spec = OpSpec(
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
    reference_fn=_softmax_ref,
    param_check_fn=lambda shapes, p: _check_axis("softmax", shapes[0], p["axis"], False),
    bytes_fn=_rw_bytes,
    flops_fn=lambda case: 5 * case.numel,
    budgets={d: Budget(2 * DTYPES[d].eps + 128 * _EPS32, 0.0) for d in DTYPES},
    tolerance_fn=_softmax_tolerance,
    case_sets={
        "smoke": [_rc((64, 1000), op="softmax"), _rc((1000, 33), 0, op="softmax")],
        "default": [_rc((65536, 128), op="softmax"), _rc((16384, 1024), op="softmax"),
                    _rc((4096, 4096), op="softmax"), _rc((1024, 16384), op="softmax"),
                    _rc((128, 65536), op="softmax"), _rc((4096, 4096), 0, op="softmax")],
        # (1 << 20) x 128: width 128 at the 256 MiB in f16 / bf16 too ((1 << 19) x 128 is 128 MiB there)
        "large": [_rc(s, op="softmax") for s in ((1 << 19, 128), (1 << 20, 128), (1 << 17, 1024), (1 << 15, 4096),
                                                  (8192, 16384), (2048, 65536))]
        + [_rc((16384, 16384), 0, op="softmax")],
        "edge": [
            _rc((1,), op="softmax"), _rc((0,), op="softmax"), _rc((5, 0), op="softmax"), _rc((0, 5), op="softmax"),
            _rc((7, 1), op="softmax"), _rc((1, 1), op="softmax"), _rc((3, 1001), op="softmax"),
            _rc((33, 65), -2, op="softmax"), _rc((5, 7, 9), 1, op="softmax"),
            _rc((37, 129), -1, "transposed", op="softmax"), _rc((129, 255), 1, "step2", op="softmax"),
            _rc((999,), 0, "offset1", op="softmax"), _rc((17, 31), -1, "reversed", op="softmax"),
            _rc((8, 1000), data="large", op="softmax"), _rc((8, 33), 0, data="large", op="softmax"),
            _rc((4, 3, 2, 5, 7, 11), 2, op="softmax"),
        ],
        "models": [_rc(m.shape, m.axis, op="softmax", name=m.name) for m in model_shapes.SOFTMAX],
    },
    custom_case_fn=lambda shape, params: _rc(shape, params["axis"], op="softmax"),
)

CORE_OPS: tuple[OpSpec, ...] = (copy_spec, vector_add_spec, relu_spec, reduce_sum_spec, softmax_spec)

#: The core ops by name.
CORE_SPECS: dict[str, OpSpec] = {s.name: s for s in CORE_OPS}
