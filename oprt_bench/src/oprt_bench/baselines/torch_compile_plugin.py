"""Entry point ``torch-compile`` of the ``oprt`` group: registers the torch.compile baseline backend.

Cheap: torch is imported only when the backend is first asked for its availability.
"""

from __future__ import annotations

from oprt_core.hookspecs import hookimpl


@hookimpl
def oprt_register_backends(register) -> None:
    from .torch_compile_backend import TorchCompileBackend

    register(TorchCompileBackend())
