"""oprt_build.cute_build: where the nvidia build finds the CUTLASS headers (OPRT_ENABLE_CUTE, OPRT_CUTLASS_DIR, the
nvidia-cutlass wheel, CUTLASS_PATH) and the sm_90 architecture it needs, on fake folders (no CUTLASS needed)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

import oprt_core.build as oprt_build

VERSION_H = "#define CUTLASS_MAJOR 4\n#define CUTLASS_MINOR 2\n#define CUTLASS_PATCH 0 \n"


def fake_include(folder: Path) -> Path:
    """A folder holding cutlass/cutlass.h, cutlass/version.h and cute/, as a CUTLASS include folder does."""
    (folder / "cutlass").mkdir(parents=True)
    (folder / "cutlass" / "cutlass.h").write_text("#pragma once\n")
    (folder / "cutlass" / "version.h").write_text(VERSION_H)
    (folder / "cute").mkdir()
    return folder


def fake_wheel(site: Path) -> Path:
    """site/cutlass_library as the nvidia-cutlass wheel installs it; its __init__ fails if it is ever run."""
    pkg = site / "cutlass_library"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise RuntimeError('cutlass_library imported')\n")
    return fake_include(pkg / "source" / "include")


@pytest.fixture
def clean(monkeypatch):
    """No CUTLASS anywhere: the three variables unset and no cutlass_library importable."""
    for var in ("OPRT_ENABLE_CUTE", "OPRT_CUTLASS_DIR", "CUTLASS_PATH"):
        monkeypatch.delenv(var, raising=False)
    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        if name == "cutlass_library" and not getattr(find_spec, "allow", False):
            return None
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    return find_spec


def test_oprt_cutlass_dir(clean, monkeypatch, tmp_path):
    inc = fake_include(tmp_path / "inc")
    monkeypatch.setenv("OPRT_CUTLASS_DIR", str(inc))
    cute = oprt_build.cute_build(["90"])
    assert cute.enabled and cute.include == inc.resolve() and cute.source == "OPRT_CUTLASS_DIR"
    assert cute.version == "4.2.0"
    assert "CUTLASS 4.2.0" in cute.summary and str(inc.resolve()) in cute.summary


def test_the_wheel_is_found_without_importing_it(clean, monkeypatch, tmp_path):
    inc = fake_wheel(tmp_path / "site")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    clean.allow = True
    cute = oprt_build.cute_build(["90"])
    assert cute.enabled and cute.source == "nvidia-cutlass" and cute.include == inc.resolve()
    assert "cutlass_library" not in sys.modules


def test_cutlass_path(clean, monkeypatch, tmp_path):
    fake_include(tmp_path / "cutlass" / "include")
    monkeypatch.setenv("CUTLASS_PATH", str(tmp_path / "cutlass"))
    cute = oprt_build.cute_build(["90a"])
    assert cute.enabled and cute.source == "CUTLASS_PATH"
    assert cute.include == (tmp_path / "cutlass" / "include").resolve()


def test_search_order(clean, monkeypatch, tmp_path):
    """OPRT_CUTLASS_DIR before the wheel, the wheel before CUTLASS_PATH."""
    env_inc = fake_include(tmp_path / "env")
    wheel_inc = fake_wheel(tmp_path / "site")
    fake_include(tmp_path / "cutlass" / "include")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    clean.allow = True
    monkeypatch.setenv("CUTLASS_PATH", str(tmp_path / "cutlass"))
    monkeypatch.setenv("OPRT_CUTLASS_DIR", str(env_inc))
    assert oprt_build.cute_build(["90"]).include == env_inc.resolve()
    monkeypatch.delenv("OPRT_CUTLASS_DIR")
    assert oprt_build.cute_build(["90"]).include == wheel_inc.resolve()
    clean.allow = False
    assert oprt_build.cute_build(["90"]).source == "CUTLASS_PATH"


def test_auto_without_headers_builds_without_and_says_where_it_looked(clean, monkeypatch, tmp_path):
    monkeypatch.setenv("CUTLASS_PATH", str(tmp_path))  # no include/ there
    cute = oprt_build.cute_build(["90"])
    assert not cute.enabled and cute.include is None
    for place in ("OPRT_CUTLASS_DIR", "nvidia-cutlass", "CUTLASS_PATH"):
        assert place in cute.summary


def test_on_without_headers_fails_clearly(clean, monkeypatch):
    monkeypatch.setenv("OPRT_ENABLE_CUTE", "on")
    with pytest.raises(oprt_build.BuildError) as info:
        oprt_build.cute_build(["90"])
    message = str(info.value)
    assert "\n" not in message and message.startswith("error: ")
    for text in ("OPRT_ENABLE_CUTE=on", "OPRT_CUTLASS_DIR (unset)", "nvidia-cutlass wheel", "CUTLASS_PATH (unset)",
                 "pip install nvidia-cutlass", "OPRT_ENABLE_CUTE=off"):
        assert text in message, text


def test_off_never_builds_them(clean, monkeypatch, tmp_path):
    monkeypatch.setenv("OPRT_CUTLASS_DIR", str(fake_include(tmp_path / "inc")))
    monkeypatch.setenv("OPRT_ENABLE_CUTE", "OFF")
    cute = oprt_build.cute_build(["90"])
    assert not cute.enabled and "OPRT_ENABLE_CUTE=off" in cute.summary


def test_a_wrong_oprt_cutlass_dir_is_an_error_in_every_mode_but_off(clean, monkeypatch, tmp_path):
    (tmp_path / "cutlass").mkdir()  # no cutlass.h, no cute/
    monkeypatch.setenv("OPRT_CUTLASS_DIR", str(tmp_path))
    with pytest.raises(oprt_build.BuildError, match="OPRT_CUTLASS_DIR=.* does not hold cutlass/cutlass.h and cute/"):
        oprt_build.cute_build(["90"])
    monkeypatch.setenv("OPRT_ENABLE_CUTE", "off")
    assert not oprt_build.cute_build(["90"]).enabled


def test_an_sm90_architecture_is_required(clean, monkeypatch, tmp_path):
    monkeypatch.setenv("OPRT_CUTLASS_DIR", str(fake_include(tmp_path / "inc")))
    cute = oprt_build.cute_build(["80", "89"])
    assert not cute.enabled and "no 90 or 90a" in cute.summary
    assert oprt_build.cute_build(["80", "90"]).enabled
    assert oprt_build.cute_build(["90a"]).enabled
    monkeypatch.setenv("OPRT_ENABLE_CUTE", "on")
    with pytest.raises(oprt_build.BuildError, match=r"OPRT_CUDA_ARCHS \(80;89\) has no 90 or 90a"):
        oprt_build.cute_build(["80", "89"])


def test_an_unknown_mode_is_refused(clean, monkeypatch):
    monkeypatch.setenv("OPRT_ENABLE_CUTE", "maybe")
    with pytest.raises(oprt_build.BuildError, match="OPRT_ENABLE_CUTE='maybe' is not one of auto, on, off"):
        oprt_build.cute_build(["90"])


def test_version_unknown_without_version_h(tmp_path):
    assert oprt_build.cutlass_version(tmp_path) == "unknown"


def test_the_cutlass_sources_are_apart_from_the_shared_ones():
    """The metax build compiles kernel_sources() only: the CUTLASS sources are never among them."""
    from oprt_core.cabi import include_dir

    inc = Path(include_dir())
    shared = {p.name for p in oprt_build.kernel_sources(inc)}
    cute = {p.name for p in oprt_build.cute_sources(inc)}
    assert "matmul_sm90.cu" in cute and "matmul.cu" in shared and not shared & cute
    assert {p.name for p in oprt_build.cute_headers(inc)} == {"matmul_sm90.h", "matmul_sm90.cuh"}
