"""scripts/tune/: every harness (elementwise, reduce, softmax: the library's kernels beside candidate configurations;
launch_cost: one launch's host time) builds through scripts/tune/build.sh, the script the GPU suite runs, so that the
GPU host can run them at once (no GPU needed here: this only compiles). Here the harnesses link against the installed
library; the GPU suite compiles the library's sources with them."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESSES = ("elementwise", "reduce", "softmax", "launch_cost")


def test_every_tune_harness_builds_against_the_installed_library(tmp_path):
    """Every harness compiles from the working tree and links against the installed oprt_nvidia's library (`-l`):
    the library's own sources were compiled by that install, so they are not compiled a second time here."""
    import oprt_core.build as oprt_build  # noqa: PLC0415 - the shared build module

    try:
        nvcc = oprt_build.find_nvcc()
    except oprt_build.BuildError as exc:
        pytest.skip(f"no nvcc: {exc}")
    mains = sorted(p.stem for p in (ROOT / "scripts/tune").glob("*.cu"))
    assert mains == sorted(HARNESSES), "a harness added or removed: update HARNESSES and scripts/README.md"
    env = {**os.environ, "PATH": f"{Path(nvcc).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    libdir = Path(importlib.util.find_spec("oprt_nvidia").origin).parent
    if not (libdir / "liboprt_nvidia.so").is_file():
        pytest.skip(f"oprt_nvidia at {libdir} has no liboprt_nvidia.so (an editable install builds it elsewhere)")
    cmd = ["bash", str(ROOT / "scripts/tune/build.sh"), "-o", str(tmp_path), "-l", str(libdir)]  # no OP: all
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}{proc.stderr}"
    for name in HARNESSES:
        assert (tmp_path / name).is_file(), proc.stdout


@pytest.mark.parametrize("args, said", [(["-l", "."], "no liboprt_nvidia.so in ."),
                                        (["-x"], "unknown option -x")])
def test_build_refuses_a_bad_option(tmp_path, args, said):
    proc = subprocess.run(["bash", str(ROOT / "scripts/tune/build.sh"), "-o", str(tmp_path), *args],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr


def test_build_refuses_an_unknown_op(tmp_path):
    proc = subprocess.run(["bash", str(ROOT / "scripts/tune/build.sh"), "-o", str(tmp_path), "nosuchop"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "no scripts/tune/nosuchop.cu" in proc.stderr
