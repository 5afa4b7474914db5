"""The guides, followed step by step: docs/how-to-add-an-operator.md and docs/how-to-add-a-backend.md.

Code blocks whose first line is a ``guide-test`` marker are taken from the Markdown:
- ```` ```python ```` blocks marked ``# guide-test: <step>`` are executed in order, in one namespace per guide,
  in-process (plugins registered with ``get_plugin_manager(load_entrypoints=False)``);
- blocks marked ``guide-test: file <path>`` (``//``, ``#`` or ``<!--`` before it) are files: the backend guide's C
  library is compiled with the system compiler; the operator guide's are one op folder, written into a copy of
  oprt_core's sources, whose header is then regenerated (the tests check that nothing else changed, run the
  folder's tests and a sweep, and compile the kernel with nvcc, ``-c``, no GPU needed, as oprt_nvidia builds it and
  as oprt_metax's ``nvcc-shim`` flavour builds it); each compile skips with the reason where its compiler is missing.
"""

from __future__ import annotations

import csv
import linecache
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import oprt_core
import oprt_core.build as oprt_build
from oprt_core.cabi import include_dir

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
OPERATOR_GUIDE = DOCS / "how-to-add-an-operator.md"
BACKEND_GUIDE = DOCS / "how-to-add-a-backend.md"
SHARED = Path(include_dir()) / oprt_build.SHARED_DIR  # common.cuh, vendor.h and the shim

_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
_PY_MARK = re.compile(r"^# guide-test: (?!file )(\S+)")
_FILE_MARK = re.compile(r"^(?://|#|<!--) guide-test: file (\S+)")


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
        filename = f"{guide.name}:{name}"
        # in linecache, so that inspect.getsource finds the block's functions (TileLang's T.prim_func parses them)
        linecache.cache[filename] = (len(steps[name]), None, steps[name].splitlines(True), filename)
        # dont_inherit: not this module's `from __future__ import annotations` (TileLang reads the annotations' values)
        code = compile(steps[name], filename, "exec", dont_inherit=True)
        exec(code, namespace)  # noqa: S102 - the guide's own code, the point of the test


def cc() -> str:
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name):
            return name
    pytest.skip("no C compiler (cc, gcc or clang)")


def nvcc() -> str:
    """nvcc found as the builds find it (oprt_build.find_nvcc); a skip naming where it looked otherwise."""
    try:
        return oprt_build.find_nvcc()
    except oprt_build.BuildError as exc:
        pytest.skip(f"the guide's kernel compiles with nvcc: {exc}")


def compile_ok(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}{proc.stderr}"


def test_guides_have_their_blocks():
    assert python_steps(OPERATOR_GUIDE) == []
    assert set(files(OPERATOR_GUIDE)) == {f"operators/square/{name}" for name in SQUARE_FILES}
    assert [n for n, _ in python_steps(BACKEND_GUIDE)] == ["compiled-plugin", "compiled-test", "python-backend",
                                                            "python-test", "tilelang-kernel"]
    assert set(files(BACKEND_GUIDE)) == {"oprt_mine.c"}


# -- how to add an operator: one folder, followed in a copy of oprt_core's sources ----------------------------------

