"""The built-in plugin: the built-in ops (:mod:`oprt_core.operators`, one folder each) and their implementations
for the numpy backend and the baselines. The backends themselves come from other entry points (numpy's from
:mod:`oprt_core.numpy_plugin`, the baselines' from oprt_bench's plugins); an implementation whose backend is not
registered is not used, and not listed in ``Registry.unused_impls``."""

from __future__ import annotations

from . import operators
from .hookspecs import hookimpl


@hookimpl
def oprt_register_ops(register) -> None:
    for spec in operators.specs():
        register(spec)


@hookimpl
def oprt_register_impls(register) -> None:
    for backend, op, impl in operators.implementations():
        register(backend, op, impl)
