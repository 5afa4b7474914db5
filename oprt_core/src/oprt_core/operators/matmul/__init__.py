"""matmul: ``out = alpha * a @ b + beta * c``, BLAS's GEMM, batched or not, f32 / f16 / bf16 and e4m3 inputs
(README.md: shapes, dtypes, budget, bytes, flops, aliasing)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import model_shapes
from ...dtypes import DTYPES, OPT_IN_DTYPES, DType
from ...errors import InvalidArgumentError
from ...spec import Budget, Case, OpSpec, Param, TensorCase, format_shape
from .._shared import EPS32

__all__ = ["SPEC", "GROUP", "ORDER", "matmul_case", "matmul_dims", "matmul_atol_factor", "EPS_TF32", "EPS_FP8_ACC"]

GROUP = "compute"
ORDER = 210

EPS_TF32 = 2.0 ** -10  # TF32: 10 explicit mantissa bits
#: The spacing of 1.0 in the sums of Hopper's fp8 tensor cores (README.md): 13 significand bits kept where
#: f32 keeps 24, read as a 13-bit significand (2^-12), and as truncation rather than rounding (one ulp per add).
EPS_FP8_ACC = 2.0 ** -12
_OUTPUT_DTYPES = {"e4m3": "bf16"}  # matmul's mixed dtypes: e4m3 a and b, a bf16 out (and c)


def matmul_dims(shapes: list[tuple[int, ...]]) -> tuple[int, int, int, int]:
    """(B, M, N, K) of matmul's inputs a and b (the first two shapes; B = 1 for 2-D); InvalidArgumentError for
    ranks, inner dims or batch extents that do not fit."""
    a, b = (tuple(s) for s in shapes[:2])
    if len(a) not in (2, 3) or len(b) not in (2, 3):
        raise InvalidArgumentError(f"matmul: a and b must be 2-D (M, K) and (K, N), or 3-D (B, M, K) and (B, K, N); "
                                   f"got a of shape {a} and b of shape {b}")
    if len(a) != len(b):
        raise InvalidArgumentError(f"matmul: a and b must have the same rank (both 2-D or both 3-D, batched); got a "
                                   f"of shape {a} and b of shape {b}")
    if a[-1] != b[-2]:
        raise InvalidArgumentError(f"matmul: inner dims mismatch: a of shape {a} has K = {a[-1]} columns but b of "
                                   f"shape {b} has {b[-2]} rows; a's last extent must equal b's second-to-last")
    if len(a) == 3 and a[0] != b[0]:
        raise InvalidArgumentError(f"matmul: batch mismatch: a of shape {a} has batch {a[0]} but b of shape {b} has "
                                   f"{b[0]}; batched inputs must have the same batch extent")
    batch = a[0] if len(a) == 3 else 1
    return batch, a[-2], b[-1], a[-1]


def _output_shape(shapes: list[tuple[int, ...]], params: dict) -> tuple[int, ...]:
    a, b = shapes[:2]
    matmul_dims(shapes)
    out = (*a[:-1], b[-1])
    if len(shapes) > 2 and tuple(shapes[2]) != out:
        raise InvalidArgumentError(f"matmul: c has shape {tuple(shapes[2])}, expected out's shape {out} for a of "
                                   f"shape {tuple(a)} and b of shape {tuple(b)} (c is not broadcast)")
    return out


def _check_params(shapes: list[tuple[int, ...]], params: dict) -> None:
    if params["beta"] != 0 and len(shapes) < 3:
        raise InvalidArgumentError(f"matmul: beta is {params['beta']!r} but c is not given: alpha * a @ b + beta * c "
                                   "needs c, of out's shape (pass c, or beta=0.0)")


def _has_c(case: Case) -> bool:
    """Whether a case's ``c`` is read: given, and beta != 0."""
    return len(case.inputs) > 2 and case.param_dict.get("beta", 0.0) != 0


def _matmul_ref(a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None, alpha: float = 1.0, beta: float = 0.0,
                allow_tf32: bool = False) -> np.ndarray:
    out = alpha * np.matmul(a, b)
    if c is not None and beta != 0:  # beta == 0: c is not read (a NaN there does not propagate), as in BLAS
        out += beta * c
    return out


