"""oprt_core.cabi: the compiled backends' import of their cffi extension and the one ABI check of a load."""

from __future__ import annotations

import sys
import types

import pytest

from oprt_core.cabi import abi_version, check_abi, load_extension
from oprt_core.errors import AbiMismatchError, OprtError


def test_load_extension_imports_the_module(monkeypatch):
    ext = types.ModuleType("oprt_fakepkg._oprt_fakepkg")
    monkeypatch.setitem(sys.modules, "oprt_fakepkg._oprt_fakepkg", ext)
    assert load_extension("oprt_fakepkg._oprt_fakepkg") is ext


def test_matching_versions_pass():
    v = abi_version()
    check_abi("fakepkg", v, v)
    check_abi("fakepkg", v)  # no wrapper version to compare


def test_library_and_wrapper_disagree():
    v = abi_version()
    with pytest.raises(AbiMismatchError, match=rf"the fakepkg library reports oprt.h ABI version {v} but its cffi "
                                               rf"wrapper was built for version {v + 1}; reinstall the backend "
                                               r"\(e.g. `pip install --force-reinstall --no-deps ./oprt_fakepkg`\)"):
        check_abi("fakepkg", v, v + 1)


def test_built_against_another_oprt_core():
    v = abi_version()
    with pytest.raises(AbiMismatchError, match=rf"the fakepkg library was built against oprt.h ABI version {v + 7}, "
                                               rf"but the installed oprt-core expects version {v}; .*--no-deps "
                                               r"./oprt_fakepkg"):
        check_abi("fakepkg", v + 7, v + 7)


def test_abi_mismatch_is_an_oprt_error_and_an_import_error():
    assert issubclass(AbiMismatchError, OprtError) and issubclass(AbiMismatchError, ImportError)
    import oprt_core.errors as E

    assert "AbiMismatchError" in E.__all__
