"""rope: rotary position embedding of q and k, two outputs (README.md: budget, bytes, flops, aliasing)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...dtypes import DTYPES, INDEX_DTYPES, DType
from ...errors import InvalidArgumentError
from ...spec import Budget, Case, OpSpec, Output, Param, TensorCase, format_shape
from .._shared import EPS32, subnormal

__all__ = ["SPEC", "GROUP", "ORDER", "ROPE_STYLES", "ROPE_MAX_HEAD_DIM", "RopeShape", "MODEL_SHAPES", "rope_case"]

GROUP = "model"
ORDER = 160

#: rope's pairing styles (the C ABI passes the index: 0 neox, 1 gptj)
ROPE_STYLES = ("neox", "gptj")
#: the widest head rope takes (a thread of the GPU kernels keeps a token's cos / sin in registers)
ROPE_MAX_HEAD_DIM = 256


@dataclass(frozen=True)
class RopeShape:
    """One case of the ``models`` set: q of shape ``(tokens, heads, head_dim)``, k of ``(tokens, kv_heads,
    head_dim)``, a cos / sin cache of ``positions`` rows, the pairing ``style`` (neox: halves, gptj: interleaved)
    and the public config the numbers come from."""

    name: str
    tokens: int
    heads: int
    kv_heads: int
    head_dim: int
    style: str
    positions: int
    source: str


# (model, attention heads, key/value heads, rotated head dims, style, max_position_embeddings, source)
MODELS = (
    ("llama3-8b", 32, 8, 128, "neox", 8192, "meta-llama/Meta-Llama-3-8B config.json (HF rotate_half: halves)"),
    ("qwen2-7b", 28, 4, 128, "neox", 32768, "Qwen/Qwen2-7B config.json (HF rotate_half: halves)"),
    ("mistral-7b", 32, 8, 128, "neox", 32768, "mistralai/Mistral-7B-v0.1 config.json (HF rotate_half: halves)"),
    # GPT-J rotates the first rotary_dim = 64 of each 256-wide head, pairs interleaved (rotate_every_two)
    ("gpt-j-6b", 16, 16, 64, "gptj", 2048, "EleutherAI/gpt-j-6b config.json: 16 heads, rotary_dim 64 "
     "(rotate_every_two: interleaved pairs)"),
)
MODEL_TOKENS = (1, 16, 512, 4096, 16384)

#: the ``models`` set: q and k of each model from one decoded token to a prompt of 16384 tokens
MODEL_SHAPES: tuple[RopeShape, ...] = tuple(
    RopeShape(f"{model}/rope/{t}tok", t, heads, kv, dim, style, pos, source)
    for model, heads, kv, dim, style, pos, source in MODELS for t in MODEL_TOKENS)


def _shapes(shapes: list[tuple[int, ...]], params: dict) -> tuple[tuple[int, ...], tuple[int, ...]]:
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


def _pairs(x: np.ndarray, style: str) -> tuple[Any, Any]:
    """The index expressions of the pairs' first and second elements along the last axis of ``x``."""
    half = x.shape[-1] // 2
    if style == "neox":
        return (..., slice(0, half)), (..., slice(half, None))
    return (..., slice(0, None, 2)), (..., slice(1, None, 2))


