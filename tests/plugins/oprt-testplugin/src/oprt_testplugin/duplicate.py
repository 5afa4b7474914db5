"""A plugin that registers a backend named ``numpy``, a name oprt-core already registers."""

from __future__ import annotations

from oprt_core import hookimpl
from oprt_core.numpy_backend import NumpyBackend


class DuplicateNumpy(NumpyBackend):
    name = "numpy"


@hookimpl
def oprt_register_backends(register) -> None:
    register(DuplicateNumpy())
