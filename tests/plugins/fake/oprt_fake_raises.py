"""A fake plugin whose ops hook raises."""

from __future__ import annotations

from oprt_core import hookimpl


@hookimpl
def oprt_register_ops(register) -> None:
    raise RuntimeError("oprt_fake_raises: deliberate failure in oprt_register_ops")