def _cs(cos: np.ndarray, sin: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(c, s, valid): each token's cos / sin row as (T, 1, D/2) (row 0 for a position out of range) and whether
    its position is in [0, P)."""
    pos = np.asarray(positions, np.int64)
    valid = (pos >= 0) & (pos < cos.shape[0])
    rows = np.where(valid, pos, 0)
    if cos.shape[0] == 0:  # no token either (the shape check)
        empty = np.zeros((pos.shape[0], 1, cos.shape[1]), cos.dtype)
        return empty, empty, valid
    return cos[rows][:, None, :], sin[rows][:, None, :], valid


def _apply(x: np.ndarray, c: np.ndarray, s: np.ndarray, valid: np.ndarray, style: str) -> np.ndarray:
    i1, i2 = _pairs(x, style)
    x1, x2 = x[i1], x[i2]
    out = np.empty(x.shape, np.result_type(x, c))
    out[i1] = x1 * c - x2 * s
    out[i2] = x2 * c + x1 * s
    out[~valid] = np.nan
    return out


def _reference(q: np.ndarray, k: np.ndarray, cos: np.ndarray, sin: np.ndarray, positions: np.ndarray,
              style: str = "neox") -> tuple[np.ndarray, np.ndarray]:
    c, s, valid = _cs(cos, sin, positions)
    return _apply(q, c, s, valid, style), _apply(k, c, s, valid, style)


def _tolerance(which: int) -> Callable[..., tuple[Any, float]]:
    """tolerance_fn of q_out (``which`` 0) or k_out (1): the per-element atol of the budget (README.md)."""

    def tolerance(dt: DType, inputs64, ref, params) -> tuple[Any, float]:
        x, cos, sin, positions = inputs64[which], inputs64[2], inputs64[3], inputs64[4]
        c, s, _ = _cs(np.abs(cos), np.abs(sin), positions)
        i1, i2 = _pairs(x, params["style"])
        a1, a2 = np.abs(x[i1]), np.abs(x[i2])
        atol = np.empty(x.shape)
        atol[i1] = a1 * c + a2 * s
        atol[i2] = a2 * c + a1 * s
        return atol * (2 * EPS32) + subnormal(dt), dt.eps

    return tolerance


def _tokens(case: Case) -> int:
    return case.inputs[0].shape[0]


def _bytes(case: Case, dt: DType) -> int:
    """q and k read and written; the cos and sin rows of each token's position (D/2 elements each, counted once
    per token: T * D elements for both); the positions."""
    q, k = (math.prod(t.shape) for t in case.inputs[:2])
    t, d = _tokens(case), case.inputs[0].shape[2]
    pos = INDEX_DTYPES[case.inputs[4].dtype or "i64"].itemsize
    return (2 * (q + k) + t * d) * dt.itemsize + t * pos


def _positions(case: Case, name: str, count: int, rng: np.random.Generator) -> np.ndarray:
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


def _custom(shape: tuple[int, ...], params: dict) -> Case:
    if len(shape) != 3:
        raise InvalidArgumentError(f"rope: a shape is q's (tokens, heads, head_dim), got {format_shape(shape)}")
    t, h, d = shape
    return rope_case(t, h, h, d, params["style"])


def _case_sets() -> dict[str, list[Case]]:
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
        # q and k of LLMs from 1 to 16384 tokens (MODEL_SHAPES)
        "models": [c(m.tokens, m.heads, m.kv_heads, m.head_dim, m.style, m.positions, name=m.name)
                   for m in MODEL_SHAPES],
    }


SPEC = OpSpec(
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
    index_fn=_positions,
    outputs=(
        Output("q_out", shape_fn=lambda shapes, params: _shapes(shapes, params)[0], inplace=("q",),
               tolerance_fn=_tolerance(0), doc="q rotated"),
        Output("k_out", shape_fn=lambda shapes, params: _shapes(shapes, params)[1], inplace=("k",),
               tolerance_fn=_tolerance(1), doc="k rotated"),
    ),
    params=(Param("style", (str,), "neox", "neox: pairs (i, i + D/2); gptj: pairs (2i, 2i + 1)", ctype="int32_t",
                  choices=ROPE_STYLES),),
    reference_fn=_reference,
    bytes_fn=_bytes,
    flops_fn=lambda case: 3 * sum(math.prod(t.shape) for t in case.inputs[:2]),
    budgets={d: Budget(DTYPES[d].eps, 4 * EPS32) for d in DTYPES},
    case_sets=_case_sets(),
    custom_case_fn=_custom,
)
