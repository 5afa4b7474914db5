"""Entry point ``tilelang`` of the ``oprt`` group: registers the TileLang backend.

Cheap: the backend module imports oprt only; tilelang and torch are imported when the backend is first
asked for its availability.
"""

from __future__ import annotations

from oprt_core import hookimpl


@hookimpl
def oprt_register_backends(register) -> None:
    from .backend import TileLangBackend

    register(TileLangBackend())
