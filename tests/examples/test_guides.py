"""The guides, followed step by step: docs/how-to-add-an-operator.md and docs/how-to-add-a-backend.md.

Code blocks whose first line is a ``guide-test`` marker are taken from the Markdown:
- ```` ```python ```` blocks marked ``# guide-test: <step>`` are executed in order, in one namespace per guide,
  in-process (plugins registered with ``get_plugin_manager(load_entrypoints=False)``);
- C, CUDA and MACA blocks marked ``// guide-test: file <name>`` are written to a temporary folder and
  compiled: C with the system compiler, CUDA with nvcc (``-c``, no GPU needed), MACA with nvcc through
  oprt_metax's ``maca_shim.h`` (the ``nvcc-shim`` flavour); each skips with the reason where its compiler is missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from oprt_core.cabi import include_dir

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
OPERATOR_GUIDE = DOCS / "how-to-add-an-operator.md"
BACKEND_GUIDE = DOCS / "how-to-add-a-backend.md"
MACA_SHIM = ROOT / "oprt_metax" / "csrc" / "maca_shim.h"

_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
_PY_MARK = re.compile(r"^# guide-test: (\S+)")
_FILE_MARK = re.compile(r"^// guide-test: file (\S+)")


def python_steps(guide: Path) -> list[tuple[str, str]]:
    steps = []
    for lang, body in _BLOCK.findall(guide.read_text(encoding="utf-8")):
        m = _PY_MARK.match(body)
        if lang == "python" and m:
            steps.append((m.group(1), body))
    return steps


def files(guide: Path) -> dict[str, str]:
    out = {}
    for _lang, body in _BLOCK.findall(guide.read_text(encoding="utf-8")):
        m = _FILE_MARK.match(body)
        if m:
            out[m.group(1)] = body
    return out


def run_steps(guide: Path, names: list[str], namespace: dict) -> None:
    steps = dict(python_steps(guide))
    for name in names:
        assert name in steps, f"{guide.name} has no `# guide-test: {name}` block; it has {sorted(steps)}"
        code = compile(steps[name], f"{guide.name}:{name}", "exec")
        exec(code, namespace)  # noqa: S102 - the guide's own code, the point of the test


def cc() -> str:
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name):
            return name
    pytest.skip("no C compiler (cc, gcc or clang)")


def nvcc() -> str:
    path = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if not path:
        pytest.skip("nvcc is not installed (the CUDA and MACA kernels of the guide compile with it)")
    return path


def compile_ok(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}{proc.stderr}"


def test_guides_have_their_blocks():
    assert [n for n, _ in python_steps(OPERATOR_GUIDE)] == ["spec", "plugin", "test"]
    assert set(files(OPERATOR_GUIDE)) == {"oprt_square.h", "square.cu", "square.maca"}
    assert [n for n, _ in python_steps(BACKEND_GUIDE)] == ["compiled-plugin", "compiled-test", "python-backend",
                                                            "python-test"]
    assert set(files(BACKEND_GUIDE)) == {"oprt_mine.c"}


# -- how to add an operator ----------------------------------------------------------------------------------

def test_operator_guide_python_steps():
    ns: dict = {"__name__": "guide_operator"}
    run_steps(OPERATOR_GUIDE, ["spec", "plugin", "test"], ns)
    assert ns["registry"].get_backend("numpy").supports("square", "f32").ok
    assert ns["registry"].unused_impls == {}


def test_operator_guide_header_is_generated_from_its_spec():
    """The guide's C header is what oprt_core.cdecl makes of the guide's spec (its first line is the marker)."""
    from oprt_core import cdecl

    ns: dict = {"__name__": "guide_operator_cabi"}
    run_steps(OPERATOR_GUIDE, ["spec"], ns)
    block = files(OPERATOR_GUIDE)["oprt_square.h"].split("\n", 1)[1]
    assert block == cdecl.header([ns["square_spec"]], "OPRT_SQUARE_H_")


@pytest.fixture
def operator_files(tmp_path):
    for name, text in files(OPERATOR_GUIDE).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_operator_guide_abi_entry_compiles(operator_files):
    src = operator_files / "check_header.c"
    src.write_text('#include "oprt_square.h"\nint main(void) { return (int)sizeof(oprt_square_descriptor_t) == 0; }\n')
    compile_ok([cc(), "-std=c11", "-Wall", "-Werror", "-fsyntax-only", f"-I{include_dir()}", f"-I{operator_files}",
                str(src)])


def test_operator_guide_cuda_kernel_compiles(operator_files):
    compile_ok([nvcc(), "-std=c++17", "-c", f"-I{include_dir()}", f"-I{operator_files}",
                str(operator_files / "square.cu"), "-o", str(operator_files / "square.o")])


def test_operator_guide_maca_kernel_compiles_through_the_shim(operator_files):
    if not MACA_SHIM.exists():
        pytest.skip(f"{MACA_SHIM} is missing (oprt_metax provides it)")
    compile_ok([nvcc(), "-std=c++17", "-x", "cu", "-include", str(MACA_SHIM), "-c", f"-I{include_dir()}",
                f"-I{operator_files}", str(operator_files / "square.maca"), "-o", str(operator_files / "square_mx.o")])


# -- how to add a backend ------------------------------------------------------------------------------------

def test_backend_guide_compiled_library(tmp_path, monkeypatch):
    src = tmp_path / "oprt_mine.c"
    src.write_text(files(BACKEND_GUIDE)["oprt_mine.c"], encoding="utf-8")
    lib = tmp_path / "liboprt_mine.so"
    compile_ok([cc(), "-std=gnu11", "-Wall", "-Werror", "-Wno-unused-parameter", "-shared", "-fPIC",
                f"-I{include_dir()}", str(src), "-o", str(lib)])
    monkeypatch.setenv("OPRT_MINE_LIB", str(lib))
    ns: dict = {"__name__": "guide_backend_compiled"}
    run_steps(BACKEND_GUIDE, ["compiled-plugin", "compiled-test"], ns)
    # every function of oprt.h is there: cffi resolves each one
    mod = ns["_load"]()
    from oprt_core.cabi import cdef

    for name in re.findall(r"\b(oprt_\w+)\s*\(", cdef()):
        assert getattr(mod.lib, name) is not None, name


def test_backend_guide_python_backend():
    pytest.importorskip("oprt_bench", reason="oprt-bench is not installed (the guide's sweep step needs it)")
    ns: dict = {"__name__": "guide_backend_python"}
    run_steps(BACKEND_GUIDE, ["python-backend", "python-test"], ns)
    be = ns["registry"].get_backend("reluonly")
    assert not be.supports("copy", "f32").ok and be.supports("relu", "bf16").ok
