"""A plugin that imports fine but whose hook raises."""

from __future__ import annotations

from oprt_core import hookimpl
from oprt_testplugin import RAISING_HOOK_MESSAGE


@hookimpl
def oprt_register_backends(register) -> None:
    raise RuntimeError(RAISING_HOOK_MESSAGE)
