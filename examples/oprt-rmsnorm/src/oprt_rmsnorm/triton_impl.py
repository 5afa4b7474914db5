"""``rms_norm_example`` for the triton backend (examples/oprt-triton): one Triton kernel, f32 arithmetic.

Imported on the first run (it imports triton). Each program normalises a [BLOCK_R, BLOCK_N] tile:
BLOCK_R rows of x (indexed by up to 3 outer dims, any strides) by BLOCK_N of their elements. A row that
fits (``n <= 8192``) is held in registers: one read of x, one write of out. Longer rows take two passes
(sum of squares, then normalise), reading x twice. When x's rows are adjacent in memory (a transposed
view: stride 1 across rows) the long block runs across rows instead, so loads still coalesce.

Layout planning reuses :func:`oprt_triton.layout.plan_rows`; a layout that needs more than 3 outer dims
after merging, or negative strides, raises ``UnsupportedCase``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import triton
import triton.language as tl
from oprt_triton.layout import next_pow2, plan_rows

__all__ = ["rms_norm_triton"]

_SINGLE_MAX = 8192  # a row this long (or shorter) is held in registers
_TILE = 4096


@triton.jit
def _rms_norm_kernel(x_ptr, w_ptr, out_ptr, n_rows, n, eps, R1, R0, sx2, sx1, sx0, sxn, so2, so1, so0, son, sw,
                     BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr, SINGLE: tl.constexpr, IDX64: tl.constexpr):
    pid = tl.program_id(0)
    if IDX64:
        pid = pid.to(tl.int64)
    rows = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    rmask = rows < n_rows
    r0 = rows % R0
    t = rows // R0
    r1 = t % R1
    r2 = t // R1
    xb = r2 * sx2 + r1 * sx1 + r0 * sx0
    ob = r2 * so2 + r1 * so1 + r0 * so0
    cols = tl.arange(0, BLOCK_N)
    if SINGLE:
        cmask = cols < n
        m = rmask[:, None] & cmask[None, :]
        x = tl.load(x_ptr + (xb[:, None] + cols[None, :] * sxn), mask=m, other=0.0).to(tl.float32)
        r = 1.0 / tl.sqrt_rn(tl.sum(x * x, axis=1) / n + eps)
        w = tl.load(w_ptr + cols * sw, mask=cmask, other=0.0).to(tl.float32)
        y = x * r[:, None] * w[None, :]
        tl.store(out_ptr + (ob[:, None] + cols[None, :] * son), y.to(out_ptr.dtype.element_ty), mask=m)
    else:
        acc = tl.zeros([BLOCK_R, BLOCK_N], dtype=tl.float32)
        for c0 in range(0, n, BLOCK_N):
            c = c0 + cols
            m = rmask[:, None] & (c < n)[None, :]
            x = tl.load(x_ptr + (xb[:, None] + c[None, :] * sxn), mask=m, other=0.0).to(tl.float32)
            acc += x * x
        r = 1.0 / tl.sqrt_rn(tl.sum(acc, axis=1) / n + eps)
        for c0 in range(0, n, BLOCK_N):
            c = c0 + cols
            cmask = c < n
            m = rmask[:, None] & cmask[None, :]
            x = tl.load(x_ptr + (xb[:, None] + c[None, :] * sxn), mask=m, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + c * sw, mask=cmask, other=0.0).to(tl.float32)
            y = x * r[:, None] * w[None, :]
            tl.store(out_ptr + (ob[:, None] + c[None, :] * son), y.to(out_ptr.dtype.element_ty), mask=m)


def rms_norm_triton(inputs: Sequence[Any], out: Any, params: Mapping[str, Any]) -> None:
    """Enqueue rms_norm_example on torch's current stream: ``inputs = (x, weight)``, torch tensors on the GPU."""
    x, w = inputs
    shape = tuple(x.shape)
    if x.numel() == 0:
        return
    ax = len(shape) - 1
    xs, os = tuple(x.stride()), tuple(out.stride())
    plan = plan_rows(shape, ax, [(xs[:-1], xs[-1]), (os[:-1], os[-1])])
    n, n_rows = plan.n, plan.n_out
    sxn, son = plan.k_strides
    (sx, so) = plan.outer_strides
    rows_adjacent = sxn != 1 and sx[-1] == 1 and n_rows > 1
    if rows_adjacent:  # a transposed view: the long block across rows
        block_r = min(next_pow2(n_rows), 64)
        single = next_pow2(n) * block_r <= _SINGLE_MAX
        block_n = next_pow2(n) if single else max(1, _TILE // block_r)
    else:
        single = next_pow2(n) <= _SINGLE_MAX
        block_n = next_pow2(n) if single else _TILE
        block_r = max(1, min(next_pow2(n_rows), _TILE // block_n))
    tile = block_r * block_n
    warps = 4 if tile <= 2048 else 8 if tile <= 8192 else 16
    grid = (triton.cdiv(n_rows, block_r),)
    _rms_norm_kernel[grid](x, w, out, n_rows, n, float(params["eps"]), *plan.outer[1:], *sx, sxn, *so, son,
                           w.stride(0), BLOCK_R=block_r, BLOCK_N=block_n, SINGLE=single, IDX64=plan.idx64,
                           num_warps=warps)
