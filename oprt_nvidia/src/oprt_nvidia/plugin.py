"""The oprt plugin of oprt-nvidia: registers backend ``nvidia`` (entry point ``oprt: nvidia``).

Registration is cheap: no device initialisation and no import of the compiled extension; the
CompiledBackend calls the loader the first time it needs the library.
"""

from __future__ import annotations

from typing import Any

from oprt_core import hookimpl

__all__ = ["oprt_register_backends", "make_backend"]


def _load() -> Any:
    from . import load_extension

    return load_extension()


def make_backend() -> Any:
    """A new ``nvidia`` CompiledBackend (tests and scripts may build one outside the plugin manager)."""
    from oprt_core.compiled import CompiledBackend

    from . import last_launch

    return CompiledBackend("nvidia", loader=_load, vendor="NVIDIA", cuda_interop=True, last_launch=last_launch)


@hookimpl
def oprt_register_backends(register: Any) -> None:
    register(make_backend())
