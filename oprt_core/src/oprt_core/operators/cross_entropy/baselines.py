"""cross_entropy on the baseline backends (each impl in the signature its backend's ``add_op`` documents).

- torch: ``out.copy_(torch.nn.functional.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=...,
  reduction=...))``: log_softmax and nll_loss, with a temporary of the logits' size; the rows' losses copied into
  out (no ``out=`` variant; a view where the leading dims merge, else reshape copies the logits);
- torch-compile: the same function, compiled;
- liger: ``LigerCrossEntropyFunction.apply(logits.reshape(-1, V), target.reshape(-1), None, ignore_index, 0.0, 0.0,
  reduction)`` (no class weights, z-loss, label smoothing or softcap): a program a row looping over the vocabulary
  in blocks, its online max and sum in f32; its per-row losses (or their sum, for the mean) copied into out.
  Liger's cross_entropy reads the targets back to the host (``.item()``, a synchronisation, inside the timed call:
  what its users pay); versions whose kernel writes the logits' gradient over the logits in every forward (before
  its ``HAS_GRADIENTS`` switch) are unsupported with that reason, as a timed repeat would read its own gradient; an
  empty case (no row) too. Every version writes zeros over an ignored row's logits, in place (harmless where rows
  are apart: that row's loss is 0 either way); logits whose rows share memory (a broadcast row, stride 0) are
  unsupported, as the zeros of one ignored row would be every row's logits from then on.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...baselines.liger_backend import LigerOp, liger_version, row_refusal
from ...errors import UnsupportedCase


def _torch_fn(torch, params) -> Callable[..., Any]:
    """``(logits, target) -> loss``: ``F.cross_entropy`` over the rows of ``logits`` (its last axis the classes),
    shaped as the op's output (``target``'s shape, or 0-d for the mean)."""
    xent, ignore, reduction = torch.nn.functional.cross_entropy, int(params["ignore_index"]), params["reduction"]

    def fn(x, t):
        loss = xent(x.reshape(-1, x.shape[-1]), t.reshape(-1), ignore_index=ignore, reduction=reduction)
        return loss if reduction == "mean" else loss.reshape(t.shape)

    return fn


def _torch(torch, inputs, out, params) -> Callable[[], Any]:
    x, t = inputs
    fn = _torch_fn(torch, params)
    return lambda: out.copy_(fn(x, t))  # no out= variant


def rows_overlap(rows: int, classes: int, row_stride: int, class_stride: int) -> bool:
    """Whether two rows of a (rows, classes) view share memory as Liger's cross_entropy kernel writes them: it copies
    logits whose classes are not adjacent (class stride != 1) and works in place on the others."""
    return class_stride == 1 and rows > 1 and classes > 0 and abs(row_stride) < classes


def _shared_rows(rows: int, classes: int, row_stride: int, class_stride: int) -> str | None:
    if not rows_overlap(rows, classes, row_stride, class_stride):
        return None
    return (f"Liger's cross_entropy writes zeros over an ignored row's logits in place; these rows share memory "
            f"(row stride {row_stride}, {classes} classes), so one ignored row would zero them all")


def _liger_layout(logits: Any) -> str | None:
    """Why Liger cannot take logits laid out as this TensorCase: rows that share memory in the (rows, classes) view
    it is given (``reshape``: a view where the row axes merge, else a copy, whose rows are apart)."""
    shape, strides = logits.shape, logits.strides
    rows = [(n, s) for n, s in zip(shape[:-1], strides[:-1]) if n > 1]
    if not rows or any(outer != inner * n for (_, outer), (n, inner) in zip(rows, rows[1:])):
        return None  # one row, or axes that do not merge: reshape copies
    return _shared_rows(math.prod(shape[:-1]), shape[-1], rows[-1][1], strides[-1])


def _liger(function: Any, inputs: Sequence[Any], out: Any, params: Mapping[str, Any]) -> Callable[[], str]:
    x, t = inputs
    apply = function.apply
    ignore, reduction = int(params["ignore_index"]), params["reduction"]
    rows, target = x.reshape(-1, x.shape[-1]), t.reshape(-1)
    why = _shared_rows(rows.shape[0], rows.shape[1], rows.stride(0), rows.stride(1))
    if why:
        raise UnsupportedCase(why)

    def run() -> str:
        loss = apply(rows, target, None, ignore, 0.0, 0.0, reduction)
        loss = loss[0] if isinstance(loss, tuple) else loss  # (loss, z_loss, ...) in recent versions
        out.copy_(loss if reduction == "mean" else loss.reshape(out.shape))
        return "liger cross_entropy + copy"

    return run


def _liger_rows(op: str, shape: Sequence[int], params: Mapping[str, Any]) -> str | None:
    """A program a row, looping over the classes: any width, at least one row."""
    shape = tuple(shape)
    if not shape:
        return row_refusal(op, shape, params)
    return "Liger's cross_entropy needs at least one row" if 0 in shape else None


def _liger_overwrites_logits(function: Any) -> str | None:
    """Why this Liger's cross-entropy is not run: its kernel stores the logits' gradient over the logits in every
    forward (its source has no ``HAS_GRADIENTS`` switch); None where it has the switch."""
    import inspect

    try:
        overwrites = "HAS_GRADIENTS" not in inspect.getsource(sys.modules[function.__module__])
    except (OSError, TypeError, KeyError):
        overwrites = True  # cannot tell: not run on inputs it may overwrite
    if not overwrites:
        return None
    return (f"liger-kernel {liger_version()}'s cross_entropy writes the logits' gradient over the logits in every "
            "forward: a repeated run would read its own gradient")


IMPLS = {"torch": _torch, "torch-compile": _torch_fn,
         "liger": LigerOp("cross_entropy", "LigerCrossEntropyFunction", make=_liger, case_refusal=_liger_rows,
                          layout_refusal=_liger_layout, check=_liger_overwrites_logits)}