def matmul_atol_factor(k: int, dt: DType, allow_tf32: bool = False) -> float:
    """atol_ij / S_ij of the budget (README.md): ``(2 sqrt(K) + 2) eps(f32)``, plus eps(tf32) where TF32 is allowed
    on f32 inputs; e4m3 inputs: atol_ij / Q_ij, ``8 (sqrt(K) + 1) EPS_FP8_ACC`` (fp8 tensor cores' sums)."""
    if dt.name == "e4m3":
        return 8 * (math.sqrt(k) + 1) * EPS_FP8_ACC
    factor = (2 * math.sqrt(k) + 2) * EPS32
    return factor + (EPS_TF32 if allow_tf32 and dt.name == "f32" else 0.0)


def _tolerance(dt: DType, inputs64: Any, ref: np.ndarray, params: dict) -> tuple[np.ndarray, float]:
    """(atol per element, rtol) of a row of ``dt`` (the inputs'): the rounding term in the output dtype's eps."""
    a, b = inputs64[:2]
    if dt.name == "e4m3":  # Q = sqrt(a^2 @ b^2), the scale of the partial sums on signed data (README.md)
        s = np.sqrt(np.matmul(np.square(a).astype(np.float32), np.square(b).astype(np.float32))).astype(np.float64)
        s *= abs(params["alpha"]) * matmul_atol_factor(a.shape[-1], dt)
        if len(inputs64) > 2 and params["beta"] != 0:
            s += (abs(params["beta"]) * EPS32) * np.abs(inputs64[2])
        return s, _out_dtype(dt).eps
    # the magnitudes' sum in float32: a bound's scale needs no more (it is 3-4 digits above its own error), and
    # float32 BLAS is twice as fast as float64 on large cases
    s = np.matmul(np.abs(a).astype(np.float32), np.abs(b).astype(np.float32)).astype(np.float64)
    s *= abs(params["alpha"]) * matmul_atol_factor(a.shape[-1], dt, params["allow_tf32"])
    if len(inputs64) > 2 and params["beta"] != 0:  # beta * c: one f32 product and one add (README.md)
        s += (abs(params["beta"]) * EPS32) * np.abs(inputs64[2])
    return s, _out_dtype(dt).eps


def _out_dtype(dt: DType) -> DType:
    """The output's (and c's) dtype in a row of ``dt``: bf16 for e4m3 inputs, else the inputs' own."""
    return DTYPES[_OUTPUT_DTYPES[dt.name]] if dt.name in _OUTPUT_DTYPES else dt


def _bytes(case: Case, dt: DType) -> int:
    batch, m, n, k = matmul_dims([t.shape for t in case.inputs])
    out_size = _out_dtype(dt).itemsize  # e4m3 inputs: 1 byte an element, the bf16 out and c 2
    return batch * ((m * k + k * n) * dt.itemsize + m * n * (2 if _has_c(case) else 1) * out_size)


def _flops(case: Case) -> int:
    batch, m, n, k = matmul_dims([t.shape for t in case.inputs])
    return 2 * batch * m * n * (k + (1 if _has_c(case) else 0))


# ---------------------------------------------------------------------------------------
# cases


def matmul_case(m: int, n: int, k: int, batch: int | None = None, a_layout: str = "contiguous",
                b_layout: str = "contiguous", name: str | None = None, c_layout: str | None = None,
                **params: Any) -> Case:
    """A case of matmul: ``a`` of ``(M, K)`` laid out as ``a_layout`` times ``b`` of ``(K, N)`` laid out as
    ``b_layout`` (``batch``: both with a leading batch extent); ``c_layout``: with an input ``c`` of out's shape so
    laid out (default: a contiguous ``c`` where ``beta`` is given and not 0, none otherwise); ``name`` the case's
    name (default ``MxNxK``, with ``b<B>-`` before it and the layouts and params after it); ``params`` alpha, beta,
    allow_tf32."""
    lead = () if batch is None else (batch,)
    label = ("" if batch is None else f"b{batch}-") + f"{m}x{n}x{k}"
    if a_layout != "contiguous":
        label += f"-a_{a_layout}"
    if b_layout != "contiguous":
        label += f"-b_{b_layout}"
    if c_layout is None and params.get("beta", 0.0) != 0:
        c_layout = "contiguous"
    if c_layout is not None:
        label += "-c" if c_layout == "contiguous" else f"-c_{c_layout}"
    for key, value in sorted(params.items()):
        label += f"-{key}" if value is True else "" if value is False else f"-{key}{value:g}"
    inputs = [TensorCase((*lead, m, k), a_layout), TensorCase((*lead, k, n), b_layout)]
    if c_layout is not None:
        inputs.append(TensorCase((*lead, m, n), c_layout))
    return Case("matmul", name or label, tuple(inputs), tuple(sorted(params.items())))


