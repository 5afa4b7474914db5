"""Entry point ``cupy`` of the ``oprt`` group: registers the CuPy baseline backend
(:class:`oprt_core.baselines.CupyBackend`); the registry hands it its ops, which oprt-core's built-in plugin
registers (``oprt_core/operators/<op>/baselines.py``).

Cheap: cupy is imported only when the backend is first asked for its availability.
"""

from __future__ import annotations

from oprt_core.hookspecs import hookimpl


@hookimpl
def oprt_register_backends(register) -> None:
    from oprt_core.baselines.cupy_backend import CupyBackend

    register(CupyBackend())
