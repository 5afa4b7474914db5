"""The build plan of oprt-metax, checked without MACA: ``python setup.py plan`` prints the commands.

The mxcc command lines (flags, include and library paths) must be exactly what docs/metax.md shows, and
the flavour choice must fail with one message naming both options when no toolchain is chosen or found.
These tests need the source tree only (no install, no GPU, no MACA SDK).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "oprt_metax" / "setup.py"
INCLUDE = ROOT / "oprt_core" / "src" / "oprt_core" / "include"
SHARED = INCLUDE / "oprt_shared"
OPERATORS = INCLUDE.parent / "operators"
DOC = ROOT / "docs" / "metax.md"
FAKE_MACA = "/opt/maca-not-here"

pytestmark = pytest.mark.skipif(not SETUP.is_file(), reason="not run from a checkout")


def _plan(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("OPRT_", "MACA", "MXCC", "NVCC", "CUDA_HOME", "CUDA_PATH"))}
    base.update({"PATH": os.pathsep.join(p for p in ("/usr/bin", "/bin") if Path(p).is_dir()),
                 "OPRT_INCLUDE_DIR": str(INCLUDE), **env})
    return subprocess.run([sys.executable, str(SETUP), "plan", str(tmp_path / "build"), str(tmp_path / "out")],
                          capture_output=True, text=True, env=base, cwd=ROOT / "oprt_metax")


def _symbolic(text: str, tmp_path: Path) -> list[str]:
    """The plan with the machine's paths replaced by the doc's variables."""
    for real, var in ((str(SHARED), "$SHARED"), (str(OPERATORS), "$OPERATORS"), (str(INCLUDE), "$OPRT_INCLUDE"),
                      (str(tmp_path / "build"), "$BUILD"), (str(tmp_path / "out"), "$OUT"),
                      (FAKE_MACA, "$MACA_PATH"), ("mxcc unknown", "mxcc $MXCC_VERSION")):
        text = text.replace(real, var)
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def _doc_block() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(r"<!-- mxcc-plan -->\s*```[a-z]*\n(.*?)```", text, re.S)
    assert match, f"{DOC} lacks the <!-- mxcc-plan --> code block"
    return [line for line in match.group(1).splitlines() if line.strip()]


def test_mxcc_plan_is_what_the_doc_says(tmp_path):
    proc = _plan(tmp_path, OPRT_METAX_TOOLCHAIN="mxcc", MACA_PATH=FAKE_MACA)
    assert proc.returncode == 0, proc.stderr
    got = _symbolic(proc.stdout, tmp_path)
    assert got == _doc_block()
    # the parts the issue names, spelled out
    compiles, link = got[:-1], got[-1]
    assert len(compiles) == len([*SHARED.glob("*.cu"), *OPERATORS.glob("*/*.cu")])
    for cmd in compiles:
        assert cmd.startswith("$MACA_PATH/mxgpu_llvm/bin/mxcc -x maca ")
        assert "-I$MACA_PATH/include" in cmd.split() and "-I$OPRT_INCLUDE" in cmd.split()
        assert "-DOPRT_VENDOR_MACA" in cmd.split()
    assert "-L$MACA_PATH/lib" in link.split() and "-lmcruntime" in link.split()
    assert "-Wl,-rpath,$MACA_PATH/lib" in link.split()


def test_plan_header_names_the_flavour(tmp_path):
    proc = _plan(tmp_path, OPRT_METAX_TOOLCHAIN="mxcc", MACA_PATH=FAKE_MACA)
    assert proc.stdout.startswith("# oprt-metax build: flavour mxcc")


def test_default_maca_path_is_opt_maca(tmp_path):
    proc = _plan(tmp_path, OPRT_METAX_TOOLCHAIN="mxcc")
    assert proc.returncode == 0, proc.stderr
    if Path("/opt/maca").exists():
        pytest.skip("a MACA SDK is installed here")
    assert "-I/opt/maca/include" in proc.stdout and "-L/opt/maca/lib" in proc.stdout


def test_shim_plan_uses_the_shim_header(tmp_path):
    nvcc = next((p for p in ("/usr/local/bin/nvcc", "/usr/local/cuda/bin/nvcc", "/usr/bin/nvcc") if Path(p).is_file()),
                None)
    if nvcc is None:
        pytest.skip("no nvcc here")
    proc = _plan(tmp_path, OPRT_METAX_TOOLCHAIN="nvcc-shim", NVCC=nvcc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# oprt-metax build: flavour nvcc-shim")
    cmds = [line.split() for line in proc.stdout.splitlines() if not line.startswith("#")]
    for cmd in cmds[:-1]:
        assert cmd[cmd.index("-x") + 1] == "cu"
        assert cmd[cmd.index("-include") + 1].endswith("oprt_shared/maca_cuda_shim.h")
        assert "-DOPRT_VENDOR_MACA" in cmd and "-gencode" in cmd and "-cudart" in cmd
        assert cmd[cmd.index("-c") + 1].endswith(".cu")


def test_auto_without_mxcc_names_both_options(tmp_path):
    proc = _plan(tmp_path, MACA_PATH=FAKE_MACA)
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr  # one clear line, no traceback
    assert "OPRT_METAX_TOOLCHAIN=mxcc" in lines[0] and "OPRT_METAX_TOOLCHAIN=nvcc-shim" in lines[0]
    assert "MACA_PATH" in lines[0] and FAKE_MACA in lines[0]


def test_unknown_toolchain_is_refused(tmp_path):
    proc = _plan(tmp_path, OPRT_METAX_TOOLCHAIN="hipcc")
    assert proc.returncode != 0
    assert "auto, mxcc, nvcc-shim" in proc.stderr


def test_dry_run_env_builds_nothing(tmp_path):
    """OPRT_METAX_DRY_RUN=1 during a build prints the plan and stops before compiling anything."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPRT_", "MACA", "MXCC"))}
    env.update(OPRT_METAX_DRY_RUN="1", OPRT_METAX_TOOLCHAIN="mxcc", MACA_PATH=FAKE_MACA,
               OPRT_INCLUDE_DIR=str(INCLUDE), PATH=os.pathsep.join(p for p in ("/usr/bin", "/bin") if Path(p).is_dir()))
    proc = subprocess.run([sys.executable, str(SETUP), "build_ext", "--build-temp", str(tmp_path / "t"),
                           "--build-lib", str(tmp_path / "l")], capture_output=True, text=True, env=env,
                          cwd=ROOT / "oprt_metax")
    assert proc.returncode != 0
    assert "OPRT_METAX_DRY_RUN" in proc.stderr
    assert "-lmcruntime" in proc.stdout
    assert not list(tmp_path.rglob("*.o")) and not list(tmp_path.rglob("*.so"))
