"""Layout planning for the Triton kernels: pure Python over shapes and element strides.

The kernels index at most 4 dims (elementwise) or 3 outer dims plus the reduced one (reductions,
softmax, row norms). Before launching, dims are simplified jointly over every tensor of the call:
extent-1 dims are dropped and neighbouring dims merged where each tensor steps through them as one
(``stride[i] == stride[i + 1] * shape[i + 1]``). A layout that still needs more dims is refused with
:class:`oprt_core.UnsupportedCase` (never silently copied to a contiguous buffer): ``supports`` runs
the same planning on a case's layouts, so such a case is reported as unsupported up front.

Nothing here imports triton or torch: the planners are tested on any machine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from oprt_core import UnsupportedCase
from oprt_core.spec import TensorCase

__all__ = ["MAX_DIMS", "MAX_OUTER_DIMS", "contiguous_strides", "case_strides", "broadcast_strides", "collapse",
           "pad_dims", "Elementwise", "plan_elementwise", "Rows", "plan_rows", "next_pow2"]

MAX_DIMS = 4  # dims the strided elementwise kernel indexes
MAX_OUTER_DIMS = 3  # dims besides the reduced one that the row kernels index

Shape = tuple[int, ...]
Strides = tuple[int, ...]


def next_pow2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


def contiguous_strides(shape: Sequence[int]) -> Strides:
    """Row-major strides in elements."""
    out, step = [], 1
    for n in reversed(tuple(shape)):
        out.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(out))


def case_strides(t: TensorCase) -> Strides:
    """The element strides :func:`oprt_core.spec.make_tensor` gives a case input (no array is built)."""
    shape = tuple(t.shape)
    if t.layout == "transposed":
        s = contiguous_strides(shape[:-2] + (shape[-1], shape[-2]))
        return s[:-2] + (s[-1], s[-2])
    if t.layout == "step2" and shape:
        s = contiguous_strides(shape[:-1] + (2 * shape[-1],))
        return s[:-1] + (2 * s[-1],)
    if t.layout == "reversed" and shape:
        s = contiguous_strides(shape)
        return s[:-1] + (-s[-1],)
    if t.layout == "broadcast0" and shape:
        return (0,) + contiguous_strides(shape)[1:]
    return contiguous_strides(shape)  # contiguous, offset1 (the offset does not change the strides)


def broadcast_strides(shape: Sequence[int], strides: Sequence[int], out_shape: Sequence[int]) -> Strides:
    """Strides of ``shape`` broadcast to ``out_shape`` (numpy rules): 0 on every broadcast dim."""
    shape, strides, out_shape = tuple(shape), tuple(strides), tuple(out_shape)
    lead = len(out_shape) - len(shape)
    out = [0] * lead
    for n, s, m in zip(shape, strides, out_shape[lead:]):
        out.append(s if n == m and n != 1 else 0)
    return tuple(out)


def collapse(shape: Sequence[int], *strides: Sequence[int]) -> tuple[Shape, list[Strides]]:
    """Drop extent-1 dims and merge neighbours every tensor walks as one; same element order."""
    shape = tuple(int(n) for n in shape)
    keep = [i for i, n in enumerate(shape) if n != 1]
    dims = [shape[i] for i in keep]
    st = [[int(s[i]) for i in keep] for s in strides]
    i = len(dims) - 2
    while i >= 0:
        if all(s[i] == s[i + 1] * dims[i + 1] for s in st):
            dims[i] *= dims[i + 1]
            for s in st:
                s[i] = s[i + 1]
                del s[i + 1]
            del dims[i + 1]
        i -= 1
    return tuple(dims), [tuple(s) for s in st]


def pad_dims(shape: Shape, strides: list[Strides], ndim: int) -> tuple[Shape, list[Strides]]:
    """Left-pad to ``ndim`` dims with extent-1, stride-0 dims."""
    k = ndim - len(shape)
    return (1,) * k + shape, [(0,) * k + s for s in strides]


def _span_fits_int32(shape: Shape, strides: Sequence[Strides]) -> bool:
    limit = 2**31 - 1
    if math.prod(shape) > limit:
        return False
    return all(sum(abs(x) * (n - 1) for x, n in zip(s, shape)) <= limit for s in strides)


@dataclass(frozen=True)
class Elementwise:
    """How to run an elementwise op: ``contiguous`` (one flat index) or 4-d strided index math."""

    numel: int
    contiguous: bool
    shape: Shape  # 4 dims when strided
    strides: tuple[Strides, ...]  # per tensor: inputs..., out
    idx64: bool


def plan_elementwise(out_shape: Sequence[int], out_strides: Sequence[int],
                     inputs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> Elementwise:
    """Plan ``out = f(inputs...)``; inputs are (shape, strides) broadcast to ``out_shape``."""
    out_shape = tuple(out_shape)
    all_strides = [broadcast_strides(s, st, out_shape) for s, st in inputs] + [tuple(out_strides)]
    if any(x < 0 for s in all_strides for x in s) and math.prod(out_shape):
        raise UnsupportedCase("negative strides: torch tensors cannot express them")
    shape, strides = collapse(out_shape, *all_strides)
    numel = math.prod(out_shape)
    idx64 = not _span_fits_int32(shape, strides)
    if len(shape) <= 1 and all(s in ((), (1,)) for s in strides):
        return Elementwise(numel, True, shape, tuple(strides), idx64)
    if len(shape) > MAX_DIMS:
        raise UnsupportedCase(f"this layout needs {len(shape)} dims after merging (shape {out_shape}, strides "
                              f"{', '.join(map(str, all_strides))}); the triton backend's strided kernel "
                              f"indexes up to {MAX_DIMS}")
    shape, strides = pad_dims(shape, strides, MAX_DIMS)
    return Elementwise(numel, False, shape, tuple(strides), idx64)


@dataclass(frozen=True)
class Rows:
    """A reduction along one axis: ``n`` elements at stride ``k_strides[t]`` for each of ``n_out`` outputs.

    The outputs are indexed by 3 outer dims ``outer`` with per-tensor strides ``outer_strides``.
    """

    n: int
    n_out: int
    outer: Shape  # 3 dims
    outer_strides: tuple[Strides, ...]  # per tensor
    k_strides: tuple[int, ...]  # per tensor, along the reduced axis (0 for a tensor without one)
    idx64: bool


def plan_rows(shape: Sequence[int], axis: int, tensors: Sequence[tuple[Sequence[int], int | None]]) -> Rows:
    """Plan a reduction of ``shape`` along ``axis``.

    ``tensors`` gives, per tensor, its strides over the non-reduced dims (in order) and its stride
    along the reduced axis (None: the tensor has no reduced axis, e.g. reduce_sum's output).
    """
    shape = tuple(int(n) for n in shape)
    axis %= len(shape)
    n = shape[axis]
    outer_shape = shape[:axis] + shape[axis + 1:]
    outer, strides = collapse(outer_shape, *[tuple(s) for s, _ in tensors])
    if len(outer) > MAX_OUTER_DIMS:
        raise UnsupportedCase(f"this layout needs {len(outer)} dims besides the reduced one after merging (shape "
                              f"{shape}, axis {axis}); the triton backend's row kernels index up to "
                              f"{MAX_OUTER_DIMS}")
    outer, strides = pad_dims(outer, strides, MAX_OUTER_DIMS)
    k_strides = tuple(0 if k is None else int(k) for _, k in tensors)
    if any(x < 0 for s in strides for x in s) or any(k < 0 for k in k_strides):
        raise UnsupportedCase("negative strides: torch tensors cannot express them")
    full = outer + (n,)
    idx64 = not _span_fits_int32(full, [s + (k,) for s, k in zip(strides, k_strides)])
    return Rows(n, math.prod(outer_shape), outer, tuple(strides), k_strides, idx64)
