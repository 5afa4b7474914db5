"""cross_entropy: ``logsumexp(logits) - logits[target]`` per row, reduction none or mean (README.md: budget, bytes,
flops)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import model_shapes
from ...dtypes import DTYPES, INDEX_DTYPES, DType
from ...errors import InvalidArgumentError
from ...model_shapes import ModelShape, tokens
from ...spec import Budget, Case, OpSpec, Param, TensorCase, format_shape
from .._shared import EPS32, subnormal

__all__ = ["SPEC", "GROUP", "ORDER", "REDUCTIONS", "MODEL_SHAPES", "cross_entropy_case"]

GROUP = "model"
ORDER = 150

#: the ``models`` set: LLM logits over the vocabulary (Llama 2, GPT-2, Llama 3, Qwen2, Gemma) from one decoded token
#: to a training batch of 16384
MODEL_SHAPES: tuple[ModelShape, ...] = tuple(
    m for name, width, kind, source in model_shapes.LOSS_VOCABS
    for m in tokens(name, width, kind, source, model_shapes.LOSS_TOKENS + model_shapes.LOSS_LONG.get(width, ())))

#: cross_entropy's reductions (the C ABI passes the index: 0 none, 1 mean)
REDUCTIONS = ("none", "mean")


def _output_shape(shapes: list[tuple[int, ...]], params: dict) -> tuple[int, ...]:
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


def _parts(logits: np.ndarray, target: np.ndarray, ignore_index: int
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


def _reference(logits: np.ndarray, target: np.ndarray, ignore_index: int = -100, reduction: str = "none"
               ) -> np.ndarray:
    loss, ignored, *_ = _parts(logits, target, ignore_index)
    if reduction == "none":
        return loss
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.sum(loss) / np.count_nonzero(~ignored))  # no row counted: 0 / 0, NaN (as torch)


def _row_atol(logits: np.ndarray, target: np.ndarray, ignore_index: int) -> tuple[np.ndarray, np.ndarray]:
    """(atol per row, the rows' losses) of the budget (README.md)."""
    v = logits.shape[-1]
    loss, _, m, log_s, xt = _parts(logits, target, ignore_index)
    atol = ((math.log2(v + 1) + math.log(max(v, 1)) + 4) * EPS32
            + 2 * EPS32 * (np.abs(log_s) + np.abs(m) + np.abs(xt)))
    return atol, loss


def _tolerance(dt: DType, inputs64, ref, params) -> tuple[Any, float]:
    logits, target = inputs64
    atol, loss = _row_atol(logits, target, params["ignore_index"])
    tiny = subnormal(dt)
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
    return float(np.sum(np.where(counted, atol, 0.0))) / r + math.log2(r + 1) * EPS32 * abs(mean) + tiny, dt.eps


def _max_finite(dt: DType) -> float:
    """The largest value that rounds to a finite one in ``dt`` (its max plus half an ulp)."""
    big = float(dt.finfo.max)
    return big * (1 + dt.eps / 2)


def _rows(case: Case) -> int:
    return math.prod(case.inputs[0].shape[:-1]) if case.inputs[0].shape else 1


def _bytes(case: Case, dt: DType) -> int:
    rows = _rows(case)
    target = INDEX_DTYPES[case.inputs[1].dtype or "i64"].itemsize
    out = 1 if case.param_dict.get("reduction", "none") == "mean" else rows
    return case.numel * dt.itemsize + rows * target + out * dt.itemsize


def _flops(case: Case) -> int:
    rows = _rows(case)
    return 4 * case.numel + 3 * rows + (rows if case.param_dict.get("reduction", "none") == "mean" else 0)


def _targets(case: Case, name: str, count: int, rng: np.random.Generator) -> np.ndarray:
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


def _case_sets() -> dict[str, list[Case]]:
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
        # LLM logits at 1 to 16384 tokens (MODEL_SHAPES)
        "models": [c(m.shape, name=m.name) for m in MODEL_SHAPES],
    }


SPEC = OpSpec(
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
    index_fn=_targets,
    params=(Param("ignore_index", (int,), -100, "rows whose target equals it are ignored (loss 0, not in the mean)",
                  ctype="int32_t"),
            Param("reduction", (str,), "none", "none: the loss of each row; mean: their mean over the rows not "
                  "ignored", ctype="int32_t", choices=REDUCTIONS)),
    reference_fn=_reference,
    output_shape_fn=_output_shape,
    bytes_fn=_bytes,
    flops_fn=_flops,
    budgets={d: Budget(DTYPES[d].eps, (math.log2(128257) + math.log(128256) + 4) * EPS32) for d in DTYPES},
    tolerance_fn=_tolerance,
    case_sets=_case_sets(),
    custom_case_fn=lambda shape, params: cross_entropy_case(shape, reduction=params["reduction"],
                                                            ignore_index=params["ignore_index"]),
)
