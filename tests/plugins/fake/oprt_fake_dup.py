"""A fake plugin that reuses core names: op ``copy`` and backend ``numpy``."""

from __future__ import annotations

from oprt_core import hookimpl
from oprt_core.numpy_backend import NumpyBackend
from oprt_core.operators.copy import SPEC as copy_spec


@hookimpl
def oprt_register_ops(register) -> None:
    register(copy_spec)


@hookimpl
def oprt_register_backends(register) -> None:
    register(NumpyBackend())
