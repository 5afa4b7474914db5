"""oprt-nvidia: the CUDA backend ``nvidia`` of oprt.

CUDA sources implementing oprt.h (``csrc/`` of the source tree) are compiled by nvcc into
``liboprt_nvidia.so`` during ``pip install`` and wrapped by the cffi extension
``oprt_nvidia._oprt_nvidia``. The backend object itself is oprt_core's generic
``CompiledBackend``; :mod:`oprt_nvidia.plugin` registers it. Importing this package is
cheap: the compiled extension loads on first use.
"""

from __future__ import annotations

from pathlib import Path

from oprt_core.errors import AbiMismatchError  # re-exported: one class for every compiled backend

__version__ = "0.1.0"

__all__ = ["__version__", "load_extension", "ptxas_log_path", "AbiMismatchError"]


def ptxas_log_path() -> Path:
    """The whole nvcc output of the build (register, shared memory and spill report of every kernel)."""
    return Path(__file__).resolve().parent / "build-ptxas.log"


def load_extension():
    """Import the compiled cffi extension and check it matches the installed oprt.h
    (:func:`oprt_core.cabi.load_extension`).

    Returns the module (with ``.ffi`` and ``.lib``), as CompiledBackend's loader expects.
    """
    from oprt_core.cabi import load_extension as _load

    return _load(f"{__name__}._oprt_nvidia", "oprt-nvidia", "liboprt_nvidia.so")
