"""The Triton kernels of the five core ops and the launchers that plan and bind them.

Imported by :meth:`oprt_triton.backend.TritonBackend.prepare`, never at registration. Each
``make_<op>(inputs, out, params, sm_count)`` plans the layouts once (:mod:`oprt_triton.layout`) and
returns a zero-argument closure that enqueues the kernel(s) on torch's current stream.

Kernels:
- ``_ew_contig``: copy / relu / vector_add over one flat index (every tensor contiguous, no broadcast);
- ``_ew_strided``: the same ops over a 4-d index (any strides, zero strides for broadcasting);
- ``_sum_kernel``: sum along one axis of a [BLOCK_K, BLOCK_O] tile per program, f32 accumulation; the
  reduced axis can be split over a second grid dim (f32 partials, then a second pass of the same kernel)
  when there are too few outputs to fill the GPU;
- ``_softmax_kernel``: softmax along one axis, the row held in registers when it fits (one read, one
  write), else an online max/sum pass then a normalising pass.
The reduced axis is walked along the tile's first dim and the outputs along its second: whichever has
stride 1 gets the long block, so loads coalesce for ``axis=-1`` and ``axis=0`` alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import triton
import triton.language as tl

from .layout import Elementwise, Rows, collapse, contiguous_strides, next_pow2, plan_elementwise, plan_rows

__all__ = ["make", "MAKERS"]

_COPY, _RELU, _ADD = 0, 1, 2
_EW_BLOCK = 1024
_TILE = 4096  # elements per reduction tile
_SOFTMAX_SINGLE_MAX = 16384  # a row this long (or shorter) is held in registers


def _warps(elements: int) -> int:
    return 4 if elements <= 2048 else 8 if elements <= 8192 else 16


# -- elementwise ---------------------------------------------------------------------------------------------

@triton.jit
def _ew_contig(x_ptr, y_ptr, out_ptr, numel, slope, OP: tl.constexpr, BLOCK: tl.constexpr, IDX64: tl.constexpr):
    pid = tl.program_id(0)
    if IDX64:
        pid = pid.to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    x = tl.load(x_ptr + offs, mask=mask)
    if OP == 0:
        y = x
    elif OP == 1:
        xf = x.to(tl.float32)
        y = tl.where(xf > 0, xf, xf * slope)
    else:
        y = x.to(tl.float32) + tl.load(y_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _ew_strided(x_ptr, y_ptr, out_ptr, numel, slope, D1, D2, D3,
                sx0, sx1, sx2, sx3, sy0, sy1, sy2, sy3, so0, so1, so2, so3,
                OP: tl.constexpr, BLOCK: tl.constexpr, IDX64: tl.constexpr):
    pid = tl.program_id(0)
    if IDX64:
        pid = pid.to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    i3 = offs % D3
    t = offs // D3
    i2 = t % D2
    t = t // D2
    i1 = t % D1
    i0 = t // D1
    x = tl.load(x_ptr + (i0 * sx0 + i1 * sx1 + i2 * sx2 + i3 * sx3), mask=mask)
    if OP == 0:
        y = x
    elif OP == 1:
        xf = x.to(tl.float32)
        y = tl.where(xf > 0, xf, xf * slope)
    else:
        b = tl.load(y_ptr + (i0 * sy0 + i1 * sy1 + i2 * sy2 + i3 * sy3), mask=mask)
        y = x.to(tl.float32) + b.to(tl.float32)
    tl.store(out_ptr + (i0 * so0 + i1 * so1 + i2 * so2 + i3 * so3), y.to(out_ptr.dtype.element_ty), mask=mask)


def _elementwise(op: int, inputs: Sequence[Any], out: Any, slope: float = 0.0) -> Callable[[], None]:
    plan: Elementwise = plan_elementwise(tuple(out.shape), tuple(out.stride()),
                                         [(tuple(x.shape), tuple(x.stride())) for x in inputs])
    if plan.numel == 0:
        return lambda: None
    x = inputs[0]
    y = inputs[1] if len(inputs) > 1 else inputs[0]
    grid = (triton.cdiv(plan.numel, _EW_BLOCK),)
    if plan.contiguous:
        args = (x, y, out, plan.numel, float(slope))
        kw = dict(OP=op, BLOCK=_EW_BLOCK, IDX64=plan.idx64, num_warps=4)
        return lambda: _ew_contig[grid](*args, **kw)
    sx, sy, so = (plan.strides[0], plan.strides[1] if len(inputs) > 1 else plan.strides[0], plan.strides[-1])
    args = (x, y, out, plan.numel, float(slope), *plan.shape[1:], *sx, *sy, *so)
    kw = dict(OP=op, BLOCK=_EW_BLOCK, IDX64=plan.idx64, num_warps=4)
    return lambda: _ew_strided[grid](*args, **kw)


def make_copy(inputs, out, params, sm_count: int) -> Callable[[], None]:
    return _elementwise(_COPY, inputs, out)


def make_relu(inputs, out, params, sm_count: int) -> Callable[[], None]:
    return _elementwise(_RELU, inputs, out, float(params["negative_slope"]))


def make_vector_add(inputs, out, params, sm_count: int) -> Callable[[], None]:
    return _elementwise(_ADD, inputs, out)


# -- reduce_sum ---------------------------------------------------------------------------------------------

@triton.jit
def _sum_kernel(x_ptr, out_ptr, n_out, n, chunk, O1, O0, sx2, sx1, sx0, sk, so2, so1, so0, s_split,
                BLOCK_O: tl.constexpr, BLOCK_K: tl.constexpr, IDX64: tl.constexpr):
    pid_o = tl.program_id(0)
    pid_s = tl.program_id(1)
    if IDX64:
        pid_o = pid_o.to(tl.int64)
        pid_s = pid_s.to(tl.int64)
    o = pid_o * BLOCK_O + tl.arange(0, BLOCK_O)
    omask = o < n_out
    o0 = o % O0
    t = o // O0
    o1 = t % O1
    o2 = t // O1
    xb = o2 * sx2 + o1 * sx1 + o0 * sx0
    k_lo = pid_s * chunk
    k_hi = tl.minimum(k_lo + chunk, n)
    kk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_K, BLOCK_O], dtype=tl.float32)
    for k0 in range(k_lo, k_hi, BLOCK_K):
        k = k0 + kk
        m = (k < k_hi)[:, None] & omask[None, :]
        acc += tl.load(x_ptr + (xb[None, :] + k[:, None] * sk), mask=m, other=0.0).to(tl.float32)
    s = tl.sum(acc, axis=0)
    tl.store(out_ptr + (pid_s * s_split + o2 * so2 + o1 * so1 + o0 * so0), s.to(out_ptr.dtype.element_ty),
             mask=omask)


def _sum_blocks(n: int, n_out: int, k_stride: int) -> tuple[int, int]:
    """(BLOCK_O, BLOCK_K): the long block along whichever of the two is contiguous."""
    if k_stride == 1 or n_out == 1:
        block_k = min(next_pow2(n), _TILE)
        return max(1, min(next_pow2(n_out), _TILE // block_k)), block_k
    block_o = min(next_pow2(n_out), 128)
    return block_o, max(1, min(next_pow2(n), _TILE // block_o))


def _sum_launch(x: Any, out: Any, plan: Rows, sm_count: int, torch: Any) -> Callable[[], None]:
    """Sum ``plan.n`` elements per output; tensors: 0 = x, 1 = out (its k stride unused)."""
    n, n_out = plan.n, plan.n_out
    if n_out == 0:
        return lambda: None
    sx, so = plan.outer_strides
    sk = plan.k_strides[0]
    block_o, block_k = _sum_blocks(n, n_out, sk)
    programs = triton.cdiv(n_out, block_o)
    split = 1
    if programs < 4 * sm_count and n > 4 * block_k:
        split = min(triton.cdiv(4 * sm_count, programs), triton.cdiv(n, 2 * block_k))
    chunk = triton.cdiv(triton.cdiv(n, split), block_k) * block_k if n else block_k
    split = max(1, triton.cdiv(n, chunk))
    warps = _warps(block_o * block_k)
    if split == 1:
        args = (x, out, n_out, n, chunk, *plan.outer[1:], *sx, sk, *so, 0)
        kw = dict(BLOCK_O=block_o, BLOCK_K=block_k, IDX64=plan.idx64, num_warps=warps)
        return lambda: _sum_kernel[(programs, 1)](*args, **kw)
    # f32 partials laid out (split, *outer), then the same kernel sums them along the split axis
    part = torch.empty((split, n_out), dtype=torch.float32, device=x.device)
    sp = contiguous_strides(plan.outer)
    args1 = (x, part, n_out, n, chunk, *plan.outer[1:], *sx, sk, *sp, n_out)
    kw1 = dict(BLOCK_O=block_o, BLOCK_K=block_k, IDX64=plan.idx64, num_warps=warps)
    bo2, bk2 = _sum_blocks(split, n_out, n_out)
    args2 = (part, out, n_out, split, split, *plan.outer[1:], *sp, n_out, *so, 0)
    kw2 = dict(BLOCK_O=bo2, BLOCK_K=bk2, IDX64=plan.idx64, num_warps=_warps(bo2 * bk2))
    grid1, grid2 = (programs, split), (triton.cdiv(n_out, bo2), 1)

    def run() -> None:
        _sum_kernel[grid1](*args1, **kw1)
        _sum_kernel[grid2](*args2, **kw2)

    return run


def make_reduce_sum(inputs, out, params, sm_count: int) -> Callable[[], None]:
    import torch

    (x,) = inputs
    shape, xs = tuple(x.shape), tuple(x.stride())
    axis, keep = params["axis"], params["keepdims"]
    if axis is None:
        if x.numel() == 0:  # an empty sum: the kernel runs no iteration and stores 0
            return _sum_launch(x, out, plan_rows((0,), 0, [((), 1), ((), None)]), sm_count, torch)
        dims, (cs,) = collapse(shape, xs)
        if len(dims) <= 1:  # one stride walks all of x: reduce it as a single row
            plan = plan_rows((dims[0] if dims else 1,), 0, [((), cs[0] if cs else 1), ((), None)])
            return _sum_launch(x, out, plan, sm_count, torch)
        # x needs several strides: sum its last merged dim into f32 partials, then sum those
        part = torch.empty(dims[:-1], dtype=torch.float32, device=x.device)
        first = plan_rows(dims, len(dims) - 1, [(cs[:-1], cs[-1]), (tuple(part.stride()), None)])
        second = plan_rows((part.numel(),), 0, [((), 1), ((), None)])
        run1 = _sum_launch(x, part, first, sm_count, torch)
        run2 = _sum_launch(part, out, second, sm_count, torch)

        def run() -> None:
            run1()
            run2()

        return run
    ax = axis % len(shape)
    os = tuple(out.stride())
    if keep:
        os = os[:ax] + os[ax + 1:]
    plan = plan_rows(shape, ax, [(xs[:ax] + xs[ax + 1:], xs[ax]), (os, None)])
    return _sum_launch(x, out, plan, sm_count, torch)


# -- softmax ---------------------------------------------------------------------------------------------

@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_out, n, O1, O0, sx2, sx1, sx0, sxk, so2, so1, so0, sok,
                    BLOCK_O: tl.constexpr, BLOCK_K: tl.constexpr, SINGLE: tl.constexpr, IDX64: tl.constexpr):
    pid = tl.program_id(0)
    if IDX64:
        pid = pid.to(tl.int64)
    o = pid * BLOCK_O + tl.arange(0, BLOCK_O)
    omask = o < n_out
    o0 = o % O0
    t = o // O0
    o1 = t % O1
    o2 = t // O1
    xb = o2 * sx2 + o1 * sx1 + o0 * sx0
    ob = o2 * so2 + o1 * so1 + o0 * so0
    kk = tl.arange(0, BLOCK_K)
    if SINGLE:
        m = (kk < n)[:, None] & omask[None, :]
        x = tl.load(x_ptr + (xb[None, :] + kk[:, None] * sxk), mask=m, other=-float("inf")).to(tl.float32)
        mx = tl.max(x, axis=0)
        mx = tl.where(omask, mx, 0.0)
        e = tl.exp(x - mx[None, :])
        s = tl.sum(e, axis=0)
        s = tl.where(omask, s, 1.0)
        y = e / s[None, :]
        tl.store(out_ptr + (ob[None, :] + kk[:, None] * sok), y.to(out_ptr.dtype.element_ty), mask=m)
    else:
        mx = tl.full([BLOCK_O], -float("inf"), dtype=tl.float32)
        s = tl.zeros([BLOCK_O], dtype=tl.float32)
        for k0 in range(0, n, BLOCK_K):
            k = k0 + kk
            m = (k < n)[:, None] & omask[None, :]
            x = tl.load(x_ptr + (xb[None, :] + k[:, None] * sxk), mask=m, other=-float("inf")).to(tl.float32)
            new = tl.maximum(mx, tl.max(x, axis=0))
            new = tl.where(omask, new, 0.0)
            s = s * tl.exp(mx - new) + tl.sum(tl.exp(x - new[None, :]), axis=0)
            mx = new
        s = tl.where(omask, s, 1.0)
        for k0 in range(0, n, BLOCK_K):
            k = k0 + kk
            m = (k < n)[:, None] & omask[None, :]
            x = tl.load(x_ptr + (xb[None, :] + k[:, None] * sxk), mask=m, other=-float("inf")).to(tl.float32)
            y = tl.exp(x - mx[None, :]) / s[None, :]
            tl.store(out_ptr + (ob[None, :] + k[:, None] * sok), y.to(out_ptr.dtype.element_ty), mask=m)


def make_softmax(inputs, out, params, sm_count: int) -> Callable[[], None]:
    (x,) = inputs
    shape = tuple(x.shape)
    if x.numel() == 0:
        return lambda: None
    if not shape:  # a 0-d input has no axis; the op's checks refuse it before this
        raise ValueError("softmax of a 0-d tensor")
    ax = params["axis"] % len(shape)
    xs, os = tuple(x.stride()), tuple(out.stride())
    plan = plan_rows(shape, ax, [(xs[:ax] + xs[ax + 1:], xs[ax]), (os[:ax] + os[ax + 1:], os[ax])])
    n, n_out = plan.n, plan.n_out
    sxk, sok = plan.k_strides
    if sxk == 1 or n_out == 1:
        single = next_pow2(n) <= _SOFTMAX_SINGLE_MAX
        block_k = next_pow2(n) if single else 4096
        block_o = max(1, min(next_pow2(n_out), _TILE // block_k))
    else:
        block_o = min(next_pow2(n_out), 64)
        single = next_pow2(n) * block_o <= _SOFTMAX_SINGLE_MAX
        block_k = next_pow2(n) if single else max(1, _TILE // block_o)
    sx, so = plan.outer_strides
    args = (x, out, n_out, n, *plan.outer[1:], *sx, sxk, *so, sok)
    kw = dict(BLOCK_O=block_o, BLOCK_K=block_k, SINGLE=single, IDX64=plan.idx64, num_warps=_warps(block_o * block_k))
    grid = (triton.cdiv(n_out, block_o),)
    return lambda: _softmax_kernel[grid](*args, **kw)


MAKERS: dict[str, Callable[..., Callable[[], None]]] = {
    "copy": make_copy,
    "relu": make_relu,
    "vector_add": make_vector_add,
    "reduce_sum": make_reduce_sum,
    "softmax": make_softmax,
}


def make(op: str, inputs: Sequence[Any], out: Any, params: Mapping[str, Any], sm_count: int) -> Callable[[], None]:
    """The closure that runs core op ``op`` once; raises UnsupportedCase for a layout it cannot index."""
    return MAKERS[op](list(inputs), out, params, sm_count)
