"""oprt-nvidia: the CUDA backend ``nvidia`` of oprt.

CUDA sources implementing oprt.h (``csrc/`` of the source tree) are compiled by nvcc into
``liboprt_nvidia.so`` during ``pip install`` and wrapped by the cffi extension
``oprt_nvidia._oprt_nvidia``. The backend object itself is oprt_core's generic
``CompiledBackend``; :mod:`oprt_nvidia.plugin` registers it. Importing this package is
cheap: the compiled extension loads on first use.
"""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"

__all__ = ["__version__", "load_extension", "ptxas_log_path", "AbiMismatchError"]


class AbiMismatchError(ImportError):
    """The compiled extension was built against another oprt.h than the installed oprt-core's."""


def ptxas_log_path() -> Path:
    """The whole nvcc output of the build (register, shared memory and spill report of every kernel)."""
    return Path(__file__).resolve().parent / "build-ptxas.log"


def load_extension():
    """Import the compiled cffi extension and check it matches the installed oprt.h.

    Returns the module (with ``.ffi`` and ``.lib``), as CompiledBackend's loader expects.
    """
    from . import _oprt_nvidia as ext

    built = int(ext.lib.OPRT_ABI_VERSION)
    info = ext.ffi.new("oprt_library_info_t *")
    ext.lib.oprt_get_library_info(info)
    if int(info.abi_version) != built:
        raise AbiMismatchError(
            f"liboprt_nvidia.so reports oprt.h ABI {int(info.abi_version)} but its wrapper was built for {built}; "
            "reinstall oprt-nvidia (pip install --force-reinstall ./oprt_nvidia)"
        )
    try:
        from oprt_core.cabi import abi_version
    except ImportError:  # oprt-core absent: nothing to compare against
        return ext
    installed = abi_version()
    if installed != built:
        raise AbiMismatchError(
            f"oprt-nvidia was built against oprt.h ABI {built} but the installed oprt-core ships ABI {installed}; "
            "rebuild it against this oprt-core (pip install --force-reinstall --no-deps ./oprt_nvidia)"
        )
    return ext
