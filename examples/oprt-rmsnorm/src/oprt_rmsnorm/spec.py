"""The ``rms_norm_example`` operator specification.

    out[..., j] = x[..., j] / sqrt(mean_k(x[..., k]**2) + eps) * weight[j]

``x`` has shape ``(..., n)`` (at least 1-d; any strides), ``weight`` shape ``(n,)``; the output has
``x``'s shape. Each row of ``x`` along the last axis is normalised on its own.

Error budget (|out - ref| <= atol + rtol * |ref| against a float64 reference computed from the same,
already-rounded inputs), for an implementation that works in f32 and rounds once to the output dtype:

- the sum of squares has only non-negative terms, so its relative error is the accumulation's:
  at most ~log2(n) * eps(f32) for a tree or a blocked sum, far less than the n * eps(f32) worst case
  of a sequential loop on random data; the rsqrt of the mean halves that relative error;
- ``rsqrt`` (or ``1 / sqrt``) adds ~2 ulp of f32 (Triton's and CUDA's fast paths), the two products
  ``x * r * weight`` one rounding each;
- the result is rounded once to the output dtype: half an ulp, eps(dtype) allowed for a double
  rounding (f32 -> f16/bf16) as in the core ops.

  rtol = 2 * eps(dtype) + (log2(n + 1) / 2 + 8) * eps(f32)

The f32 term is ~1e-6 for n = 4096: tight enough to catch a mean over the wrong count (n + 1: 1/(2n)
relative on every element), ``eps`` added outside the square root, a missing or misaligned weight, or
a LayerNorm (mean subtracted), all of which the tests check. ``atol`` is the dtype's smallest subnormal:
a product x * r * weight below f16's normal range (6.1e-5, common for uniform inputs) is rounded to a
subnormal spacing, where relative error means nothing.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from oprt_core import DTYPES, Budget, Case, InvalidArgumentError, OpSpec, Param, TensorCase
from oprt_core.dtypes import DType

__all__ = ["rms_norm_spec", "rms_norm_reference", "rms_norm_case"]

_EPS32 = DTYPES["f32"].eps


def rms_norm_reference(x: np.ndarray, weight: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """float64 reference (the spec casts the inputs to float64 first)."""
    if x.shape[-1] == 0:
        return np.empty(x.shape, np.float64)
    mean_sq = np.mean(x * x, axis=-1, keepdims=True)
    return x / np.sqrt(mean_sq + eps) * weight


def _check_params(shapes: list[tuple[int, ...]], params: dict) -> None:
    if not shapes[0]:
        raise InvalidArgumentError("rms_norm_example: x must have at least 1 dim (rows along its last axis), "
                                   "got a 0-d input")
    if params["eps"] < 0:
        raise InvalidArgumentError(f"rms_norm_example: eps must be >= 0, got {params['eps']!r}")


def _output_shape(shapes: list[tuple[int, ...]], params: dict) -> tuple[int, ...]:
    x, w = shapes
    if tuple(w) != (x[-1],):
        raise InvalidArgumentError(f"rms_norm_example: shape mismatch: weight has shape {tuple(w)}, expected "
                                   f"({x[-1]},) for x of shape {tuple(x)} (one weight per element of the last axis)")
    return tuple(x)


def _tolerance(dt: DType, inputs64, ref, params) -> tuple[float, float]:
    n = inputs64[0].shape[-1] if inputs64[0].ndim else 1
    rtol = 2 * dt.eps + (math.log2(n + 1) / 2 + 8) * _EPS32
    return float(ml_dtypes.finfo(dt.numpy).smallest_subnormal), rtol


def _budget(dtype: str) -> Budget:
    """The budget at n = 4096 (``_tolerance`` gives the one of each case's own n)."""
    dt = DTYPES[dtype]
    return Budget(2 * dt.eps + (math.log2(4097) / 2 + 8) * _EPS32, float(ml_dtypes.finfo(dt.numpy).smallest_subnormal))


def _bytes(case: Case, dt: DType) -> int:
    x, w = (t.shape for t in case.inputs)
    return (2 * math.prod(x) + math.prod(w)) * dt.itemsize  # read x and weight, write out


def _flops(case: Case) -> int:
    x = case.inputs[0].shape
    rows = math.prod(x[:-1]) if x else 0
    # per element: square, add (the mean), two multiplies (by the row's rsqrt and the weight);
    # per row: divide by n, add eps, rsqrt
    return 4 * math.prod(x) + 3 * rows


def rms_norm_case(shape: tuple[int, ...], layout: str = "contiguous", eps: float = 1e-6,
                  weight_layout: str = "contiguous", name: str | None = None) -> Case:
    """A case: x of ``shape`` laid out as ``layout``, weight of shape ``(shape[-1],)``."""
    shape = tuple(shape)
    label = name or ("x".join(map(str, shape)) + ("" if layout == "contiguous" else f"-{layout}")
                     + ("" if weight_layout == "contiguous" else f"-weight_{weight_layout}")
                     + ("" if eps == 1e-6 else f"-eps{eps:g}"))
    return Case("rms_norm_example", label, (TensorCase(shape, layout), TensorCase(shape[-1:], weight_layout)),
                (("eps", eps),))


_c = rms_norm_case

rms_norm_spec = OpSpec(
    name="rms_norm_example",
    doc="out = x / sqrt(mean(x**2 over the last axis) + eps) * weight; weight has shape (x.shape[-1],).",
    n_inputs=2,
    input_names=("x", "weight"),
    params=(Param("eps", (float, int), 1e-6, "added to the mean of squares before the square root", ctype="float"),),
    reference_fn=rms_norm_reference,
    output_shape_fn=_output_shape,
    param_check_fn=_check_params,
    bytes_fn=_bytes,
    flops_fn=_flops,
    budgets={d: _budget(d) for d in DTYPES},
    tolerance_fn=_tolerance,
    case_sets={
        "smoke": [_c((64, 1000)), _c((17, 513), eps=0.1), _c((65, 129), "transposed")],
        # LLM hidden sizes: many tokens by 1024..8192 channels, plus a long thin and a wide short one
        "default": [_c((16384, 1024)), _c((4096, 4096)), _c((2048, 8192)), _c((65536, 128)), _c((256, 65536)),
                    _c((4096, 4096), "step2")],
        "large": [_c((65536, 4096)), _c((32768, 8192)), _c((1 << 20, 128)), _c((4096, 65536))],
        "edge": [
            _c((1,)), _c((7,)), _c((1, 1)), _c((7, 1)), _c((1000, 1)), _c((0, 5)), _c((5, 0)), _c((0,)),
            _c((3, 1001)), _c((1, 4099)), _c((5, 7, 9)), _c((2, 3, 5, 33)), _c((2, 3, 4, 5, 7)),
            _c((37, 129), "transposed"), _c((129, 255), "step2"), _c((999,), "offset1"), _c((17, 31), "reversed"),
            _c((5, 31), "broadcast0"), _c((33, 65), weight_layout="step2"), _c((19, 77), weight_layout="offset1"),
            _c((9, 300), eps=0.1), _c((9, 300), eps=0), _c((2, 20000)),
        ],
    },
    custom_case_fn=lambda shape, params: rms_norm_case(shape, eps=params["eps"]),
)
