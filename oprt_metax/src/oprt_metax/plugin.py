"""The oprt plugin of oprt-metax: registers backend ``metax`` (entry point ``oprt: metax``).

Registration is cheap: no device initialisation and no import of the compiled extension (the flavour is
read from the build log). Only the nvcc-shim flavour allocates CUDA memory, so only it exports
``__cuda_array_interface__`` (zero-copy with CuPy and torch); the mxcc flavour's pointers are MACA memory.
"""

from __future__ import annotations

from typing import Any

from oprt_core import hookimpl

__all__ = ["oprt_register_backends", "make_backend"]


def _load() -> Any:
    from . import load_extension

    return load_extension()


def make_backend() -> Any:
    """A new ``metax`` CompiledBackend (tests and scripts may build one outside the plugin manager)."""
    from oprt_core.compiled import CompiledBackend

    from . import flavour

    return CompiledBackend("metax", loader=_load, vendor="MetaX", cuda_interop=flavour() == "nvcc-shim")


@hookimpl
def oprt_register_backends(register: Any) -> None:
    register(make_backend())
