"""The C ABI as data: where oprt.h lives, and its declarations for cffi.

Compiled backends get the header at build time from ``include_dir()`` (when
oprt-core is importable) or from their own vendored copy; see docs/building.md.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["include_dir", "cdef", "abi_version", "STATUS_NAMES"]

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


# oprt_status_t code -> enum name, for messages
STATUS_NAMES = {
    int(m.group(2)): m.group(1)
    for m in re.finditer(r"(OPRT_STATUS_[A-Z_]+) = (\d+)", cdef())
}
