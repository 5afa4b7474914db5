"""scripts/tune/: every harness (elementwise, reduce, softmax: the library's kernels beside candidate configurations;
launch_cost: one launch's host time) builds with the library's sources through scripts/tune/build.sh, the script the
GPU suite runs, so that the GPU host can run them at once (no GPU needed here: this only compiles)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESSES = ("elementwise", "reduce", "softmax", "launch_cost")


def test_every_tune_harness_builds_with_the_library_sources(tmp_path):
    import oprt_core.build as oprt_build  # noqa: PLC0415 - the shared build module

    try:
        nvcc = oprt_build.find_nvcc()
    except oprt_build.BuildError as exc:
        pytest.skip(f"no nvcc: {exc}")
    mains = sorted(p.stem for p in (ROOT / "scripts/tune").glob("*.cu"))
    assert mains == sorted(HARNESSES), "a harness added or removed: update HARNESSES and scripts/README.md"
    env = {**os.environ, "PATH": f"{Path(nvcc).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    cmd = ["bash", str(ROOT / "scripts/tune/build.sh"), "-o", str(tmp_path)]  # no OP: all of them
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}{proc.stderr}"
    for name in HARNESSES:
        assert (tmp_path / name).is_file(), proc.stdout


def test_build_refuses_an_unknown_op(tmp_path):
    proc = subprocess.run(["bash", str(ROOT / "scripts/tune/build.sh"), "-o", str(tmp_path), "nosuchop"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "no scripts/tune/nosuchop.cu" in proc.stderr
