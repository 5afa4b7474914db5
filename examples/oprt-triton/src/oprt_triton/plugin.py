"""Entry point ``triton`` of the ``oprt`` group: registers the Triton backend.

Cheap: the backend module imports numpy and oprt only; triton and torch are imported when the
backend is first asked for its availability.
"""

from __future__ import annotations

from oprt_core import hookimpl


@hookimpl
def oprt_register_backends(register) -> None:
    from .backend import TritonBackend

    register(TritonBackend())
