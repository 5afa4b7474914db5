"""scripts/tune/tune.cu (the kernel-variant microbenchmark of issue 6) and scripts/tune/launch_cost.cu (one launch's
host time) build with the library's sources, so a GPU session can run them in its first call (no GPU needed here:
this only compiles)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("main", ["tune.cu", "launch_cost.cu"])
def test_tune_builds_with_the_library_sources(tmp_path, main):
    import oprt_core.include.oprt_build as oprt_build  # noqa: PLC0415 - the shared build module

    try:
        nvcc = oprt_build.find_nvcc()
    except oprt_build.BuildError as exc:
        pytest.skip(f"no nvcc: {exc}")
    # the build command lives in scripts/tune/build.sh (the GPU suite runs the same script)
    env = {**os.environ, "PATH": f"{Path(nvcc).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    cmd = ["bash", str(ROOT / "scripts/tune/build.sh"), str(tmp_path / "tune"), str(ROOT / "scripts/tune" / main)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}{proc.stderr}"
    assert (tmp_path / "tune").is_file()
