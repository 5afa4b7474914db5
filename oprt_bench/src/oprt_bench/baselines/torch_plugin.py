"""Entry point ``torch`` of the ``oprt`` group: registers the PyTorch baseline backend
(:class:`oprt_core.baselines.TorchBackend`); the registry hands it its ops, which oprt-core's built-in plugin
registers (``oprt_core/operators/<op>/baselines.py``).

Cheap: torch is imported only when the backend is first asked for its availability.
"""

from __future__ import annotations

from oprt_core.hookspecs import hookimpl


@hookimpl
def oprt_register_backends(register) -> None:
    from oprt_core.baselines.torch_backend import TorchBackend

    register(TorchBackend())
