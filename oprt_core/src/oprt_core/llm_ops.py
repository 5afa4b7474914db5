"""The memory-bound operators of transformer models: rms_norm (and its fused residual form add_rms_norm), layer_norm,
silu_mul, cross_entropy, rope.

Registered by the built-in plugin :mod:`oprt_core.builtin` next to the five core ops, with implementations in the
numpy backend and the torch / cupy baselines, and a C ABI of their own: their prototypes are in oprt.h's generated
region and their entry-point macros in oprt_entry.h (:mod:`oprt_core.cdecl` writes both from these specs), their
validation is ``oprt_plan_rms_norm`` / ``oprt_plan_add_rms_norm`` / ``oprt_plan_layer_norm`` / ``oprt_plan_silu_mul``
/ ``oprt_plan_cross_entropy`` / ``oprt_plan_rope`` in oprt_validate.h, and the shared kernel sources run them on the
GPU backends (``norm.cu``, ``elementwise.cu``, ``xent.cu``, ``rope.cu``).

Every op normalises (or gates) along the last axis; any leading shape, any strides. ``weight`` and ``bias`` have
shape ``(n,)`` for ``x`` of shape ``(..., n)``, in ``x``'s dtype. Arithmetic in f32, one rounding to the
output dtype at the end.

Error budgets (|out - ref| <= atol + rtol * |ref| against a float64 reference computed from the same,
already-rounded inputs); n is the length of the normalised axis:

- rms_norm, ``y = x / sqrt(mean(x^2) + eps) * weight``: the sum of squares has only non-negative terms, so its
  relative error is the accumulation's, at most ~log2(n + 1) * eps(f32) for a tree or blocked sum (a sequential
  loop on random data stays well under it), plus half an ulp per square; the square root halves that relative
  error; the add of eps, the rsqrt (~2 ulp on the GPUs' fast paths) and the two products x * r * weight add
  ~4 ulp of f32. The result is rounded to the dtype: eps(dtype) covers a double rounding (f32 -> f16/bf16),
  and also a kernel that rounds x * r to the dtype before the weight multiply (as torch's does):
      rtol = eps(dtype) + (log2(n + 1) / 2 + 4) * eps(f32)
  ~1.2e-6 in f32 at n = 4096: a row mean over n + 1 or n - 1 elements (a dropped element: ~x_i^2 / (2 n ms)
  relative, 1e-4 at n = 4096) or an eps off by 10x (5e-6 / ms relative) falls outside it in f32; in f16/bf16,
  whose eps dwarfs the f32 terms, only on short rows. atol: the dtype's smallest subnormal (f32: its smallest
  normal), for outputs below the normal range where relative error means nothing.
- add_rms_norm (two outputs), ``h = x + residual``, ``out = rms_norm(h) * weight``: h is one f32 add (exact for
  f16/bf16 inputs) and one rounding to the dtype: rtol = eps(dtype). out may normalise h as rounded to the dtype
  (as torch's ``x + residual`` then rms_norm does) or as computed in f32: the rounding moves h_i by eps(dtype) / 2
  relatively and the row's rms by at most as much, so out's budget is rms_norm's plus eps(dtype). Both atols are
  the dtype's smallest subnormal, as rms_norm's.
- layer_norm, ``y = (x - mean) / sqrt(var + eps) * weight + bias`` (biased variance, as torch): the mean errs by
  log2(n + 1) * eps(f32) * mean|x| absolutely; the variance (two-pass, or one-pass on data of mean ~0) by
  ~(log2(n + 1) + 2) * eps(f32) relatively, halved by the root. x - mean cancels where x is near the mean, so
  the bound is absolute per element, taken by ``tolerance_fn`` from the float64 inputs:
      atol_i = |weight_i| / sqrt(var + eps) * log2(n + 1) * eps(f32) * mean|x|      (the mean's error)
               + |p_i| * (log2(n + 1) / 2 + 6) * eps(f32)     (p_i = (x_i - mean) / sqrt(var + eps) * weight_i)
               + |bias_i| * eps(f32) + the dtype's smallest subnormal
      rtol = eps(dtype)                                         (the rounding of y to the dtype)
  p and bias may cancel, so p's relative error is charged on |p|, not on |y|.
- silu_mul, ``out = gate * sigmoid(gate) * up``: exp to ~2 ulp of f32 (the GPUs' fast exp), the add and the
  division one rounding each, the two products one each: rtol = eps(dtype) + 8 * eps(f32). atol: the dtype's
  smallest subnormal, at least 3e-37: where gate < -88.7, exp(-gate) overflows f32 and a kernel computing
  gate / (1 + exp(-gate)) returns -0 for a true value of magnitude below 88.7 * e^-88.7 ~ 2.6e-37.

- rope, each pair (x1, x2) of every head of q and k -> (x1 c - x2 s, x2 c + x1 s) with c, s the token's row of the
  cos / sin inputs (exact: they are inputs, not computed): two products and an add (or an FMA) in f32, each
  rounded to half an ulp of its own result. x1 c - x2 s may cancel, so the error is charged on the products'
  magnitudes, per element: atol = 2 * eps(f32) * (|x1 c| + |x2 s|) (|x2 c| + |x1 s| for the pair's second
  element) + the dtype's smallest subnormal; rtol = eps(dtype) for the one rounding to the dtype (a double rounding
  f32 -> f16/bf16 included). A wrong sign, swapped pairs or the neighbouring position's row err by O(|x|), far
  outside it in every dtype.

Bytes moved (ideal: each input read once, each output written once): rms_norm (2 numel + n) * itemsize,
add_rms_norm (4 numel + n) * itemsize (x and residual read, out and h written), layer_norm (2 numel + 2 n) *
itemsize, silu_mul 3 numel * itemsize, cross_entropy numel * itemsize (the logits) + rows * the target's itemsize
(8 for i64) + the output (rows, or one element for the mean) * itemsize, rope 2 (T Hq D + T Hk D) * itemsize (q and k
read and written) + T D * itemsize (each token's cos and sin rows, counted once per token) + T * the positions'
itemsize. Flops, each operation 1 (an exp or an
rsqrt too): rms_norm 4 per element (square, add, two products) + 3 per row (divide by n, add eps, rsqrt);
add_rms_norm one more per element (the residual add); layer_norm 7 per element (add for the mean, subtract,
square, add for the variance, two products, add of the bias) + 4 per row; silu_mul 5 per element (exp, add,
divide, two products); cross_entropy 4 per element (max, subtract, exp, add) + 3 per row (log, add, subtract),
+ 1 per row for the mean; rope 3 per element of q and k (4 products and 2 adds a pair).

rms_norm's fused residual form is an op of its own, ``add_rms_norm(x, residual, weight, eps) -> (out, h)``, rather
than an optional input of rms_norm: its C entry points, plan and kernel take a fixed list of tensors (two outputs,
three inputs), its bytes and flops differ, and a report row names what was measured. ``ops.rms_norm(x, weight, eps,
residual=r)`` calls it. Its outputs may be written in place: ``out`` over x or residual, ``h`` over x or residual
(vLLM's ``fused_add_rms_norm`` writes out over x and h over residual), never over each other. silu_mul's packed
form (one tensor ``[..., 2d]``
split in halves) needs no op of its own: ``silu_mul(t[..., :d], t[..., d:])`` passes two strided views of the one
buffer (any strides are accepted; nothing is copied).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import model_shapes
from .dtypes import DTYPES, INDEX_DTYPES, DType
from .errors import InvalidArgumentError
from .spec import Budget, Case, OpSpec, Output, Param, TensorCase, format_shape

__all__ = ["LLM_OPS", "LLM_SPECS", "rms_norm_spec", "add_rms_norm_spec", "layer_norm_spec", "silu_mul_spec",
           "cross_entropy_spec", "rope_spec", "norm_case", "silu_mul_case", "cross_entropy_case", "rope_case",
           "REDUCTIONS", "ROPE_STYLES"]

_EPS32 = DTYPES["f32"].eps
_TINY32 = float(np.finfo(np.float32).tiny)

#: Hidden sizes of real models (Llama, Mistral, Qwen, GPT-style): the normalised axis of the default cases.
HIDDEN_SIZES = (4096, 5120, 8192, 14336)


def _subnormal(dt: DType) -> float:
    """The dtype's smallest subnormal (f32: its smallest normal, what a flush-to-zero kernel can still give)."""
    return _TINY32 if dt.name == "f32" else dt.smallest_subnormal