SQUARE_FILES = ("__init__.py", "numpy_impl.py", "baselines.py", "test_square.py", "README.md", "plan.h", "square.cu")
GENERATED = {"oprt_core/include/oprt.h", "oprt_core/include/oprt_entry.h"}  # python -m oprt_core.cdecl --write
SQUARE_ENTRY_POINTS = {"oprt_create_square_descriptor", "oprt_get_square_workspace_size", "oprt_square",
                       "oprt_destroy_square_descriptor"}


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def _env(src: Path) -> dict[str, str]:
    """An environment whose oprt_core is the copy at ``src`` (PYTHONPATH comes before the installed one)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("OPRT_DISABLE_PLUGIN_AUTOLOAD", None)
    return env


@dataclass
class GuideTree:
    src: Path  # the copy's src folder (holds oprt_core/)
    changed: set[str]  # paths under src that the guide's steps added or changed

    @property
    def include(self) -> Path:
        return self.src / "oprt_core" / "include"

    @property
    def folder(self) -> Path:
        return self.src / "oprt_core" / "operators" / "square"

    def run(self, *cmd: str, timeout: float = 900) -> subprocess.CompletedProcess:
        return subprocess.run(cmd, capture_output=True, text=True, env=_env(self.src), cwd=self.src.parent,
                              timeout=timeout)


@pytest.fixture(scope="module")
def guide_tree(tmp_path_factory) -> GuideTree:
    """oprt_core's sources copied, the guide's files written into operators/square/ (each block less its marker
    line), and the header regenerated, as the guide says."""
    src = tmp_path_factory.mktemp("guide_tree") / "src"
    shutil.copytree(Path(oprt_core.__file__).parent, src / "oprt_core",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
    before = _tree(src)
    for name, text in files(OPERATOR_GUIDE).items():
        dest = src / "oprt_core" / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text.split("\n", 1)[1], encoding="utf-8")
    tree = GuideTree(src, set())
    proc = tree.run(sys.executable, "-m", "oprt_core.cdecl", "--write")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = _tree(src)
    tree.changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    return tree


def test_operator_guide_adds_one_folder_and_the_generated_headers(guide_tree):
    """Nothing outside the new folder is edited: the registry, the numpy backend, the op function, the builds and
    the tests that cover every op find the op; only the generated headers change with it."""
    folder = {f"oprt_core/operators/square/{name}" for name in SQUARE_FILES}
    assert guide_tree.changed == folder | GENERATED
    proc = guide_tree.run(sys.executable, "-m", "oprt_core.cdecl", "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    entry = (guide_tree.include / "oprt_entry.h").read_text(encoding="utf-8")
    assert '#include "../operators/square/plan.h"' in entry and "OPRT_DEFINE_OP_square" in entry


def test_operator_guide_op_is_registered_and_runs_through_the_op_api(guide_tree):
    script = ("import numpy as np, oprt_core.ops as ops\n"
              "from oprt_core import operators\n"
              "from oprt_core.plugins import get_registry\n"
              "assert operators.names()[operators.names().index('softmax') + 1] == 'square'  # ORDER 60\n"
              "assert get_registry().get_backend('numpy').supports('square', 'bf16').ok\n"
              "x = np.array([[-3.0, 0.5], [2.0, 0.0]], np.float32)\n"
              "print(ops.square(x.T).tolist())\n")
    proc = guide_tree.run(sys.executable, "-c", script)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "[[9.0, 4.0], [0.25, 0.0]]"


def test_operator_guide_folder_tests_pass(guide_tree):
    proc = guide_tree.run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(guide_tree.folder))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert re.search(r"\b\d+ passed\b", proc.stdout) and "failed" not in proc.stdout


def test_operator_guide_sweep_on_numpy(guide_tree, tmp_path):
    pytest.importorskip("oprt_bench", reason="oprt-bench is not installed (the guide's sweep step needs it)")
    out = tmp_path / "run"
    proc = guide_tree.run(sys.executable, "-c", "import sys; from oprt_bench.cli import main; sys.exit(main())",
                          "--ops", "square", "--backends", "numpy", "--cases", "smoke", "--out", str(out), "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))
    assert rows and {r["op"] for r in rows} == {"square"} and {r["status"] for r in rows} == {"ok"}


def test_operator_guide_kernel_is_built_with_no_build_file_edited(guide_tree):
    sources = oprt_build.kernel_sources(guide_tree.include)
    assert guide_tree.folder / "square.cu" in sources


def test_operator_guide_c_declarations_compile(guide_tree, tmp_path):
    """The regenerated oprt_entry.h, with the folder's plan.h, compiles as C (the host libraries' language)."""
    src = tmp_path / "check_entry.c"
    src.write_text('#include "oprt_entry.h"\n'
                   "int main(void) {\n"
                   "    oprt_status_t (*plan)(oprt_elementwise_plan_t *, const oprt_tensor_desc_t *,\n"
                   "                          const oprt_tensor_desc_t *) = oprt_plan_square;\n"
                   "    return plan == 0 || sizeof(oprt_square_descriptor_t) == 0;\n"
                   "}\n", encoding="utf-8")
    compile_ok([cc(), "-std=c11", "-Wall", "-Werror", "-Wno-unused-function", "-fsyntax-only",
                f"-I{guide_tree.include}", str(src)])


def kernel_symbols(obj: Path) -> set[str]:
    """The external functions an object defines (nm), or a skip where binutils' nm is missing."""
    if not shutil.which("nm"):
        pytest.skip("no nm (binutils) to list the object's symbols")
    proc = subprocess.run(["nm", "--defined-only", "--extern-only", str(obj)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return {line.split()[-1] for line in proc.stdout.splitlines() if line.split()[1:2] == ["T"]}


def test_operator_guide_kernel_compiles_for_nvidia(guide_tree, tmp_path):
    """As oprt_nvidia builds it: vendor.h's CUDA side."""
    include = guide_tree.include
    obj = tmp_path / "square.o"
    compile_ok([nvcc(), "-std=c++17", "-arch=sm_90", "-c", f"-I{include}", f"-I{include / oprt_build.SHARED_DIR}",
                str(guide_tree.folder / "square.cu"), "-o", str(obj)])
    assert SQUARE_ENTRY_POINTS <= kernel_symbols(obj)


def test_operator_guide_kernel_compiles_for_metax_through_the_shim(guide_tree, tmp_path):
    """The same source as oprt_metax's nvcc-shim flavour builds it: vendor_maca.h's names, mapped by the shim."""
    include = guide_tree.include
    shared = include / oprt_build.SHARED_DIR
    flags = oprt_build.nvcc_shim_flags(include)
    assert flags[flags.index("-include") + 1] == str(shared / oprt_build.MACA_SHIM)
    assert (shared / oprt_build.MACA_SHIM).is_file()
    # what these flags must select: vendor.h's MACA side (no NVIDIA capability), the shim's names and warps under it
    probe = ('#include "common.cuh"\n'
             'static_assert(OPRT_MACA_NVCC_SHIM && !OPRT_HAS_PTX && oprt_kernels::kWarp == 32, "the metax build");\n'
             'static_assert(OPRT_DRIVER_COPY_NAME[0] == \'m\', "vendor_maca.h, not vendor_cuda.h");\n')
    (tmp_path / "probe.cu").write_text(probe, encoding="utf-8")
    archs, _ = oprt_build.gencode_flags(oprt_build.cuda_archs())
    base = [nvcc(), *oprt_build.NVCC_FLAGS, *archs, *flags]
    compile_ok([*base, "-c", str(tmp_path / "probe.cu"), "-o", str(tmp_path / "probe.o")])
    obj = tmp_path / "square_metax.o"
    compile_ok([*base, "-c", str(guide_tree.folder / "square.cu"), "-o", str(obj)])
    assert SQUARE_ENTRY_POINTS <= kernel_symbols(obj)


# a vendor's own identifiers: compiled through the shim, a CUDA name still builds, so the source is read for them
_VENDOR_NAME = re.compile(r"\b(?:cuda|mc)[A-Z]\w*|\b__(?:nv|maca)_\w+|#include <(?:cuda|mcr/|common/maca)")


def test_operator_guide_kernel_names_no_vendor():
    """The one source both builds compile reaches the vendor only through vendor.h's names."""
    src = files(OPERATOR_GUIDE)["operators/square/square.cu"]
    assert _VENDOR_NAME.findall(src) == []
    assert _VENDOR_NAME.findall("cudaStream_t st; __nv_bfloat16 *p; mcGetLastError(); #include <cuda_fp16.h>") == [
        "cudaStream_t", "__nv_bfloat16", "mcGetLastError", "#include <cuda"]


def test_operator_guide_shows_the_shim_flags_the_build_uses():
    """The nvcc-shim command the guide prints carries oprt_core.build.nvcc_shim_flags, in the guide's variables."""
    include = Path(include_dir())
    flags = " ".join(oprt_build.nvcc_shim_flags(include))
    flags = flags.replace(str(include / oprt_build.SHARED_DIR), "$SHARED").replace(str(include), "$OPRT_INCLUDE")
    text = " ".join(OPERATOR_GUIDE.read_text(encoding="utf-8").replace("\\\n", " ").split())
    assert f"nvcc -O3 -std=c++17 -arch=sm_90 {flags} -c $OPERATORS/square/square.cu" in text


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


# -- the TileLang example: kernels.py's own factory, lowered where tilelang is installed -------------------------------

def _function(text: str, name: str) -> str:
    """The source of top-level function ``name`` in ``text``: its def line through its last indented line."""
    m = re.search(rf"^def {name}\(.*?(?=^\S)", text + "\nEND", re.S | re.M)
    assert m, f"no function {name}"
    return m.group(0).rstrip()


def test_backend_guide_tilelang_factory_is_the_backends_own():
    """The guide shows oprt-tilelang's row-sum factory as kernels.py has it, not a copy that drifts from it."""
    step = dict(python_steps(BACKEND_GUIDE))["tilelang-kernel"]
    kernels = (ROOT / "examples" / "oprt-tilelang" / "src" / "oprt_tilelang" / "kernels.py").read_text(encoding="utf-8")
    assert _function(step, "_sum_rows") == _function(kernels, "_sum_rows")


def test_backend_guide_tilelang_kernel_lowers():
    """The guide's TileLang block runs: the row-sum key oprt-tilelang plans, lowered to CUDA C for sm_90 (TileLang's
    code generation; no GPU or nvcc needed)."""
    pytest.importorskip("tilelang", reason="tilelang is not installed: the guide's TileLang block needs it "
                        "(pip install tilelang)")
    pytest.importorskip("oprt_tilelang", reason="oprt-tilelang is not installed: pip install ./examples/oprt-tilelang")
    ns: dict = {"__name__": "guide_backend_tilelang"}
    run_steps(BACKEND_GUIDE, ["tilelang-kernel"], ns)
    assert "__launch_bounds__(" in ns["source"] and ns["key"].factory == "sum_rows"

