"""oprt_core.cabi.load_extension: the compiled backends' shared import + ABI check of their cffi extension."""

from __future__ import annotations

import sys
import types

import pytest

from oprt_core.cabi import abi_version, load_extension
from oprt_core.errors import AbiMismatchError, OprtError


class _Info:
    abi_version = 0


def _fake_extension(monkeypatch, built: int, reported: int, name: str = "oprt_fakepkg._oprt_fakepkg"):
    class Lib:
        OPRT_ABI_VERSION = built

        @staticmethod
        def oprt_get_library_info(info):
            info.abi_version = reported
            return 0

    class Ffi:
        @staticmethod
        def new(decl):
            assert decl == "oprt_library_info_t *"
            return _Info()

    ext = types.ModuleType(name)
    ext.ffi, ext.lib = Ffi(), Lib()
    monkeypatch.setitem(sys.modules, name, ext)
    return ext


def test_matching_extension_is_returned(monkeypatch):
    ext = _fake_extension(monkeypatch, abi_version(), abi_version())
    assert load_extension("oprt_fakepkg._oprt_fakepkg", "oprt-fakepkg", "liboprt_fakepkg.so") is ext


def test_library_and_wrapper_disagree(monkeypatch):
    v = abi_version()
    _fake_extension(monkeypatch, v, v + 1)
    with pytest.raises(AbiMismatchError, match=rf"liboprt_fakepkg.so reports oprt.h ABI {v + 1} but its wrapper "
                                               rf"was built for {v}; reinstall oprt-fakepkg "
                                               r"\(pip install --force-reinstall ./oprt_fakepkg\)"):
        load_extension("oprt_fakepkg._oprt_fakepkg", "oprt-fakepkg", "liboprt_fakepkg.so")


def test_built_against_another_oprt_core(monkeypatch):
    v = abi_version()
    _fake_extension(monkeypatch, v + 7, v + 7)
    with pytest.raises(AbiMismatchError, match=rf"oprt-fakepkg was built against oprt.h ABI {v + 7} but the "
                                               rf"installed oprt-core ships ABI {v}; .*--no-deps ./oprt_fakepkg"):
        load_extension("oprt_fakepkg._oprt_fakepkg", "oprt-fakepkg", "liboprt_fakepkg.so")


def test_abi_mismatch_is_an_oprt_error_and_an_import_error():
    assert issubclass(AbiMismatchError, OprtError) and issubclass(AbiMismatchError, ImportError)
    import oprt_core.errors as E

    assert "AbiMismatchError" in E.__all__
