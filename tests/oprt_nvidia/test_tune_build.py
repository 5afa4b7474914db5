"""scripts/tune/tune.cu (the kernel-variant microbenchmark of issue 6) builds with the library's sources,
so a GPU session can run it in its first call (no GPU needed here: this only compiles)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_tune_builds_with_the_library_sources(tmp_path):
    import oprt_core.include.oprt_build as oprt_build  # noqa: PLC0415 - the shared build module

    try:
        nvcc = oprt_build.find_nvcc()
    except oprt_build.BuildError as exc:
        pytest.skip(f"no nvcc: {exc}")
    sources = sorted(str(p) for p in (ROOT / "oprt_nvidia" / "csrc").glob("*.cu"))
    cmd = [nvcc, "-O3", "-std=c++17", "-arch=sm_90", f"-I{ROOT / 'oprt_core/src/oprt_core/include'}",
           f"-I{ROOT / 'oprt_nvidia/csrc'}", str(ROOT / "scripts/tune/tune.cu"), *sources, "-o", str(tmp_path / "tune")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}{proc.stderr}"
    assert (tmp_path / "tune").is_file()
