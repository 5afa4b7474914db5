"""The guides, followed step by step: docs/how-to-add-an-operator.md and docs/how-to-add-a-backend.md.

Code blocks whose first line is a ``guide-test`` marker are taken from the Markdown:
- ```` ```python ```` blocks marked ``# guide-test: <step>`` are executed in order, in one namespace per guide,
  in-process (plugins registered with ``get_plugin_manager(load_entrypoints=False)``);
- C and CUDA blocks marked ``// guide-test: file <name>`` are written to a temporary folder and compiled: C with
  the system compiler, the kernel (``square.cu``) with nvcc (``-c``, no GPU needed) twice, as oprt_nvidia builds it
  and as oprt_metax's ``nvcc-shim`` flavour builds it (``oprt_build.nvcc_shim_flags``: maca_cuda_shim.h
  force-included, ``-DOPRT_VENDOR_MACA``); each skips with the reason where its compiler is missing.
"""

from __future__ import annotations

import linecache
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import oprt_core.build as oprt_build
from oprt_core.cabi import include_dir

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
OPERATOR_GUIDE = DOCS / "how-to-add-an-operator.md"
BACKEND_GUIDE = DOCS / "how-to-add-a-backend.md"
SHARED = Path(include_dir()) / oprt_build.SHARED_DIR  # common.cuh, vendor.h and the shim

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
    assert [n for n, _ in python_steps(OPERATOR_GUIDE)] == ["spec", "plugin", "test"]
    assert set(files(OPERATOR_GUIDE)) == {"oprt_square.h", "square.cu"}
    assert [n for n, _ in python_steps(BACKEND_GUIDE)] == ["compiled-plugin", "compiled-test", "python-backend",
                                                            "python-test", "tilelang-kernel"]
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


def kernel_symbols(obj: Path) -> set[str]:
    """The external functions an object defines (nm), or a skip where binutils' nm is missing."""
    if not shutil.which("nm"):
        pytest.skip("no nm (binutils) to list the object's symbols")
    proc = subprocess.run(["nm", "--defined-only", "--extern-only", str(obj)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return {line.split()[-1] for line in proc.stdout.splitlines() if line.split()[1:2] == ["T"]}


SQUARE_ENTRY_POINTS = {"oprt_create_square_descriptor", "oprt_get_square_workspace_size", "oprt_square",
                       "oprt_destroy_square_descriptor"}


def test_operator_guide_kernel_compiles_for_nvidia(operator_files):
    """As oprt_nvidia builds it: vendor.h's CUDA side."""
    obj = operator_files / "square.o"
    compile_ok([nvcc(), "-std=c++17", "-arch=sm_90", "-c", f"-I{include_dir()}", f"-I{SHARED}", f"-I{operator_files}",
                str(operator_files / "square.cu"), "-o", str(obj)])
    assert SQUARE_ENTRY_POINTS <= kernel_symbols(obj)


def test_operator_guide_kernel_compiles_for_metax_through_the_shim(operator_files):
    """The same source as oprt_metax's nvcc-shim flavour builds it: vendor_maca.h's names, mapped by the shim."""
    flags = oprt_build.nvcc_shim_flags(Path(include_dir()))
    assert flags[flags.index("-include") + 1] == str(SHARED / oprt_build.MACA_SHIM)
    assert (SHARED / oprt_build.MACA_SHIM).is_file()
    obj = operator_files / "square_metax.o"
    # what these flags must select: vendor.h's MACA side (no NVIDIA capability), the shim's names and warps under it
    probe = ('#include "common.cuh"\n'
             'static_assert(OPRT_MACA_NVCC_SHIM && !OPRT_HAS_PTX && oprt_kernels::kWarp == 32, "the metax build");\n'
             'static_assert(OPRT_DRIVER_COPY_NAME[0] == \'m\', "vendor_maca.h, not vendor_cuda.h");\n')
    (operator_files / "probe.cu").write_text(probe, encoding="utf-8")
    archs, _ = oprt_build.gencode_flags(oprt_build.cuda_archs())
    base = [nvcc(), *oprt_build.NVCC_FLAGS, *archs, *flags, f"-I{operator_files}"]
    compile_ok([*base, "-c", str(operator_files / "probe.cu"), "-o", str(operator_files / "probe.o")])
    compile_ok([*base, "-c", str(operator_files / "square.cu"), "-o", str(obj)])
    assert SQUARE_ENTRY_POINTS <= kernel_symbols(obj)


# a vendor's own identifiers: compiled through the shim, a CUDA name still builds, so the source is read for them
_VENDOR_NAME = re.compile(r"\b(?:cuda|mc)[A-Z]\w*|\b__(?:nv|maca)_\w+|#include <(?:cuda|mcr/|common/maca)")


def test_operator_guide_kernel_names_no_vendor():
    """The one source both builds compile reaches the vendor only through vendor.h's names."""
    src = files(OPERATOR_GUIDE)["square.cu"]
    assert _VENDOR_NAME.findall(src) == []
    assert _VENDOR_NAME.findall("cudaStream_t st; __nv_bfloat16 *p; mcGetLastError(); #include <cuda_fp16.h>") == [
        "cudaStream_t", "__nv_bfloat16", "mcGetLastError", "#include <cuda"]


def test_operator_guide_shows_the_shim_flags_the_build_uses():
    """The nvcc-shim command the guide prints carries oprt_build.nvcc_shim_flags, in the guide's variables."""
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

