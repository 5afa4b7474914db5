"""Planning for the TileLang kernels: shape classes, kernel keys and the kernel column, in pure Python.

The kernels take contiguous tensors with dynamic extents (``T.dynamic``), so one compiled kernel serves
every shape of its *shape class*. A plan says which kernels a call launches and how the call's tensors
are viewed for them:

- elementwise (copy, relu, vector_add): one flat index over ``n`` elements (``ew_<op>``); vector_add with
  ``b`` (or ``a``) repeated along the leading dims reads it at ``idx % row`` (``ew_add_row``). Other
  broadcasts are expanded to the output's shape first.
- reduce_sum: the input viewed as ``(outer, n, inner)``; ``inner == 1`` sums rows (``sum_rows``, a
  ``[BO, BK]`` tile per step, reduced across threads), else columns (``sum_cols``, a ``[BK, BI]`` tile, the
  long block along the contiguous inner dim). Few outputs and a long ``n``: the reduced axis is split over
  ``split`` blocks into f32 partials, then ``sum_cols`` adds the partials up.
- softmax: ``(outer, n, inner)`` likewise; rows of up to ``SOFTMAX_SINGLE_MAX`` elements are held in one
  fragment (``softmax_rows``), longer ones take an online max/sum pass and a normalising pass
  (``softmax_rows_online``); ``inner > 1`` runs one column per thread with an online max/sum
  (``softmax_cols``).

A shape class is the set of :class:`KernelKey` a plan uses: the factory, the dtypes and the block sizes
chosen from the extents' bucket (next power of two, clamped). Keys are the in-memory cache's keys;
tilelang's own disk cache (under :func:`cache_dir`) keys the generated kernel source.

Inputs that are not contiguous (transposed, stepped, offset views, stride-0 broadcasts) are made
contiguous first (``x.contiguous()``, inside the timed call: the kernel column says so), and an output
that is not contiguous is written through a contiguous buffer copied back. Negative strides never
reach here: torch tensors cannot hold them. Extents of 2**31 elements or more are refused (the kernels
index in int32).

Nothing here imports tilelang or torch: the planning is tested on any machine.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oprt_core import UnsupportedCase

__all__ = ["TL_DTYPES", "MAX_ELEMENTS", "SOFTMAX_SINGLE_MAX", "KernelKey", "Plan", "next_pow2", "clamp_pow2",
           "is_contiguous", "contiguous_strides", "plan_call", "kernel_text", "cache_dir"]

#: oprt's dtype names -> TileLang's
TL_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}
MAX_ELEMENTS = 2**31 - 1  # the kernels index in int32
SOFTMAX_SINGLE_MAX = 8192  # a row this long (or shorter) is held in one fragment
EW_BLOCK, EW_THREADS = 1024, 256
TILE = 4096  # elements of a reduction tile (f32: 16 registers a thread at 256 threads)


def next_pow2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


def clamp_pow2(n: int, lo: int, hi: int) -> int:
    """The next power of two of ``n``, clamped to [lo, hi] (the extent's bucket)."""
    return max(lo, min(hi, next_pow2(n)))


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    out, step = [], 1
    for n in reversed(tuple(shape)):
        out.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(out))


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Row-major contiguous (dims of extent 1 may have any stride, as torch's ``is_contiguous``)."""
    if math.prod(shape) == 0:
        return True
    want = contiguous_strides(shape)
    return all(n == 1 or s == w for n, s, w in zip(shape, strides, want))


@dataclass(frozen=True)
class KernelKey:
    """One compiled kernel: its factory, input and output dtypes (TileLang names) and the factory's parameters.

    The in-memory cache's key; two calls with equal keys share one compiled kernel."""

    factory: str
    in_dtype: str
    out_dtype: str
    params: tuple[tuple[str, int], ...] = ()

    def param(self, name: str) -> int:
        return dict(self.params)[name]

    def __str__(self) -> str:
        dts = self.in_dtype if self.in_dtype == self.out_dtype else f"{self.in_dtype}->{self.out_dtype}"
        return f"{self.factory}[{dts}{''.join(f', {k}={v}' for k, v in self.params)}]"


@dataclass(frozen=True)
class Plan:
    """How one call runs: ``kind`` says how tensors are viewed, ``dims`` the views' extents, ``keys`` the kernels.

    kinds: ``none`` (nothing to compute), ``zero`` (an empty sum: the output is zeroed), ``ew`` (dims
    ``(n,)``, or ``(n, row)`` for ew_add_row), ``rows`` (``(outer, n)``), ``cols`` (``(outer, n, inner)``).
    ``split`` > 1: the reduced axis is split into that many f32 partials, ``keys[1]`` sums them.
    ``swap``: vector_add's ``a`` is the repeated row (the kernel gets ``b, a``)."""

    op: str
    dtype: str
    kind: str
    dims: tuple[int, ...] = ()
    keys: tuple[KernelKey, ...] = ()
    split: int = 1
    swap: bool = False
    expand: bool = False  # inputs broadcast to the output's shape first
    contiguous_inputs: tuple[bool, ...] = field(default_factory=tuple)  # per input: made contiguous
    copy_out: bool = False  # the output is written through a contiguous buffer


def _ew_key(factory: str, dt: str) -> KernelKey:
    return KernelKey(factory, dt, dt, (("block", EW_BLOCK), ("threads", EW_THREADS)))


def _rows_key(factory: str, in_dt: str, out_dt: str, n: int) -> KernelKey:
    bk = clamp_pow2(n, 32, 1024)
    bo = max(1, min(64, TILE // bk))
    return KernelKey(factory, in_dt, out_dt, (("BO", bo), ("BK", bk), ("threads", 128 if bo * bk <= 2048 else 256)))


def _cols_key(factory: str, in_dt: str, out_dt: str, inner: int) -> KernelKey:
    bi = clamp_pow2(inner, 32, 256)
    return KernelKey(factory, in_dt, out_dt, (("BI", bi), ("BK", TILE // bi), ("threads", 256)))


def _split(blocks: int, n: int, bk: int, sm_count: int) -> int:
    """How many pieces to split a reduced axis of ``n`` into, when ``blocks`` outputs' blocks cannot fill the GPU."""
    if blocks >= 2 * sm_count or n < 8 * bk:
        return 1
    return max(1, min(-(-4 * sm_count // blocks), -(-n // (4 * bk))))


def _three(shape: tuple[int, ...], axis: int) -> tuple[int, int, int]:
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])


def _row_of(shape: tuple[int, ...], out_shape: tuple[int, ...]) -> int | None:
    """The length of the contiguous row ``shape`` repeats to fill ``out_shape`` (leading dims broadcast), or None."""
    padded = (1,) * (len(out_shape) - len(shape)) + shape
    j = len(out_shape)
    while j > 0 and padded[j - 1] == out_shape[j - 1]:
        j -= 1
    if any(n != 1 for n in padded[:j]):
        return None
    return math.prod(out_shape[j:])


def plan_call(op: str, dtype: str, in_shapes: Sequence[Sequence[int]], in_strides: Sequence[Sequence[int]],
              out_shape: Sequence[int], out_strides: Sequence[int], params: Mapping[str, Any],
              sm_count: int) -> Plan:
    """The plan of one core op call; UnsupportedCase for what the kernels cannot run (the reason in the message)."""
    if dtype not in TL_DTYPES:
        raise UnsupportedCase(f"the tilelang backend runs {', '.join(TL_DTYPES)}, not {dtype}")
    dt = TL_DTYPES[dtype]
    shapes = [tuple(int(n) for n in s) for s in in_shapes]
    strides = [tuple(int(x) for x in s) for s in in_strides]
    out_shape = tuple(int(n) for n in out_shape)
    if any(x < 0 for s in strides for x in s):
        raise UnsupportedCase("negative strides: torch tensors cannot express them")
    if max([math.prod(s) for s in shapes] + [math.prod(out_shape)]) > MAX_ELEMENTS:
        raise UnsupportedCase(f"more than {MAX_ELEMENTS} elements: the tilelang kernels index in int32")
    made = tuple(not is_contiguous(s, st) for s, st in zip(shapes, strides))
    copy_out = not is_contiguous(out_shape, out_strides)
    base = dict(op=op, dtype=dtype, copy_out=copy_out)
    numel = math.prod(out_shape)
    if numel == 0:
        return Plan(kind="none", contiguous_inputs=tuple(False for _ in shapes), **base)
    if op in ("copy", "relu"):
        return Plan(kind="ew", dims=(numel,), keys=(_ew_key(f"ew_{op}", dt),), contiguous_inputs=made,
                    **base)
    if op == "vector_add":
        a, b = shapes
        if a == b == out_shape:
            return Plan(kind="ew", dims=(numel,), keys=(_ew_key("ew_add", dt),), contiguous_inputs=made,
                        **base)
        for swap, (full, part) in ((False, (a, b)), (True, (b, a))):
            row = _row_of(part, out_shape) if full == out_shape else None
            if row is not None:
                return Plan(kind="ew", dims=(numel, row), keys=(_ew_key("ew_add_row", dt),), swap=swap,
                            contiguous_inputs=made, **base)
        return Plan(kind="ew", dims=(numel,), keys=(_ew_key("ew_add", dt),), expand=True,
                    contiguous_inputs=tuple(s != out_shape or m for s, m in zip(shapes, made)),
                    **base)
    (shape,) = shapes
    if op == "reduce_sum":
        axis = params.get("axis")
        if axis is None or not shape:
            outer, n, inner = 1, math.prod(shape), 1
        else:
            outer, n, inner = _three(shape, axis % len(shape))
        if n == 0:
            return Plan(kind="zero", contiguous_inputs=tuple(False for _ in shapes), **base)
        if inner == 1:
            key = _rows_key("sum_rows", dt, dt, n)
            split = _split(-(-outer // key.param("BO")), n, key.param("BK"), sm_count)
            kind, dims = "rows", (outer, n)
        else:
            key = _cols_key("sum_cols", dt, dt, inner)
            split = _split(outer * -(-inner // key.param("BI")), n, key.param("BK"), sm_count)
            kind, dims = "cols", (outer, n, inner)
        if split == 1:
            return Plan(kind=kind, dims=dims, keys=(key,), contiguous_inputs=made, **base)
        first = KernelKey(key.factory, dt, "float32", key.params)
        second = _cols_key("sum_cols", "float32", dt, outer * inner)
        return Plan(kind=kind, dims=dims, keys=(first, second), split=split, contiguous_inputs=made,
                    **base)
    if op == "softmax":
        if not shape:
            raise UnsupportedCase("softmax of a 0-d tensor has no axis")
        outer, n, inner = _three(shape, params.get("axis", -1) % len(shape))
        if inner == 1:
            if n <= SOFTMAX_SINGLE_MAX:
                bn = clamp_pow2(n, 32, SOFTMAX_SINGLE_MAX)
                bo = max(1, min(64, TILE // bn))
                key = KernelKey("softmax_rows", dt, dt, (("BO", bo), ("BN", bn),
                                                          ("threads", 128 if bo * bn <= 2048 else 256)))
            else:
                key = KernelKey("softmax_rows_online", dt, dt, (("BN", TILE), ("threads", 256)))
            return Plan(kind="rows", dims=(outer, n), keys=(key,), contiguous_inputs=made,
                        **base)
        bi = 256  # one column a thread: narrower blocks where there are too few columns to fill the GPU
        while bi > 32 and outer * -(-inner // bi) < 2 * sm_count:
            bi //= 2
        key = KernelKey("softmax_cols", dt, dt, (("BI", bi), ("threads", bi)))
        return Plan(kind="cols", dims=(outer, n, inner), keys=(key,), contiguous_inputs=made,
                    **base)
    raise UnsupportedCase(f"the tilelang backend has no kernel for {op!r}")


def kernel_text(plan: Plan) -> str:
    """The ``kernel`` column: ``tilelang <factory>[+<factory>]`` and, in parentheses, what the call does besides."""
    if plan.kind == "none":
        return "none"
    if plan.kind == "zero":
        return "torch zero_ (an empty sum)"
    names = "+".join(k.factory for k in plan.keys)
    notes = []
    made = sum(plan.contiguous_inputs)
    if plan.expand:
        notes.append("inputs broadcast to the output's shape")
    elif made:
        notes.append("input made contiguous" if len(plan.contiguous_inputs) == 1 else
                     "inputs made contiguous" if made == len(plan.contiguous_inputs) else
                     f"{'ab'[plan.contiguous_inputs.index(True)]} made contiguous")
    if plan.split > 1:
        notes.append(f"split into {plan.split} f32 partials")
    if plan.copy_out:
        notes.append("output copied back")
    return f"tilelang {names}" + (f" ({'; '.join(notes)})" if notes else "")


def cache_dir() -> Path:
    """Where compiled kernels are kept: ``$OPRT_CACHE_DIR/tilelang``, else ``$XDG_CACHE_HOME/oprt/tilelang``, else
    ``~/.cache/oprt/tilelang`` (oprt-bench's cache folder, and a ``tilelang`` folder in it)."""
    explicit = os.environ.get("OPRT_CACHE_DIR")
    if explicit:
        return Path(explicit) / "tilelang"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "oprt" / "tilelang"