def _row_len(shape: tuple[int, ...]) -> int:
    return shape[-1] if shape else 1


# ---------------------------------------------------------------------------------------
# shapes and params


def _check_norm(op: str) -> Callable[[list[tuple[int, ...]], dict], None]:
    """param_check_fn of a norm: x at least 1-d, eps >= 0 (the vectors' shapes: ``_norm_output_shape``)."""

    def check(shapes: list[tuple[int, ...]], params: dict) -> None:
        if not shapes[0]:
            raise InvalidArgumentError(f"{op}: x must have at least 1 dim (rows along its last axis), got a 0-d input")
        if params["eps"] < 0:
            raise InvalidArgumentError(f"{op}: eps must be >= 0, got {params['eps']!r}")

    return check


def _norm_output_shape(op: str) -> Callable[[list[tuple[int, ...]], dict], tuple[int, ...]]:
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


def _add_rms_output_shape(shapes: list[tuple[int, ...]], params: dict) -> tuple[int, ...]:
    """output_shape_fn of add_rms_norm (both outputs): x's shape, once residual has it and weight is (n,)."""
    x, residual, weight = (tuple(s) for s in shapes)
    if residual != x:
        raise InvalidArgumentError(f"add_rms_norm: shape mismatch: residual has shape {residual}, expected x's shape "
                                   f"{x}")
    if weight != (x[-1],):
        raise InvalidArgumentError(f"add_rms_norm: shape mismatch: weight has shape {weight}, expected ({x[-1]},) for "
                                   f"x of shape {x} (one weight per element of the last axis)")
    return x


def _check_silu_mul(shapes: list[tuple[int, ...]], params: dict) -> None:
    gate, up = shapes
    if tuple(gate) != tuple(up):
        raise InvalidArgumentError(f"silu_mul: shape mismatch: gate has shape {tuple(gate)} and up {tuple(up)}; "
                                   "they must be equal (for one packed [..., 2d] tensor t pass t[..., :d], t[..., d:])")


def _eps_param(default: float) -> Param:
    return Param("eps", (float, int), default, "added to the variance (mean of squares) before the square root",
                 ctype="float")


# ---------------------------------------------------------------------------------------
# references (float64; the spec casts the inputs first)


