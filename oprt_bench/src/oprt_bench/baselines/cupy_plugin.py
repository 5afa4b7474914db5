"""Entry point ``cupy`` of the ``oprt`` group: registers the CuPy baseline backend.

Cheap: cupy is imported only when the backend is first asked for its availability.
"""

from __future__ import annotations

from oprt_core.hookspecs import hookimpl


@hookimpl
def oprt_register_backends(register) -> None:
    from .cupy_backend import CupyBackend

    register(CupyBackend())
