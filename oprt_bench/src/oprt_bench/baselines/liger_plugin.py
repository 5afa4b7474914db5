"""Entry point ``liger`` of the ``oprt`` group: registers the Liger-Kernel baseline backend.

Cheap: torch and liger_kernel are imported only when the backend is first asked for its availability.
"""

from __future__ import annotations

from oprt_core.hookspecs import hookimpl


@hookimpl
def oprt_register_backends(register) -> None:
    from .liger_backend import LigerBackend

    register(LigerBackend())
