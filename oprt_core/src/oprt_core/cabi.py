"""The C ABI as data: where oprt.h lives, and its declarations for cffi.

Compiled backends get the header at build time from ``include_dir()`` (when
oprt-core is importable) or from their own vendored copy; see docs/building.md.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

from . import build as oprt_build
from .errors import AbiMismatchError

__all__ = ["include_dir", "cdef", "abi_version", "check_abi", "load_extension", "STATUS_NAMES"]


def include_dir() -> str:
    """The folder holding oprt.h and the header-only validation oprt_validate.h (and oprt_entry.h, which includes the
    op folders' plans from ``../operators``: compile against this folder where it lies, not a copy of it alone)."""
    return str(Path(__file__).resolve().parent / "include")


def header_text(path: str | Path | None = None) -> str:
    return Path(path or Path(include_dir()) / "oprt.h").read_text(encoding="utf-8")


def cdef(path: str | Path | None = None) -> str:
    """The declarations of oprt.h between its OPRT_CDEF markers, ready for ``FFI.cdef``."""
    text = oprt_build.parse_cdef(header_text(path))
    if text is None:
        raise RuntimeError("oprt.h lacks its OPRT_CDEF_BEGIN/END markers")
    return text


def abi_version(path: str | Path | None = None) -> int:
    """OPRT_ABI_VERSION as written in the header."""
    version = oprt_build.parse_abi_version(header_text(path))
    if version is None:
        raise RuntimeError("oprt.h does not define OPRT_ABI_VERSION")
    return version


def check_abi(backend: str, reported: int, built: int | None = None) -> None:
    """The ABI check of a compiled backend, made once, when ``CompiledBackend`` first loads its library.

    ``reported``: the version the library gives in ``oprt_get_library_info``; ``built``: the one its cffi
    wrapper was compiled with (the extension's ``OPRT_ABI_VERSION``; None to skip). Both must be this
    oprt-core's ``oprt.h`` version; raises :class:`oprt_core.errors.AbiMismatchError` saying what to rebuild.
    """
    want = abi_version()
    rebuild = f"`pip install --force-reinstall --no-deps ./oprt_{backend}`"
    if reported != want:
        raise AbiMismatchError(
            f"ABI version mismatch: the {backend} library was built against oprt.h ABI version {reported}, "
            f"but the installed oprt-core expects version {want}; rebuild the backend against this "
            f"oprt-core (e.g. {rebuild})")
    if built is not None and built != reported:
        raise AbiMismatchError(
            f"ABI version mismatch: the {backend} library reports oprt.h ABI version {reported} but its cffi "
            f"wrapper was built for version {built}; reinstall the backend (e.g. {rebuild})")


def load_extension(module_name: str) -> Any:
    """Import a compiled backend's cffi extension ``module_name`` (with ``.ffi`` and ``.lib``), as
    CompiledBackend's loader returns it; the backend checks its ABI (:func:`check_abi`) on first use."""
    return importlib.import_module(module_name)


# oprt_status_t code -> enum name, for messages
STATUS_NAMES = {
    int(m.group(2)): m.group(1)
    for m in re.finditer(r"(OPRT_STATUS_[A-Z_]+) = (\d+)", cdef())
}
