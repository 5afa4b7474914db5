"""A fake plugin that registers an object without a ``name``."""

from __future__ import annotations

from oprt_core import hookimpl


@hookimpl
def oprt_register_backends(register) -> None:
    register(object())
