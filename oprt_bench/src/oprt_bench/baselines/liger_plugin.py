"""Entry point ``liger`` of the ``oprt`` group: registers the Liger-Kernel baseline backend
(:class:`oprt_core.baselines.LigerBackend`); the registry hands it its ops, which oprt-core's built-in plugin
registers (``oprt_core/operators/<op>/baselines.py``).

Cheap: torch and liger_kernel are imported only when the backend is first asked for its availability.
"""

from __future__ import annotations

from oprt_core.hookspecs import hookimpl


@hookimpl
def oprt_register_backends(register) -> None:
    from oprt_core.baselines.liger_backend import LigerBackend

    register(LigerBackend())
