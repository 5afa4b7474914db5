"""Entry point ``gelu_tanh`` of the ``oprt`` group: the op spec and its implementations.

Cheap: registering imports numpy and oprt_core only. The Triton implementation is a thin function
that imports :mod:`oprt_gelu.triton_impl` (and with it triton) when the triton backend first runs it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from oprt_core import hookimpl

from .numpy_impl import gelu_tanh_numpy
from .spec import gelu_tanh_spec

__all__ = ["oprt_register_ops", "oprt_register_impls", "gelu_tanh_triton"]


def gelu_tanh_triton(inputs: Sequence[Any], out: Any, params: Mapping[str, Any]) -> None:
    """The triton backend's implementation (torch tensors on the GPU); imports the kernel on first use."""
    from .triton_impl import gelu_tanh_triton as run

    run(inputs, out, params)


@hookimpl
def oprt_register_ops(register) -> None:
    register(gelu_tanh_spec)


@hookimpl
def oprt_register_impls(register) -> None:
    register("numpy", "gelu_tanh", gelu_tanh_numpy)
    register("triton", "gelu_tanh", gelu_tanh_triton)
