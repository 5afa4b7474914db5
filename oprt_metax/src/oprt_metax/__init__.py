"""oprt-metax: the MetaX backend ``metax`` of oprt.

The shared kernel sources implementing oprt.h (oprt_core's ``operators/*/*.cu`` and ``include/oprt_shared/*.cu``,
with vendor_maca.h) are compiled during ``pip install``
into ``liboprt_metax.so`` and wrapped by the cffi extension ``oprt_metax._oprt_metax``, in one of two
flavours (OPRT_METAX_TOOLCHAIN): ``mxcc`` (MetaX GPUs, MACA runtime) or ``nvcc-shim`` (the same sources
built by nvcc through oprt_shared/maca_cuda_shim.h, running on NVIDIA GPUs; reported as such everywhere). The backend
object is oprt_core's generic ``CompiledBackend``; :mod:`oprt_metax.plugin` registers it. Importing this
package is cheap: the compiled extension loads on first use.
"""

from __future__ import annotations

from pathlib import Path

from oprt_core.errors import AbiMismatchError  # re-exported: one class for every compiled backend

__version__ = "0.1.0"

__all__ = ["__version__", "load_extension", "build_log_path", "flavour", "AbiMismatchError"]


def build_log_path() -> Path:
    """The whole compiler output of the build (mxcc, or nvcc with its -Xptxas -v report for the shim)."""
    return Path(__file__).resolve().parent / "build-metax.log"


def flavour() -> str | None:
    """The build flavour ("mxcc" or "nvcc-shim") read from the build log, without loading the extension."""
    try:
        head = build_log_path().read_text(encoding="utf-8").splitlines()[0]
    except (OSError, IndexError):
        return None
    for name in ("nvcc-shim", "mxcc"):
        if f"flavour {name}" in head:
            return name
    return None


def load_extension():
    """Import the compiled cffi extension (:func:`oprt_core.cabi.load_extension`).

    Returns the module (with ``.ffi`` and ``.lib``), as CompiledBackend's loader expects; the backend checks
    on first use that it matches the installed oprt.h (:func:`oprt_core.cabi.check_abi`).
    """
    from oprt_core.cabi import load_extension as _load

    return _load(f"{__name__}._oprt_metax")
