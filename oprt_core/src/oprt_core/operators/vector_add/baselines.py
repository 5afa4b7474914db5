"""vector_add on the baseline backends (each impl in the signature its backend's ``add_op`` documents).

- torch: ``torch.add(a, b, out=out)`` (broadcasting);
- torch-compile: ``torch.add(a, b)``;
- cupy: ``cupy.add(a, b, out=out)`` (broadcasting; f16 math through float, one rounding).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _torch(torch, inputs, out, params) -> Callable[[], Any]:
    a, b = inputs
    add = torch.add
    return lambda: add(a, b, out=out)


def _torch_compile(torch, params) -> Callable[..., Any]:
    return torch.add


def _cupy(cp, inputs, out, params) -> Callable[[], Any]:
    a, b = inputs
    add = cp.add
    return lambda: add(a, b, out=out)


IMPLS = {"torch": _torch, "torch-compile": _torch_compile, "cupy": _cupy}
