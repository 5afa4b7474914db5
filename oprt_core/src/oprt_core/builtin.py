"""The built-in plugin: the five core ops. The numpy backend is a separate entry point."""

from __future__ import annotations

from .core_ops import CORE_OPS
from .hookspecs import hookimpl


@hookimpl
def oprt_register_ops(register) -> None:
    for spec in CORE_OPS:
        register(spec)
