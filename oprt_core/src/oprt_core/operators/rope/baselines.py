"""rope on the baseline backends (each impl in the signature its backend's ``add_op`` documents).

- torch: the formula in f32: ``cos.index_select(0, positions)`` (and sin) per token, each head's halves (neox) or
  interleaved pairs (gptj) rotated, ``torch.cat`` / ``torch.stack`` of the halves, ``q_out.copy_`` and
  ``k_out.copy_`` rounding once (no ``out=`` form; several kernels and f32 temporaries of q's and k's size);
- torch-compile: the same function, compiled;
- liger: not run, saying why (:data:`LIGER_REFUSAL`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...baselines.liger_backend import LigerOp

#: Why rope is not run on Liger: its LigerRopeFunction takes q and k as (batch, heads, tokens, head_dim) with cos
#: and sin of the full head_dim gathered per token, rotates halves only (no gptj) and writes over its inputs; rope's
#: (tokens, heads, head_dim) q and k with a (positions, head_dim / 2) cache and a positions input would need a
#: transposed copy of q and k and a gathered, doubled cos / sin built on every call, which is not Liger's kernel.
LIGER_REFUSAL = ("Liger's rope (LigerRopeFunction) takes (batch, heads, tokens, head_dim) q and k with per-token cos "
                 "and sin of the full head_dim and rotates halves only (no gptj): rope's (tokens, heads, head_dim) "
                 "inputs with a (positions, head_dim / 2) cache and positions would need copies built on every call")


def _torch_fn(torch, params) -> Callable[..., Any]:
    """``(q, k, cos, sin, positions) -> (q_out, k_out)``: each pair rotated by its token's cos / sin row, in f32,
    rounded once to the dtype (a position outside [0, P) is an index error in torch, NaN in oprt's kernels)."""
    neox = params["style"] == "neox"
    cat, stack = torch.cat, torch.stack

    def rotate(x, c, s):
        xf = x.float()
        if neox:
            half = xf.shape[-1] // 2
            x1, x2 = xf[..., :half], xf[..., half:]
            return cat((x1 * c - x2 * s, x2 * c + x1 * s), -1).to(x.dtype)
        x1, x2 = xf[..., 0::2], xf[..., 1::2]
        return stack((x1 * c - x2 * s, x2 * c + x1 * s), -1).flatten(-2).to(x.dtype)

    def fn(q, k, cos, sin, positions):
        c = cos.index_select(0, positions).float().unsqueeze(1)  # (T, 1, D/2): one row per token, every head
        s = sin.index_select(0, positions).float().unsqueeze(1)
        return rotate(q, c, s), rotate(k, c, s)

    return fn


def _torch(torch, inputs, outs, params) -> Callable[[], Any]:
    q, k, cos, sin, pos = inputs
    q_out, k_out = outs
    fn = _torch_fn(torch, params)

    def run() -> Any:
        rq, rk = fn(q, k, cos, sin, pos)
        q_out.copy_(rq)
        return k_out.copy_(rk)

    return run


IMPLS = {"torch": _torch, "torch-compile": _torch_fn,
         "liger": LigerOp("rope", "LigerRopeFunction", refusal=LIGER_REFUSAL)}
