"""The C ABI as data: where oprt.h lives, and its declarations for cffi.

Compiled backends get the header at build time from ``include_dir()`` (when
oprt-core is importable) or from their own vendored copy; see docs/building.md.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

__all__ = ["include_dir", "cdef", "abi_version", "load_extension", "STATUS_NAMES"]

_CDEF_RE = re.compile(r"/\* OPRT_CDEF_BEGIN \*/(.*?)/\* OPRT_CDEF_END \*/", re.S)


def include_dir() -> str:
    """The folder holding oprt.h and the header-only validation oprt_validate.h."""
    return str(Path(__file__).resolve().parent / "include")


def header_text(path: str | Path | None = None) -> str:
    return Path(path or Path(include_dir()) / "oprt.h").read_text(encoding="utf-8")


def cdef(path: str | Path | None = None) -> str:
    """The declarations of oprt.h between its OPRT_CDEF markers, ready for ``FFI.cdef``."""
    match = _CDEF_RE.search(header_text(path))
    if match is None:
        raise RuntimeError("oprt.h lacks its OPRT_CDEF_BEGIN/END markers")
    return match.group(1)


def abi_version(path: str | Path | None = None) -> int:
    """OPRT_ABI_VERSION as written in the header."""
    match = re.search(r"#define OPRT_ABI_VERSION (\d+)", header_text(path))
    assert match is not None
    return int(match.group(1))


def load_extension(module_name: str, dist: str, libname: str) -> Any:
    """Import a compiled backend's cffi extension ``module_name`` and check its ABI: the library
    (``libname``) against its wrapper, and the wrapper against this oprt-core's oprt.h. ``dist`` (e.g.
    "oprt-nvidia") names the distribution to reinstall, from ``./<dist with _>``.

    Returns the module (with ``.ffi`` and ``.lib``), as CompiledBackend's loader expects; raises
    :class:`oprt_core.errors.AbiMismatchError` on a mismatch.
    """
    from .errors import AbiMismatchError

    ext = importlib.import_module(module_name)
    src = "./" + dist.replace("-", "_")
    built = int(ext.lib.OPRT_ABI_VERSION)
    info = ext.ffi.new("oprt_library_info_t *")
    ext.lib.oprt_get_library_info(info)
    if int(info.abi_version) != built:
        raise AbiMismatchError(
            f"{libname} reports oprt.h ABI {int(info.abi_version)} but its wrapper was built for {built}; "
            f"reinstall {dist} (pip install --force-reinstall {src})"
        )
    installed = abi_version()
    if installed != built:
        raise AbiMismatchError(
            f"{dist} was built against oprt.h ABI {built} but the installed oprt-core ships ABI {installed}; "
            f"rebuild it against this oprt-core (pip install --force-reinstall --no-deps {src})"
        )
    return ext


# oprt_status_t code -> enum name, for messages
STATUS_NAMES = {
    int(m.group(2)): m.group(1)
    for m in re.finditer(r"(OPRT_STATUS_[A-Z_]+) = (\d+)", cdef())
}
