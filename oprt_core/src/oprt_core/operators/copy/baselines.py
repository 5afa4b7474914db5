"""copy on the baseline backends (each impl in the signature its backend's ``add_op`` documents).

- torch: ``out.copy_(x)``;
- torch-compile: the identity, its result copied into ``out`` in the compiled graph;
- cupy: ``cupy.copyto(out, x)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _torch(torch, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    return lambda: out.copy_(x)


def _torch_compile(torch, params) -> Callable[..., Any]:
    return lambda x: x


def _cupy(cp, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    copyto = cp.copyto
    return lambda: copyto(out, x)


IMPLS = {"torch": _torch, "torch-compile": _torch_compile, "cupy": _cupy}
