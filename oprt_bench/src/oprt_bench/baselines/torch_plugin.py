"""Entry point ``torch`` of the ``oprt`` group: registers the PyTorch baseline backend.

Cheap: torch is imported only when the backend is first asked for its availability.
"""

from __future__ import annotations

from oprt_core.hookspecs import hookimpl


@hookimpl
def oprt_register_backends(register) -> None:
    from .torch_backend import TorchBackend

    register(TorchBackend())