def _custom_case(shape: tuple[int, ...], params: dict) -> Case:
    """``--shape``: a's shape, ``MxK`` or ``BxMxK``; b is ``KxM`` (``BxKxM``): a square product when M == K; with
    ``beta != 0`` a contiguous c of out's shape, ``MxM`` (``BxMxM``)."""
    if len(shape) not in (2, 3):
        raise InvalidArgumentError(f"matmul: --shape gives a's shape, MxK or BxMxK (b is then KxM or BxKxM); got "
                                   f"{format_shape(shape)}")
    extra = {p: params[p] for p in ("alpha", "beta", "allow_tf32") if params[p] != _DEFAULTS[p]}
    batch = shape[0] if len(shape) == 3 else None
    m, k = shape[-2:]
    return matmul_case(m, m, k, batch, **extra)


_DEFAULTS = {"alpha": 1.0, "beta": 0.0, "allow_tf32": False}


def _case_sets() -> dict[str, list[Case]]:
    c = matmul_case
    # a model's weight W is stored (N, K) row-major and multiplied as x @ W.T: b is a transposed view
    model = [c(t, g.n, g.k, b_layout="transposed", name=f"{g.name}/{t}tok")
             for g in model_shapes.GEMMS for t in model_shapes.GEMM_TOKENS]
    return {
        "smoke": [c(64, 48, 32), c(17, 33, 65, b_layout="transposed"), c(8, 16, 24, batch=3, alpha=0.5),
                  c(24, 40, 56, alpha=0.5, beta=-1.0), c(5, 9, 13, batch=2, b_layout="transposed", beta=0.25)],
        "default": [
            *(c(n, n, n) for n in (256, 512, 1024, 2048, 4096)),
            c(4096, 6144, 4096, b_layout="transposed", name="llama3-8b/qkv/4096tok"),
            c(4096, 4096, 14336, b_layout="transposed", name="llama3-8b/mlp-down/4096tok"),
            c(16, 28672, 4096, b_layout="transposed", name="llama3-8b/mlp-up/16tok"),
            c(1024, 1024, 128, batch=32, name="b32-1024x1024x128"),
            c(4096, 4096, 4096, beta=1.0),  # C += A @ B: c read, out written
        ],
        # and two with a column-major b, as torch._scaled_mm takes fp8 operands (the e4m3 baseline)
        "large": [*(c(n, n, n) for n in (8192, 12288, 16384)),
                  *(c(n, n, n, b_layout="transposed") for n in (8192, 16384))],
        "edge": [
            c(1, 1, 1), c(1, 7, 5), c(7, 1, 5), c(33, 17, 1), c(127, 129, 131), c(5, 3, 1000),
            c(0, 5, 7), c(5, 0, 7), c(5, 7, 0),
            c(37, 29, 41, a_layout="transposed"), c(37, 29, 41, b_layout="transposed"),
            c(37, 29, 41, a_layout="transposed", b_layout="transposed"),
            c(19, 23, 31, a_layout="step2", b_layout="offset1"), c(19, 23, 31, a_layout="reversed"),
            c(9, 11, 13, batch=1), c(9, 11, 13, batch=4, a_layout="transposed"), c(9, 11, 13, batch=2, alpha=-2.5),
            c(65, 63, 257, allow_tf32=True),
            c(1, 1, 1, beta=1.0), c(5, 7, 0, beta=-2.0), c(0, 5, 7, beta=1.0),  # K = 0: out = beta * c
            c(37, 29, 41, c_layout="transposed", alpha=-1.0, beta=0.5),
            c(19, 23, 31, a_layout="transposed", c_layout="step2", beta=2.0),
            c(9, 11, 13, batch=3, c_layout="reversed", beta=-0.75),
            c(33, 17, 9, c_layout="offset1", alpha=0.0, beta=1.5),  # alpha 0: out = beta * c
            c(13, 11, 7, c_layout="contiguous", beta=0.0),  # c given, beta 0: not read
            # the layout and sizes torch._scaled_mm takes (row-major a, column-major b, K and N multiples of 16), M
            # odd and M = 1: e4m3 edges its baseline runs too
            c(17, 32, 48, b_layout="transposed", alpha=0.75), c(1, 16, 16, b_layout="transposed"),
        ],
        # the QKV, out-proj and MLP GEMMs of published layers (oprt_core.model_shapes) at decode (1-64 tokens)
        # and prompt (512-16384 tokens) sizes
        "models": model,
    }


