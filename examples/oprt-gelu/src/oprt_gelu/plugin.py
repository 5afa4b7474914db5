"""Entry point ``gelu_tanh`` of the ``oprt`` group: the op spec and its implementations.

Cheap: registering imports numpy and oprt_core only. The Triton implementation is a thin function
that imports :mod:`oprt_gelu.triton_impl` (and with it triton) when the triton backend first runs it; the
nvidia one names the package's own library, ``liboprt_gelu_nvidia.so`` (csrc/gelu_tanh.cu, built by nvcc at the
install where nvcc is found), which the backend loads the first time gelu_tanh is asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from oprt_core import hookimpl
from oprt_core.compiled import c_library

from .numpy_impl import gelu_tanh_numpy
from .spec import gelu_tanh_spec

__all__ = ["oprt_register_ops", "oprt_register_impls", "gelu_tanh_triton", "NVIDIA_LIBRARY", "NVIDIA_BUILD_LOG",
           "nvidia_library_missing"]

_HERE = Path(__file__).resolve().parent
NVIDIA_LIBRARY = _HERE / "liboprt_gelu_nvidia.so"
NVIDIA_BUILD_LOG = _HERE / "build-nvidia.log"  # the nvcc output, or "not built: <why>" (setup.py)


def nvidia_library_missing() -> str:
    """Why liboprt_gelu_nvidia.so is not installed, from its build log (asked only when it is not)."""
    try:
        text = NVIDIA_BUILD_LOG.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ("oprt-gelu was installed without it and without its build log (the install's output says why: "
                "oprt-core's include folder not found)")
    for line in text.splitlines():
        if line.startswith("not built: "):
            return (f"oprt-gelu was installed without it ({line}); reinstall it where nvcc is found (NVCC, "
                    "CUDA_HOME, PATH) to build it")
    return f"its build log {NVIDIA_BUILD_LOG} does not say why"


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
    register("nvidia", "gelu_tanh", c_library(NVIDIA_LIBRARY, missing=nvidia_library_missing))
