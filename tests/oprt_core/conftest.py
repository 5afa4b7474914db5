"""Fixtures of the compiled-library tests: the host (CPU) implementation of oprt.h.

``host_lib_path`` builds tests/oprt_core/host_lib/oprt_host.c once per test run with
the system C compiler into a shared library, together with the ``oprt_ptrs_<op>`` entry points that
oprt_build generates for the GPU backends' cffi extensions (exported here, so the op API's integer-pointer
launch path runs in CI too); ``host_backend`` is a :class:`oprt_core.compiled.CompiledBackend` over it,
loaded with cffi ABI mode.
Without a C compiler these tests skip with the reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

HOST_SOURCE = Path(__file__).parent / "host_lib" / "oprt_host.c"


def find_cc() -> str | None:
    """The C compiler: $CC, else cc, gcc or clang on PATH."""
    candidates = [os.environ.get("CC", "")] + ["cc", "gcc", "clang"]
    for cc in candidates:
        if cc and shutil.which(cc.split()[0]):
            return cc
    return None


def _pointer_entry_points() -> tuple[str, str]:
    """oprt_build's oprt_ptrs_<op> declarations and definitions for the ops of oprt.h the host library implements
    (a definition for another would leave its launch unresolved, and the library would not load)."""
    import oprt_core.build as oprt_build
    from oprt_core.cabi import cdef

    decls, defs = oprt_build.pointer_entry_points(cdef())
    from op_helpers import host_ops

    ops = host_ops()
    keep = lambda text: [b for b in re.split(r"(?=^(?:static )?oprt_status_t oprt_ptrs_)", text, flags=re.M)  # noqa: E731
                         if b.strip() and re.match(r"(?:static )?oprt_status_t oprt_ptrs_(\w+)\(", b).group(1) in ops]
    return "".join(keep(decls)), "".join(keep(defs))


def build_host_library(dest: Path, name: str = "liboprt_host") -> Path:
    """Compile the host implementation (and the pointer entry points) into ``dest/<name>.so`` (raises
    RuntimeError with the compiler's output on failure)."""
    from oprt_core.cabi import include_dir

    cc = find_cc()
    if cc is None:
        pytest.skip("no C compiler (cc, gcc, clang or $CC) to build the host oprt.h library")
    suffix = ".dylib" if sys.platform == "darwin" else ".so"
    out = Path(dest) / f"{name}{suffix}"
    ptrs = Path(dest) / f"{name}_ptrs.c"  # exported here (static in a cffi extension's own source)
    ptrs.write_text('#include <stdint.h>\n#include "oprt.h"\n'
                    + _pointer_entry_points()[1].replace("static oprt_status_t", "oprt_status_t"), encoding="utf-8")
    cmd = [*cc.split(), "-std=gnu11", "-O2", "-Wall", "-shared", "-fPIC", f"-I{include_dir()}", str(HOST_SOURCE),
           str(ptrs), "-o", str(out), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"building the host library failed:\n{' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    return out


def host_loader(path: Path | str) -> Callable[[], SimpleNamespace]:
    """A CompiledBackend loader over a host library at ``path`` (cffi ABI mode)."""

    def load() -> SimpleNamespace:
        import cffi

        from oprt_core.cabi import cdef

        ffi = cffi.FFI()
        ffi.cdef(cdef() + _pointer_entry_points()[0])
        return SimpleNamespace(ffi=ffi, lib=ffi.dlopen(str(path)))

    return load


@pytest.fixture(scope="session")
def host_lib_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("cffi")
    return build_host_library(tmp_path_factory.mktemp("host_lib"))


def host_backend_at(path: Path):
    """A CompiledBackend ``host`` over the host library at ``path`` (available, or the assertion says why)."""
    from oprt_core.compiled import CompiledBackend

    backend = CompiledBackend("host", host_loader(path), vendor="host", dlpack_device_type=1)  # kDLCPU
    avail = backend.availability()
    assert avail.ok, avail.reason
    return backend


@pytest.fixture(scope="session")
def host_backend(host_lib_path: Path):
    return host_backend_at(host_lib_path)


@pytest.fixture(scope="session")
def host_raw(host_backend) -> SimpleNamespace:
    """The raw ffi and lib of the test run's host library, for tests that call oprt.h directly."""
    return SimpleNamespace(ffi=host_backend.ffi, lib=host_backend.lib)


@pytest.fixture(scope="session")
def build_host_lib() -> Callable[..., Path]:
    """``build_host_lib(dest, name)``: compile another copy of the host library (see build_host_library)."""
    return build_host_library


@pytest.fixture(scope="session")
def make_host_loader() -> Callable[[Path | str], Callable[[], SimpleNamespace]]:
    """``make_host_loader(path)``: a CompiledBackend loader over a host library."""
    return host_loader
