"""Entry point ``numpy`` of the ``oprt`` group: registers the numpy reference backend."""

from __future__ import annotations

from .hookspecs import hookimpl


@hookimpl
def oprt_register_backends(register) -> None:
    from .numpy_backend import NumpyBackend

    register(NumpyBackend())
