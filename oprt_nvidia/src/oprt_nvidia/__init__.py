"""oprt-nvidia: the CUDA backend ``nvidia`` of oprt.

The shared kernel sources implementing oprt.h (oprt_core's ``operators/*/*.cu`` and ``include/oprt_shared/*.cu``,
with vendor_cuda.h) are compiled by nvcc into ``liboprt_nvidia.so`` during ``pip install`` and wrapped by the cffi
extension ``oprt_nvidia._oprt_nvidia``. The backend object itself is oprt_core's generic
``CompiledBackend``; :mod:`oprt_nvidia.plugin` registers it. Importing this package is
cheap: the compiled extension loads on first use.
"""

from __future__ import annotations

import functools
from pathlib import Path

from oprt_core.errors import AbiMismatchError  # re-exported: one class for every compiled backend

__version__ = "0.1.0"

__all__ = ["__version__", "load_extension", "last_launch", "ptxas_log_path", "AbiMismatchError"]


def ptxas_log_path() -> Path:
    """The whole nvcc output of the build (register, shared memory and spill report of every kernel)."""
    return Path(__file__).resolve().parent / "build-ptxas.log"


def load_extension():
    """Import the compiled cffi extension (:func:`oprt_core.cabi.load_extension`).

    Returns the module (with ``.ffi`` and ``.lib``), as CompiledBackend's loader expects; the backend checks
    on first use that it matches the installed oprt.h (:func:`oprt_core.cabi.check_abi`).
    """
    from oprt_core.cabi import load_extension as _load

    return _load(f"{__name__}._oprt_nvidia")


@functools.cache
def _extension():
    """load_extension() once: last_launch() is asked after every bench row's launch (a failed import raises again on
    the next call: exceptions are not cached)."""
    return load_extension()


def last_launch() -> str:
    """The kernels this thread's last op call on the nvidia backend launched, as the launcher names its paths:
    ``"reduce_rows_trips"``, ``"reduce_cols_band+reduce_cols_band_finish"`` (a second kernel after ``+``),
    ``"cudaMemcpyAsync"``; ``"none"`` where the call launched nothing (an empty tensor, a call refused before its
    launch). For tests that must reach a particular kernel, and for a developer asking which one ran
    (the C function ``oprt_nvidia_last_launch``, oprt_shared/runtime.cu; the names are in the kernel sources'
    ``note_launch``).
    """
    from oprt_core.compiled import raise_for_status

    ext = _extension()
    buf = ext.ffi.new("char[]", 128)
    raise_for_status(ext.ffi, ext.lib, ext.lib.oprt_nvidia_last_launch(buf, len(buf)), "nvidia")
    return ext.ffi.string(buf).decode()
