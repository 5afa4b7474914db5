"""Entry point ``rms_norm_example`` of the ``oprt`` group: the op spec and its implementations.

Cheap: registering imports numpy and oprt_core only. The Triton implementation is a thin function
that imports :mod:`oprt_rmsnorm.triton_impl` (and with it triton) when the triton backend first runs it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from oprt_core import hookimpl

from .numpy_impl import rms_norm_numpy
from .spec import rms_norm_spec

__all__ = ["oprt_register_ops", "oprt_register_impls", "rms_norm_triton"]


def rms_norm_triton(inputs: Sequence[Any], out: Any, params: Mapping[str, Any]) -> None:
    """The triton backend's implementation (torch tensors on the GPU); imports the kernel on first use."""
    from .triton_impl import rms_norm_triton as run

    run(inputs, out, params)


@hookimpl
def oprt_register_ops(register) -> None:
    register(rms_norm_spec)


@hookimpl
def oprt_register_impls(register) -> None:
    register("numpy", "rms_norm_example", rms_norm_numpy)
    register("triton", "rms_norm_example", rms_norm_triton)