def _rms_norm_ref(x: np.ndarray, weight: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    if x.size == 0:
        return np.empty(x.shape, np.float64)
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def _add_rms_norm_ref(x: np.ndarray, residual: np.ndarray, weight: np.ndarray,
                      eps: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    h = x + residual
    return _rms_norm_ref(h, weight, eps), h


def _layer_norm_parts(x: np.ndarray, weight: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(p, 1 / sqrt(var + eps)) with p = (x - mean) / sqrt(var + eps) * weight, in float64."""
    mean = np.mean(x, axis=-1, keepdims=True)
    d = x - mean
    with np.errstate(divide="ignore", invalid="ignore"):  # var + eps == 0 (a constant row, eps 0): NaN, as torch
        r = 1.0 / np.sqrt(np.mean(d * d, axis=-1, keepdims=True) + eps)
        return d * r * weight, r


def _layer_norm_ref(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    if x.size == 0:
        return np.empty(x.shape, np.float64)
    return _layer_norm_parts(x, weight, eps)[0] + bias


def _silu_mul_ref(gate: np.ndarray, up: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # exp(-gate) overflows float64 only for gate < -709: sigmoid is 0 there
        return gate / (1.0 + np.exp(-gate)) * up


# ---------------------------------------------------------------------------------------
# budgets


def _rms_rtol(dt: DType, n: int) -> float:
    return dt.eps + (math.log2(n + 1) / 2 + 4) * _EPS32


def _rms_norm_tolerance(dt: DType, inputs64, ref, params) -> tuple[float, float]:
    return _subnormal(dt), _rms_rtol(dt, _row_len(inputs64[0].shape))


def _add_rms_out_tolerance(dt: DType, inputs64, ref, params) -> tuple[float, float]:
    return _subnormal(dt), _rms_rtol(dt, _row_len(inputs64[0].shape)) + dt.eps


def _layer_norm_tolerance(dt: DType, inputs64, ref, params) -> tuple[np.ndarray, float]:
    x, weight, bias = inputs64
    n = _row_len(x.shape)
    p, r = _layer_norm_parts(x, weight, params["eps"])
    lg = math.log2(n + 1)
    mean_abs = np.mean(np.abs(x), axis=-1, keepdims=True)
    atol = (np.abs(weight) * r * (lg * _EPS32 * mean_abs) + np.abs(p) * ((lg / 2 + 6) * _EPS32)
            + np.abs(bias) * _EPS32 + _subnormal(dt))
    return atol, dt.eps


def _silu_atol(dt: DType) -> float:
    return max(_subnormal(dt), 3e-37)


# the budgets at n = 4096 (the tolerance_fns give each case's own)
_BUDGETS = {
    "rms_norm": {d: Budget(_rms_rtol(DTYPES[d], 4096), _subnormal(DTYPES[d])) for d in DTYPES},
    "add_rms_norm": {d: Budget(_rms_rtol(DTYPES[d], 4096) + DTYPES[d].eps, _subnormal(DTYPES[d])) for d in DTYPES},
    "layer_norm": {d: Budget(DTYPES[d].eps, _subnormal(DTYPES[d])) for d in DTYPES},
    "silu_mul": {d: Budget(DTYPES[d].eps + 8 * _EPS32, _silu_atol(DTYPES[d])) for d in DTYPES},
}


# ---------------------------------------------------------------------------------------
# bytes and flops


def _rows(case: Case) -> int:
    x = case.inputs[0].shape
    return math.prod(x[:-1]) if x else 1


def _norm_bytes(case: Case, dt: DType) -> int:
    return (2 * case.numel + sum(math.prod(t.shape) for t in case.inputs[1:])) * dt.itemsize


def _add_rms_bytes(case: Case, dt: DType) -> int:
    """x, residual and weight read, out and h written."""
    return (2 * case.numel + sum(math.prod(t.shape) for t in case.inputs)) * dt.itemsize


# ---------------------------------------------------------------------------------------
# cases


def norm_case(op: str, shape: tuple[int, ...], layout: str = "contiguous", eps: float | None = None,
              weight_layout: str = "contiguous", data: str = "uniform", name: str | None = None) -> Case:
    """A case of rms_norm, add_rms_norm or layer_norm: x (and add_rms_norm's residual) of ``shape`` laid out as
    ``layout``, weight (and bias) of shape ``(shape[-1],)``; ``eps`` None: the op's default; ``name`` the case's
    name (default: from its shape)."""
    shape = tuple(shape)
    default = _DEFAULT_EPS[op]
    eps = default if eps is None else eps
    label = name or (format_shape(shape) + ("" if layout == "contiguous" else f"-{layout}")
                     + ("" if weight_layout == "contiguous" else f"-weight_{weight_layout}")
                     + ("" if eps == default else f"-eps{eps:g}"))
    vec = TensorCase(shape[-1:], weight_layout)
    x = TensorCase(shape, layout)
    tensors = (x, vec) if op == "rms_norm" else (x, x, vec) if op == "add_rms_norm" else (x, vec, vec)
    return Case(op, label, tensors, (("eps", eps),), data)


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


_DEFAULT_EPS = {"rms_norm": 1e-6, "add_rms_norm": 1e-6, "layer_norm": 1e-5}


def _norm_case_sets(op: str) -> dict[str, list[Case]]:
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


def _silu_case_sets() -> dict[str, list[Case]]:
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


# ---------------------------------------------------------------------------------------
# the specs

_INPUT_DOC = """x: an array of f32, f16 or bf16 (numpy, or on a GPU backend its own arrays, CuPy arrays or torch
            tensors) of shape ``(..., n)``, at least 1-d, any strides; a Python list is converted by
            ``numpy.asarray``, Python floats to f32."""

rms_norm_spec = OpSpec(
    name="rms_norm",
    doc="out = x / sqrt(mean(x**2 over the last axis) + eps) * weight; weight has shape (x.shape[-1],).",
    api_doc=f"""RMSNorm over the last axis: ``x / sqrt(mean(x**2) + eps) * weight``, each row on its own; computed in
    f32 and rounded once to ``x``'s dtype.

    Args:
        {_INPUT_DOC}
        weight: an array of ``x``'s dtype and shape ``(n,)``.
        eps: a finite float >= 0 added to the mean of squares.
    """,
    n_inputs=2,
    input_names=("x", "weight"),
    params=(_eps_param(_DEFAULT_EPS["rms_norm"]),),
    reference_fn=_rms_norm_ref,
    param_check_fn=_check_norm("rms_norm"),
    output_shape_fn=_norm_output_shape("rms_norm"),
    bytes_fn=_norm_bytes,
    flops_fn=lambda case: 4 * case.numel + 3 * _rows(case),
    budgets=_BUDGETS["rms_norm"],
    tolerance_fn=_rms_norm_tolerance,
    case_sets=_norm_case_sets("rms_norm"),
    custom_case_fn=lambda shape, params: norm_case("rms_norm", shape, eps=params["eps"]),
)

add_rms_norm_spec = OpSpec(
    name="add_rms_norm",
    doc="h = x + residual; out = h / sqrt(mean(h**2 over the last axis) + eps) * weight (two outputs: out, h); "
        "weight has shape (x.shape[-1],).",
    api_doc=f"""RMSNorm with the residual add fused (the pre-norm transformer block): ``h = x + residual``, then
    ``out = h / sqrt(mean(h**2) + eps) * weight`` over the last axis; returns ``(out, h)``. Computed in f32, each
    output rounded once to ``x``'s dtype. ``ops.rms_norm(x, weight, eps, residual=residual)`` is the same call.

    Args:
        {_INPUT_DOC}
        residual: an array of ``x``'s dtype and shape.
        weight: an array of ``x``'s dtype and shape ``(n,)``.
        eps: a finite float >= 0 added to the mean of squares.
    """,
    n_inputs=3,
    input_names=("x", "residual", "weight"),
    outputs=(
        Output("out", inplace=("x", "residual"), tolerance_fn=_add_rms_out_tolerance,
               doc="the normalised h, times weight"),
        Output("h", inplace=("x", "residual"),
               tolerance_fn=lambda dt, inputs64, ref, params: (_subnormal(dt), dt.eps),
               doc="x + residual (the residual stream of the next block)"),
    ),
    params=(_eps_param(_DEFAULT_EPS["add_rms_norm"]),),
    reference_fn=_add_rms_norm_ref,
    param_check_fn=_check_norm("add_rms_norm"),
    output_shape_fn=_add_rms_output_shape,
    bytes_fn=_add_rms_bytes,
    flops_fn=lambda case: 5 * case.numel + 3 * _rows(case),
    budgets=_BUDGETS["add_rms_norm"],
    case_sets=_norm_case_sets("add_rms_norm"),
    custom_case_fn=lambda shape, params: norm_case("add_rms_norm", shape, eps=params["eps"]),
)

layer_norm_spec = OpSpec(
    name="layer_norm",
    doc="out = (x - mean) / sqrt(var + eps) * weight + bias over the last axis (biased variance); weight and bias "
        "have shape (x.shape[-1],).",
    api_doc=f"""LayerNorm over the last axis: ``(x - mean) / sqrt(var + eps) * weight + bias`` with the biased
    variance (as ``torch.nn.functional.layer_norm``), each row on its own; computed in f32 and rounded once to
    ``x``'s dtype.

    Args:
        {_INPUT_DOC}
        weight: an array of ``x``'s dtype and shape ``(n,)``.
        bias: an array of ``x``'s dtype and shape ``(n,)``.
        eps: a finite float >= 0 added to the variance.
    """,
    n_inputs=3,
    input_names=("x", "weight", "bias"),
    params=(_eps_param(_DEFAULT_EPS["layer_norm"]),),
    reference_fn=_layer_norm_ref,
    param_check_fn=_check_norm("layer_norm"),
    output_shape_fn=_norm_output_shape("layer_norm"),
    bytes_fn=_norm_bytes,
    flops_fn=lambda case: 7 * case.numel + 4 * _rows(case),
    budgets=_BUDGETS["layer_norm"],
    tolerance_fn=_layer_norm_tolerance,
    case_sets=_norm_case_sets("layer_norm"),
    custom_case_fn=lambda shape, params: norm_case("layer_norm", shape, eps=params["eps"]),
)

silu_mul_spec = OpSpec(
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
    reference_fn=_silu_mul_ref,
    param_check_fn=_check_silu_mul,
    bytes_fn=lambda case, dt: 3 * case.numel * dt.itemsize,
    flops_fn=lambda case: 5 * case.numel,
    budgets=_BUDGETS["silu_mul"],
    tolerance_fn=lambda dt, inputs64, ref, params: (_silu_atol(dt), dt.eps + 8 * _EPS32),
    case_sets=_silu_case_sets(),
    custom_case_fn=lambda shape, params: silu_mul_case(shape),
)

# ---------------------------------------------------------------------------------------
# cross_entropy

#: cross_entropy's reductions (the C ABI passes the index: 0 none, 1 mean)
REDUCTIONS = ("none", "mean")
_LN2 = math.log(2.0)


def _xent_output_shape(shapes: list[tuple[int, ...]], params: dict) -> tuple[int, ...]:
    logits, target = (tuple(s) for s in shapes)
    if not logits:
        raise InvalidArgumentError("cross_entropy: logits must have at least 1 dim (classes along its last axis), "
                                   "got a 0-d input")
    if logits[-1] == 0 and math.prod(logits[:-1]) > 0:
        raise InvalidArgumentError(f"cross_entropy: logits of shape {logits} have no class (a last axis of 0)")
    if target != logits[:-1]:
        raise InvalidArgumentError(f"cross_entropy: shape mismatch: target has shape {target}, expected "
                                   f"{logits[:-1]} for logits of shape {logits} (one class index per row)")
    return () if params["reduction"] == "mean" else logits[:-1]


def _xent_parts(logits: np.ndarray, target: np.ndarray, ignore_index: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row, in float64: (loss, ignored, m, log S, the target's logit); loss NaN for a target out of range."""
    v = logits.shape[-1]
    t = np.asarray(target, np.int64)
    ignored = t == ignore_index
    valid = (t >= 0) & (t < v)
    if logits.size == 0:
        z = np.zeros(t.shape)
        return z, ignored, z, z, z
    rows = logits.reshape(-1, v)  # a view for the contiguous float64 arrays the spec passes (else one copy)
    row_m, row_log_s = np.empty(rows.shape[0]), np.empty(rows.shape[0])
    step = max(1, (1 << 23) // v)  # 64 MiB of float64 temporaries at a time, whatever the vocabulary
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for lo in range(0, rows.shape[0], step):
            block = rows[lo:lo + step]
            row_m[lo:lo + step] = np.max(block, axis=-1)
            row_log_s[lo:lo + step] = np.log(np.sum(np.exp(block - row_m[lo:lo + step, None]), axis=-1))
        m, log_s = row_m.reshape(t.shape), row_log_s.reshape(t.shape)
        xt = np.take_along_axis(logits, np.where(valid, t, 0)[..., None], axis=-1)[..., 0]
        loss = np.where(valid, m + log_s - xt, np.nan)
    loss = np.where(ignored, 0.0, loss)
    return loss, ignored, m, log_s, np.where(valid, xt, 0.0)


def _xent_ref(logits: np.ndarray, target: np.ndarray, ignore_index: int = -100, reduction: str = "none"
              ) -> np.ndarray:
    loss, ignored, *_ = _xent_parts(logits, target, ignore_index)
    if reduction == "none":
        return loss
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.sum(loss) / np.count_nonzero(~ignored))  # no row counted: 0 / 0, NaN (as torch)


def _xent_row_atol(logits: np.ndarray, target: np.ndarray, ignore_index: int) -> tuple[np.ndarray, np.ndarray]:
    """(atol per row, the rows' losses) of the budget in the module docstring."""
    v = logits.shape[-1]
    loss, _, m, log_s, xt = _xent_parts(logits, target, ignore_index)
    atol = ((math.log2(v + 1) + math.log(max(v, 1)) + 4) * _EPS32
            + 2 * _EPS32 * (np.abs(log_s) + np.abs(m) + np.abs(xt)))
    return atol, loss


def _xent_tolerance(dt: DType, inputs64, ref, params) -> tuple[Any, float]:
    logits, target = inputs64
    atol, loss = _xent_row_atol(logits, target, params["ignore_index"])
    tiny = _subnormal(dt)
    if params["reduction"] == "none":
        # a loss the dtype cannot hold (f16's large data: logits of +-60000) rounds to inf: not checked
        return np.where(np.abs(ref) > _max_finite(dt), np.inf, atol + tiny), dt.eps
    counted = np.asarray(target) != params["ignore_index"]
    r = int(np.count_nonzero(counted))
    if r == 0:
        return tiny, dt.eps
    mean = float(np.sum(np.where(counted, loss, 0.0))) / r
    if abs(mean) > _max_finite(dt):
        return np.inf, dt.eps
    return float(np.sum(np.where(counted, atol, 0.0))) / r + math.log2(r + 1) * _EPS32 * abs(mean) + tiny, dt.eps


def _max_finite(dt: DType) -> float:
    """The largest value that rounds to a finite one in ``dt`` (its max plus half an ulp)."""
    big = float(dt.finfo.max)
    return big * (1 + dt.eps / 2)


def _xent_rows(case: Case) -> int:
    return math.prod(case.inputs[0].shape[:-1]) if case.inputs[0].shape else 1


def _xent_bytes(case: Case, dt: DType) -> int:
    rows = _xent_rows(case)
    target = INDEX_DTYPES[case.inputs[1].dtype or "i64"].itemsize
    out = 1 if case.param_dict.get("reduction", "none") == "mean" else rows
    return case.numel * dt.itemsize + rows * target + out * dt.itemsize


def _xent_flops(case: Case) -> int:
    rows = _xent_rows(case)
    return 4 * case.numel + 3 * rows + (rows if case.param_dict.get("reduction", "none") == "mean" else 0)


def _xent_targets(case: Case, name: str, count: int, rng: np.random.Generator) -> np.ndarray:
    """Class ids in [0, V), about one row in eight set to ignore_index (every fourth row where V == 1)."""
    v = case.inputs[0].shape[-1] if case.inputs[0].shape else 1
    ignore = case.param_dict.get("ignore_index", -100)
    t = rng.integers(0, max(v, 1), count, dtype=np.int64)
    t[rng.random(count) < 0.125] = ignore
    return t


def cross_entropy_case(shape: tuple[int, ...], layout: str = "contiguous", target_layout: str = "contiguous",
                       reduction: str = "none", ignore_index: int = -100, data: str = "uniform",
                       target_dtype: str | None = None, name: str | None = None) -> Case:
    """A case of cross_entropy: logits of ``shape`` (..., V) laid out as ``layout``, targets of shape ``shape[:-1]``
    (``target_layout``, ``target_dtype``: default i64); ``name`` the case's name (default: from the rest)."""
    shape = tuple(shape)
    label = name or (format_shape(shape) + ("" if layout == "contiguous" else f"-{layout}")
                     + ("" if target_layout == "contiguous" else f"-target_{target_layout}")
                     + ("" if reduction == "none" else f"-{reduction}")
                     + ("" if ignore_index == -100 else f"-ignore{ignore_index}")
                     + ("" if data == "uniform" else f"-{data}"))
    return Case("cross_entropy", label, (TensorCase(shape, layout), TensorCase(shape[:-1], target_layout,
                                                                               target_dtype)),
                (("ignore_index", ignore_index), ("reduction", reduction)), data)


def _xent_case_sets() -> dict[str, list[Case]]:
    c = cross_entropy_case
    return {
        "smoke": [c((4, 64)), c((3, 1000), reduction="mean"), c((17, 65), "transposed")],
        # tokens x vocabulary of real models (Llama 2 32000, GPT-2 50257, Llama 3 128256, Qwen2 151936, Gemma 256000)
        "default": [c((8192, 32000)), c((4096, 50257)), c((4096, 128256)), c((4096, 128256), reduction="mean"),
                    c((2048, 151936)), c((1024, 256000))],
        "large": [c((16384, 32000)), c((8192, 128256)), c((4096, 256000))],
        "edge": [
            c((1, 1)), c((7, 1)), c((0, 5)), c((5,)), c((3, 1001)), c((2, 32001)), c((1, 4099)), c((2, 3, 33)),
            c((37, 129), "transposed"), c((129, 255), "step2"), c((9, 999), "offset1"), c((17, 31), "reversed"),
            c((5, 31), "broadcast0"), c((33, 65), target_layout="step2"), c((19, 77), target_layout="reversed"),
            c((9, 300), ignore_index=3), c((9, 300), reduction="mean", ignore_index=7), c((5, 7), reduction="mean"),
            c((6, 5000), data="large"), c((6, 5000), reduction="mean", data="large"), c((2, 70000)),
        ],
        # LLM logits at 1 to 16384 tokens (oprt_core.model_shapes)
        "models": [c(m.shape, name=m.name) for m in model_shapes.CROSS_ENTROPY],
    }


cross_entropy_spec = OpSpec(
    name="cross_entropy",
    doc="out = logsumexp(logits) - logits[target] per row (0 where target == ignore_index); reduction none: "
        "per row, mean: the mean over the rows not ignored.",
    api_doc="""Cross-entropy of logits against class indices, as ``torch.nn.functional.cross_entropy``: per row of
    ``logits`` (its last axis the V classes), ``logsumexp(row) - row[target]``; a row whose target is
    ``ignore_index`` gives 0 and is left out of the mean. Computed in f32 (one pass over each row: an online max and
    sum of exponentials) and rounded once to ``logits``' dtype. A target outside [0, V) other than
    ``ignore_index`` gives NaN (torch asserts); the mean over no row is NaN, as torch's.

    Args:
        logits: an array of f32, f16 or bf16 of shape ``(..., V)``, V >= 1, any strides; a Python list is
            converted by ``numpy.asarray``, Python floats to f32.
        target: an array of i64 (int64) of shape ``logits.shape[:-1]``, any strides: the class of each row.
        ignore_index: the target value of rows to ignore (an int32; torch's default -100).
        reduction: ``"none"`` for the loss of each row (shape ``logits.shape[:-1]``), ``"mean"`` for their mean
            over the rows not ignored (a 0-d array).
    """,
    n_inputs=2,
    input_names=("logits", "target"),
    index_inputs={"target": ("i64",)},
    index_fn=_xent_targets,
    params=(Param("ignore_index", (int,), -100, "rows whose target equals it are ignored (loss 0, not in the mean)",
                  ctype="int32_t"),
            Param("reduction", (str,), "none", "none: the loss of each row; mean: their mean over the rows not "
                  "ignored", ctype="int32_t", choices=REDUCTIONS)),
    reference_fn=_xent_ref,
    output_shape_fn=_xent_output_shape,
    bytes_fn=_xent_bytes,
    flops_fn=_xent_flops,
    budgets={d: Budget(DTYPES[d].eps, (math.log2(128257) + math.log(128256) + 4) * _EPS32) for d in DTYPES},
    tolerance_fn=_xent_tolerance,
    case_sets=_xent_case_sets(),
    custom_case_fn=lambda shape, params: cross_entropy_case(shape, reduction=params["reduction"],
                                                            ignore_index=params["ignore_index"]),
)

# ---------------------------------------------------------------------------------------
# rope

#: rope's pairing styles (the C ABI passes the index: 0 neox, 1 gptj)
ROPE_STYLES = ("neox", "gptj")
#: the widest head rope takes (a thread of the GPU kernels keeps a token's cos / sin in registers)
ROPE_MAX_HEAD_DIM = 256


def _rope_shapes(shapes: list[tuple[int, ...]], params: dict) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(q's shape, k's shape) once q (T, Hq, D), k (T, Hk, D), cos and sin (P, D/2) and positions (T,) agree."""
    q, k, cos, sin, pos = (tuple(s) for s in shapes)
    if len(q) != 3:
        raise InvalidArgumentError(f"rope: q must have 3 dims (tokens, heads, head_dim), got shape {q}")
    t, _, d = q
    if len(k) != 3 or k[0] != t or k[2] != d:
        raise InvalidArgumentError(f"rope: shape mismatch: k has shape {k}, expected ({t}, kv_heads, {d}) for q of "
                                   f"shape {q} (the same tokens and head_dim)")
    if d % 2 or not 2 <= d <= ROPE_MAX_HEAD_DIM:
        raise InvalidArgumentError(f"rope: head_dim must be even and in [2, {ROPE_MAX_HEAD_DIM}], got {d}")
    for name, shape in (("cos", cos), ("sin", sin)):
        if len(shape) != 2 or shape[1] != d // 2:
            raise InvalidArgumentError(f"rope: shape mismatch: {name} has shape {shape}, expected (positions, "
                                       f"{d // 2}) for head_dim {d} (one row per position, head_dim / 2 wide)")
    if sin != cos:
        raise InvalidArgumentError(f"rope: shape mismatch: sin has shape {sin} and cos {cos}; they must be equal")
    if cos[0] == 0 and t > 0:
        raise InvalidArgumentError(f"rope: cos and sin have no position (shape {cos}) for {t} tokens")
    if pos != (t,):
        raise InvalidArgumentError(f"rope: shape mismatch: positions has shape {pos}, expected ({t},) (one position "
                                   "per token)")
    return q, k


def _rope_pairs(x: np.ndarray, style: str) -> tuple[Any, Any]:
    """The index expressions of the pairs' first and second elements along the last axis of ``x``."""
    half = x.shape[-1] // 2
    if style == "neox":
        return (..., slice(0, half)), (..., slice(half, None))
    return (..., slice(0, None, 2)), (..., slice(1, None, 2))


def _rope_cs(cos: np.ndarray, sin: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(c, s, valid): each token's cos / sin row as (T, 1, D/2) (row 0 for a position out of range) and whether
    its position is in [0, P)."""
    pos = np.asarray(positions, np.int64)
    valid = (pos >= 0) & (pos < cos.shape[0])
    rows = np.where(valid, pos, 0)
    if cos.shape[0] == 0:  # no token either (the shape check)
        empty = np.zeros((pos.shape[0], 1, cos.shape[1]), cos.dtype)
        return empty, empty, valid
    return cos[rows][:, None, :], sin[rows][:, None, :], valid


def _rope_apply(x: np.ndarray, c: np.ndarray, s: np.ndarray, valid: np.ndarray, style: str) -> np.ndarray:
    i1, i2 = _rope_pairs(x, style)
    x1, x2 = x[i1], x[i2]
    out = np.empty(x.shape, np.result_type(x, c))
    out[i1] = x1 * c - x2 * s
    out[i2] = x2 * c + x1 * s
    out[~valid] = np.nan
    return out


def _rope_ref(q: np.ndarray, k: np.ndarray, cos: np.ndarray, sin: np.ndarray, positions: np.ndarray,
              style: str = "neox") -> tuple[np.ndarray, np.ndarray]:
    c, s, valid = _rope_cs(cos, sin, positions)
    return _rope_apply(q, c, s, valid, style), _rope_apply(k, c, s, valid, style)


def _rope_tolerance(which: int) -> Callable[..., tuple[Any, float]]:
    """tolerance_fn of q_out (``which`` 0) or k_out (1): the per-element atol of the module docstring's budget."""

    def tolerance(dt: DType, inputs64, ref, params) -> tuple[Any, float]:
        x, cos, sin, positions = inputs64[which], inputs64[2], inputs64[3], inputs64[4]
        c, s, _ = _rope_cs(np.abs(cos), np.abs(sin), positions)
        i1, i2 = _rope_pairs(x, params["style"])
        a1, a2 = np.abs(x[i1]), np.abs(x[i2])
        atol = np.empty(x.shape)
        atol[i1] = a1 * c + a2 * s
        atol[i2] = a2 * c + a1 * s
        return atol * (2 * _EPS32) + _subnormal(dt), dt.eps

    return tolerance


def _rope_tokens(case: Case) -> int:
    return case.inputs[0].shape[0]


def _rope_bytes(case: Case, dt: DType) -> int:
    """q and k read and written; the cos and sin rows of each token's position (D/2 elements each, counted once
    per token: T * D elements for both); the positions."""
    q, k = (math.prod(t.shape) for t in case.inputs[:2])
    t, d = _rope_tokens(case), case.inputs[0].shape[2]
    pos = INDEX_DTYPES[case.inputs[4].dtype or "i64"].itemsize
    return (2 * (q + k) + t * d) * dt.itemsize + t * pos


def _rope_positions(case: Case, name: str, count: int, rng: np.random.Generator) -> np.ndarray:
    """Positions in [0, P), P the cos cache's rows."""
    p = case.inputs[2].shape[0]
    return rng.integers(0, max(p, 1), count, dtype=np.int64)


def rope_case(tokens: int, heads: int, kv_heads: int, head_dim: int, style: str = "neox",
              positions: int | None = None, q_layout: str = "contiguous", k_layout: str = "contiguous",
              cs_layout: str = "contiguous", pos_layout: str = "contiguous", pos_dtype: str | None = None,
              name: str | None = None) -> Case:
    """A case of rope: q (tokens, heads, head_dim) laid out as ``q_layout``, k (tokens, kv_heads, head_dim) as
    ``k_layout``, cos and sin (positions, head_dim / 2) as ``cs_layout`` (``positions`` None: max(tokens, 1)),
    positions (tokens,) as ``pos_layout`` of ``pos_dtype`` (default i64); ``name`` the case's name (default: from
    the rest)."""
    p = max(tokens, 1) if positions is None else positions
    label = name or (f"{tokens}x{heads}+{kv_heads}x{head_dim}" + ("" if style == "neox" else f"-{style}")
                     + ("" if positions is None else f"-P{p}")
                     + ("" if q_layout == "contiguous" else f"-q_{q_layout}")
                     + ("" if k_layout == "contiguous" else f"-k_{k_layout}")
                     + ("" if cs_layout == "contiguous" else f"-cs_{cs_layout}")
                     + ("" if pos_layout == "contiguous" else f"-pos_{pos_layout}")
                     + ("" if pos_dtype is None else f"-{pos_dtype}"))
    cs = TensorCase((p, head_dim // 2), cs_layout)
    return Case("rope", label, (TensorCase((tokens, heads, head_dim), q_layout),
                                TensorCase((tokens, kv_heads, head_dim), k_layout), cs, cs,
                                TensorCase((tokens,), pos_layout, pos_dtype)), (("style", style),))


def _rope_custom(shape: tuple[int, ...], params: dict) -> Case:
    if len(shape) != 3:
        raise InvalidArgumentError(f"rope: a shape is q's (tokens, heads, head_dim), got {format_shape(shape)}")
    t, h, d = shape
    return rope_case(t, h, h, d, params["style"])


def _rope_case_sets() -> dict[str, list[Case]]:
    c = rope_case
    return {
        "smoke": [c(4, 2, 1, 64), c(3, 4, 2, 128, "gptj"), c(5, 3, 3, 32, q_layout="transposed", pos_dtype="i32")],
        # q and k of real models at 4096 tokens (Llama-3-8B, Qwen2-7B, Llama-2-7B, GPT-J's 64 rotated dims,
        # Gemma-7B's heads of 256)
        "default": [c(4096, 32, 8, 128, positions=8192), c(4096, 28, 4, 128, positions=32768),
                    c(4096, 32, 32, 128, positions=4096), c(4096, 16, 16, 64, "gptj", positions=2048),
                    c(4096, 16, 16, 256, positions=8192)],
        "large": [c(16384, 32, 8, 128, positions=16384), c(16384, 64, 8, 128, positions=16384),
                  c(16384, 16, 16, 256, "gptj", positions=16384)],
        "edge": [
            c(0, 2, 1, 64), c(1, 1, 1, 2), c(1, 1, 1, 2, "gptj"), c(7, 3, 5, 64), c(7, 5, 3, 64, "gptj"),
            c(3, 7, 1, 256), c(3, 1, 7, 256, "gptj"), c(9, 3, 2, 6), c(9, 3, 2, 6, "gptj"), c(5, 2, 2, 64, positions=1),
            c(6, 3, 1, 128, positions=20000), c(9, 3, 2, 64, pos_dtype="i32"), c(9, 3, 2, 64, "gptj", pos_dtype="i32"),
            c(9, 3, 2, 64, q_layout="step2", k_layout="offset1"), c(9, 3, 2, 64, "gptj", q_layout="offset1",
                                                                     k_layout="reversed"),
            c(9, 3, 2, 64, q_layout="transposed", k_layout="transposed"), c(9, 3, 2, 64, q_layout="broadcast0"),
            c(9, 3, 2, 64, cs_layout="step2"), c(9, 3, 2, 64, "gptj", cs_layout="transposed"),
            c(11, 3, 2, 64, pos_layout="reversed"), c(11, 3, 2, 64, pos_layout="step2", pos_dtype="i32"),
        ],
        # q and k of LLMs from 1 to 16384 tokens (oprt_core.model_shapes.ROPE)
        "models": [c(m.tokens, m.heads, m.kv_heads, m.head_dim, m.style, m.positions, name=m.name)
                   for m in model_shapes.ROPE],
    }


rope_spec = OpSpec(
    name="rope",
    doc="rotary embedding of q and k (two outputs: q_out, k_out): pairs (x1, x2) of each head -> "
        "(x1 c - x2 s, x2 c + x1 s), c = cos[positions[t], i], s = sin[positions[t], i]; style neox pairs (i, i + "
        "D/2), gptj (2i, 2i + 1).",
    api_doc="""Rotary position embedding of attention's q and k: each head's pairs ``(x1, x2)`` of token ``t`` become
    ``(x1 * c - x2 * s, x2 * c + x1 * s)`` with ``c = cos[positions[t], i]``, ``s = sin[positions[t], i]`` for
    pair ``i``; style ``neox`` pairs elements ``(i, i + D/2)`` (HF's ``rotate_half``: Llama, Qwen, Mistral),
    ``gptj`` pairs ``(2i, 2i + 1)`` (GPT-J's ``rotate_every_two``). Returns ``(q_out, k_out)``; computed in f32,
    rounded once to the dtype. A position outside [0, P) gives NaN for its token. For a model that rotates only
    part of each head (GPT-J's rotary_dim), pass the view ``q[..., :rotary_dim]``; for a fused qkv projection,
    the views of q and k in its buffer (any strides).

    Args:
        q: an array of f32, f16 or bf16 of shape ``(T, Hq, D)`` (tokens, heads, head_dim), D even, 2..256, any
            strides.
        k: an array of ``q``'s dtype of shape ``(T, Hk, D)``.
        cos, sin: arrays of ``q``'s dtype of shape ``(P, D/2)``: the cache of P positions.
        positions: an array of i64 or i32 of shape ``(T,)``: each token's row of cos and sin.
        style: ``"neox"`` (pairs of the two halves) or ``"gptj"`` (interleaved pairs).
    """,
    n_inputs=5,
    input_names=("q", "k", "cos", "sin", "positions"),
    index_inputs={"positions": ("i64", "i32")},
    index_fn=_rope_positions,
    outputs=(
        Output("q_out", shape_fn=lambda shapes, params: _rope_shapes(shapes, params)[0], inplace=("q",),
               tolerance_fn=_rope_tolerance(0), doc="q rotated"),
        Output("k_out", shape_fn=lambda shapes, params: _rope_shapes(shapes, params)[1], inplace=("k",),
               tolerance_fn=_rope_tolerance(1), doc="k rotated"),
    ),
    params=(Param("style", (str,), "neox", "neox: pairs (i, i + D/2); gptj: pairs (2i, 2i + 1)", ctype="int32_t",
                  choices=ROPE_STYLES),),
    reference_fn=_rope_ref,
    bytes_fn=_rope_bytes,
    flops_fn=lambda case: 3 * sum(math.prod(t.shape) for t in case.inputs[:2]),
    budgets={d: Budget(DTYPES[d].eps, 4 * _EPS32) for d in DTYPES},
    case_sets=_rope_case_sets(),
    custom_case_fn=_rope_custom,
)

#: The model ops, in the order they are listed.
LLM_OPS: tuple[OpSpec, ...] = (rms_norm_spec, add_rms_norm_spec, layer_norm_spec, silu_mul_spec, cross_entropy_spec,
                                 rope_spec)

#: The model ops by name.
LLM_SPECS: dict[str, OpSpec] = {s.name: s for s in LLM_OPS}
