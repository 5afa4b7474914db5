"""The ``gelu_tanh`` operator specification: GELU with the tanh approximation (GPT-2, BERT, Gemma's MLPs).

    out = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))

elementwise on ``x`` of any shape and strides; the output has ``x``'s shape and may be ``x`` itself (in place).
Not an op of oprt-core: this package declares it, with its reference, budget, cases, a numpy implementation, a
Triton kernel (for examples/oprt-triton) and a CUDA kernel behind the C ABI generated from this spec.

Error budget (|out - ref| <= atol + rtol * |ref| against a float64 reference computed from the same,
already-rounded inputs), for an implementation in f32 rounded once to the output dtype:

- u = sqrt(2/pi) * (x + 0.044715 x^3): four roundings, ~3 eps(f32) relative; tanh to ~2 ulp (CUDA's ``tanhf``;
  the hardware ``tanh.approx`` at ~2^-11 would be outside the f32 budget);
- 1 + tanh(u) cancels for u << 0: its absolute error is (|u| sech^2(u) * 3 + 3) * eps(f32) at most, and
  |u| sech^2(u) <= 0.45, so about 4.4 eps(f32) absolutely; times 0.5 |x|:
      atol_i = 3 * |x_i| * eps(f32) + the dtype's smallest subnormal (f32: its smallest normal)
- the two products and the rounding to the dtype: rtol = eps(dtype) + 4 * eps(f32).

The f32 term catches the erf form of GELU (up to 1.8e-4 off, relatively, at |x| ~ 1..2) and a dropped cubic term
(1%); in f16/bf16 the rounding dominates and only the second is caught. Inputs are uniform in [-4, 4): the curve's
bend and the tail where 1 + tanh cancels (at -4, out ~ -2.5e-4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from oprt_core import DTYPES, Budget, Case, OpSpec, TensorCase
from oprt_core.dtypes import DType, get_dtype
from oprt_core.spec import make_tensor

__all__ = ["gelu_tanh_spec", "gelu_tanh_reference", "gelu_tanh_case", "GeluSpec", "SCALE"]

_EPS32 = DTYPES["f32"].eps
_C = math.sqrt(2.0 / math.pi)
_A = 0.044715
SCALE = 4.0  # inputs uniform in [-SCALE, SCALE)


def gelu_tanh_reference(x: np.ndarray) -> np.ndarray:
    """float64 reference (the spec casts the input to float64 first)."""
    return 0.5 * x * (1.0 + np.tanh(_C * (x + _A * x * x * x)))


def _tiny(dt: DType) -> float:
    return float(np.finfo(np.float32).tiny) if dt.name == "f32" else dt.smallest_subnormal


def _tolerance(dt: DType, inputs64, ref, params) -> tuple[np.ndarray, float]:
    return 3 * np.abs(inputs64[0]) * _EPS32 + _tiny(dt), dt.eps + 4 * _EPS32


def gelu_tanh_case(shape: tuple[int, ...], layout: str = "contiguous", name: str | None = None) -> Case:
    """A case: x of ``shape`` laid out as ``layout``."""
    shape = tuple(shape)
    label = name or ("x".join(map(str, shape)) or "scalar") + ("" if layout == "contiguous" else f"-{layout}")
    return Case("gelu_tanh", label, (TensorCase(shape, layout),))


@dataclass
class GeluSpec(OpSpec):
    """An OpSpec whose inputs are uniform in [-SCALE, SCALE) rather than [-1, 1): GELU bends over [-3, 3]."""

    def make_inputs(self, case: Case, dtype: str | DType, rng: np.random.Generator) -> list[np.ndarray]:
        dt = get_dtype(dtype)
        # drawn in [-1, 1) as every op's (never zero), scaled by a power of two: exact in every dtype
        return [(make_tensor(t, dt, rng, case.data).astype(np.float32) * SCALE).astype(dt.numpy)
                if t.layout == "contiguous" else _scaled(t, dt, rng, case.data) for t in case.inputs]


def _scaled(t: TensorCase, dt: DType, rng: np.random.Generator, data: str) -> np.ndarray:
    """A strided input scaled in place, its layout (a view of a larger buffer) kept."""
    a = make_tensor(t, dt, rng, data)
    base = a.base if a.base is not None else a
    if base.flags.writeable:
        base[...] = (base.astype(np.float32) * SCALE).astype(dt.numpy)
        return a
    return a  # a broadcast view of a read-only buffer: left in [-1, 1)


_c = gelu_tanh_case

gelu_tanh_spec = GeluSpec(
    name="gelu_tanh",
    doc="out = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3))), elementwise (GELU, tanh approximation).",
    api_doc="""GELU with the tanh approximation, elementwise: ``0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 *
    x**3)))``; computed in f32 and rounded once to ``x``'s dtype.

    Args:
        x: an array of f32, f16 or bf16, any shape and strides.
    """,
    n_inputs=1,
    input_names=("x",),
    inplace=("x",),
    reference_fn=gelu_tanh_reference,
    bytes_fn=lambda case, dt: 2 * case.numel * dt.itemsize,  # read x, write out
    # per element: x*x, *x, *0.044715, +x, *sqrt(2/pi), tanh, +1, *x, *0.5
    flops_fn=lambda case: 9 * case.numel,
    budgets={d: Budget(DTYPES[d].eps + 4 * _EPS32, _tiny(DTYPES[d])) for d in DTYPES},
    tolerance_fn=_tolerance,
    case_sets={
        "smoke": [_c((4096,)), _c((3, 5, 33), "step2"), _c((17, 65), "transposed")],
        # MLP activations: tokens x intermediate size (GPT-2 3072, BERT-large 4096, Gemma 7B 24576)
        "default": [_c((4096, 3072)), _c((4096, 4096)), _c((4096, 11008)), _c((2048, 24576)), _c((16384, 8192))],
        "large": [_c((16384, 24576)), _c((32768, 8192))],
        "edge": [
            _c(()), _c((1,)), _c((0,)), _c((7,)), _c((0, 5)), _c((1000003,)), _c((3, 5, 7)),
            _c((37, 129), "transposed"), _c((129, 255), "step2"), _c((999,), "offset1"), _c((17, 31), "reversed"),
            _c((5, 31), "broadcast0"),
        ],
    },
    custom_case_fn=lambda shape, params: gelu_tanh_case(shape),
)
