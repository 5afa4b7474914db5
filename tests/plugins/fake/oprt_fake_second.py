"""A second good fake plugin that registers ``fakebackend`` again (a duplicate of oprt_fake_good's)."""

from __future__ import annotations

from oprt_fake_good import FakeBackend

from oprt_core import hookimpl


@hookimpl
def oprt_register_backends(register) -> None:
    register(FakeBackend())