# ---------------------------------------------------------------------------------------
# the spec

SPEC = OpSpec(
    name="matmul",
    doc="out = alpha * a @ b + beta * c: (M, K) @ (K, N) -> (M, N), or batched (B, M, K) @ (B, K, N) -> (B, M, N); "
        "c optional, of out's shape; f32 accumulation.",
    api_doc="""Matrix product ``alpha * a @ b + beta * c`` (BLAS's GEMM), the products summed in f32 and the result
    rounded once to the inputs' dtype (bf16 for e4m3 inputs).

    fp8: ``a`` and ``b`` of e4m3 (``ml_dtypes.float8_e4m3fn``) give a bf16 result, and take a bf16 ``c``. A
    per-tensor scale of each operand (``a = scale_a * A8``, ``b = scale_b * B8``, A8 and B8 the stored e4m3 values)
    goes into ``alpha = scale_a * scale_b``: ``matmul(A8, B8, alpha=scale_a * scale_b)`` computes what
    ``torch._scaled_mm(A8, B8, scale_a, scale_b, out_dtype=torch.bfloat16)`` does with scalar scales. A kernel on
    fp8 tensor cores may sum in their reduced precision; the error budget allows for it.

    Args:
        a: an array of f32, f16, bf16 or e4m3 of shape ``(M, K)``, or ``(B, M, K)`` batched; any strides (``W.T``
            of a row-major ``W`` is a column-major operand, nothing is copied). A Python list is converted by
            ``numpy.asarray``, Python floats to f32.
        b: an array of ``a``'s dtype of shape ``(K, N)``, or ``(B, K, N)`` with ``a``'s batch extent.
        c: None, or an array of ``a``'s dtype (bf16, the output's, for e4m3 inputs) and exactly the output's
            shape (``(M, N)`` or ``(B, M, N)``, no broadcasting), any strides; ``beta != 0`` needs it. With ``beta ==
            0`` it is not read (BLAS's rule: a NaN there does not reach the result). ``out`` may be ``c`` itself
            (``C += A @ B`` in place).
        alpha: a finite float scaling the product (e4m3 inputs: the product of their per-tensor scales).
        beta: a finite float scaling ``c``; 0.0 (the default) leaves ``c`` out.
        allow_tf32: for f32 inputs, let a kernel round them to TF32 (10 mantissa bits) on tensor cores; the error
            budget widens by 2^-10 of the products' magnitudes. No effect on f16, bf16 and e4m3.
    """,
    n_inputs=3,
    input_names=("a", "b", "c"),
    optional_inputs=("c",),
    inplace=("c",),
    params=(Param("alpha", (float, int), 1.0, "scales the product a @ b", ctype="float"),
            Param("beta", (float, int), 0.0, "scales c in alpha * a @ b + beta * c; not 0 needs c, 0 leaves c unread",
                  ctype="float"),
            Param("allow_tf32", (bool,), False, "f32 inputs may be rounded to TF32 on tensor cores",
                  ctype="int32_t")),
    reference_fn=_matmul_ref,
    param_check_fn=_check_params,
    output_shape_fn=_output_shape,
    bytes_fn=_bytes,
    flops_fn=_flops,
    # the budgets at K = 4096 on uniform [-1, 1) data (S ~ K / 4; e4m3: Q ~ sqrt(K) / 3); tolerance_fn gives each
    # case's own, per element from |a| @ |b| (e4m3: a^2 @ b^2)
    budgets={**{d: Budget(DTYPES[d].eps, matmul_atol_factor(4096, DTYPES[d]) * 1024) for d in DTYPES},
             "e4m3": Budget(DTYPES["bf16"].eps, matmul_atol_factor(4096, OPT_IN_DTYPES["e4m3"]) * 64 / 3)},
    dtypes=(*DTYPES, "e4m3"),
    output_dtypes=_OUTPUT_DTYPES,
    tolerance_fn=_tolerance,
    case_sets=_case_sets(),
    custom_case_fn=_custom_case,
)
