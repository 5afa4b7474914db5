"""``gelu_tanh`` for the triton backend (examples/oprt-triton): one Triton kernel, f32 arithmetic.

Imported on the first run (it imports triton). A flat index over x's shape (up to 4 dims after dropping the
extent-1 ones; a contiguous pair of x and out takes one flat dim), each element read once and written once; any
non-negative strides (torch has no negative ones), broadcast (stride 0) inputs included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import triton
import triton.language as tl

from oprt_core.errors import UnsupportedCase

__all__ = ["gelu_tanh_triton"]

_BLOCK = 1024
_C = 0.7978845608028654  # sqrt(2 / pi)


@triton.jit
def _gelu_tanh_kernel(x_ptr, out_ptr, numel, E1, E2, E3, sx0, sx1, sx2, sx3, so0, so1, so2, so3,
                      BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < numel
    i3 = i % E3
    t = i // E3
    i2 = t % E2
    t = t // E2
    i1 = t % E1
    i0 = t // E1
    x = tl.load(x_ptr + (i0 * sx0 + i1 * sx1 + i2 * sx2 + i3 * sx3), mask=m, other=0.0).to(tl.float32)
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    # tanh(u) = 1 - 2 / (exp(2u) + 1), exact at both ends (exp overflows to inf: tanh = 1)
    th = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)
    y = 0.5 * x * (1.0 + th)
    tl.store(out_ptr + (i0 * so0 + i1 * so1 + i2 * so2 + i3 * so3), y.to(out_ptr.dtype.element_ty), mask=m)


def gelu_tanh_triton(inputs: Sequence[Any], out: Any, params: Mapping[str, Any]) -> None:
    """Enqueue gelu_tanh on torch's current stream: ``inputs = (x,)``, torch tensors on the GPU."""
    x = inputs[0]
    numel = x.numel()
    if numel == 0:
        return
    dims = [(int(n), int(a), int(b)) for n, a, b in zip(x.shape, x.stride(), out.stride()) if n != 1]
    if x.is_contiguous() and out.is_contiguous():
        dims = [(numel, 1, 1)]
    if len(dims) > 4:
        raise UnsupportedCase(f"gelu_tanh on triton: {len(dims)} dims of extent > 1; at most 4")
    dims = [(1, 0, 0)] * (4 - len(dims)) + dims
    (_, sx0, so0), (e1, sx1, so1), (e2, sx2, so2), (e3, sx3, so3) = dims
    _gelu_tanh_kernel[(triton.cdiv(numel, _BLOCK),)](x, out, numel, e1, e2, e3, sx0, sx1, sx2, sx3, so0, so1, so2,
                                                     so3, BLOCK=_BLOCK, num_warps=4)
