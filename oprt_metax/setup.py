"""Build of oprt-metax: the kernel sources both vendors build (oprt_core's operators/*/*.cu and its include folder's
oprt_shared/*.cu, with vendor_maca.h: -DOPRT_VENDOR_MACA) compiled into liboprt_metax.so, then wrapped by cffi.

The flavour comes from OPRT_METAX_TOOLCHAIN (see README.md and docs/metax.md):
- ``mxcc``: MetaX's MACA compiler from MACA_PATH (default /opt/maca), ``-x maca``, linked to mcruntime;
- ``nvcc-shim``: the same MetaX build compiled by nvcc as CUDA (``-x cu``) with oprt_shared/maca_cuda_shim.h
  force-included, which maps the MACA names to CUDA ones: runs on NVIDIA GPUs, reported as "nvcc-shim";
- ``auto`` (default): mxcc when found, otherwise one message naming both options.

``python setup.py plan`` (or OPRT_METAX_DRY_RUN=1 during a build, which then stops) prints the exact
command lines without running them. The shared machinery is oprt-core's build module (oprt_core/build.py,
load_oprt_build below).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from setuptools import setup

HERE = Path(__file__).resolve().parent
DIST = "oprt-metax"


def load_oprt_build() -> ModuleType:
    """oprt-core's build helpers, ``oprt_core.build``: imported where oprt-core is importable (a build without
    isolation, an editable checkout); otherwise (pip's isolated build, an sdist) that same file loaded from beside
    OPRT_INCLUDE_DIR, the sdist's vendored copy (_oprt_core/) or the repository checkout (docs/building.md, "Where a
    build gets oprt.h")."""
    try:
        import oprt_core.build

        return oprt_core.build
    except ImportError:
        pass
    env = os.environ.get("OPRT_INCLUDE_DIR")
    places = [Path(env).parent] if env else []
    places += [HERE / "_oprt_core", HERE.parent / "oprt_core" / "src" / "oprt_core"]
    for folder in places:
        if (folder / "build.py").is_file():
            spec = importlib.util.spec_from_file_location("oprt_core_build", folder / "build.py")
            module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # for its dataclasses
            spec.loader.exec_module(module)
            return module
    sys.exit(f"error: {DIST} build: cannot find oprt-core's build.py (oprt_core.build, OPRT_INCLUDE_DIR/../build.py, "
             "_oprt_core/, the repository checkout); set OPRT_INCLUDE_DIR to oprt_core/src/oprt_core/include")


oprt_build = load_oprt_build()
INCLUDE_DIR = oprt_build.find_include_dir(HERE, DIST)
BuildError = oprt_build.BuildError

LIB_NAME = "oprt_metax"
LOG_NAME = "build-metax.log"
VENDOR_DEFINE = oprt_build.MACA_DEFINE  # vendor.h: the MACA side
TOOLCHAINS = ("auto", "mxcc", "nvcc-shim")
MXCC_FLAGS = ["-x", "maca", "-O3", "-std=c++17", "-fPIC"]
MXCC_ARCHS = "mxcc default target"


def maca_path() -> Path:
    return Path(os.environ.get("MACA_PATH") or "/opt/maca")


def mxcc_candidates() -> list[tuple[str, Path]]:
    """Where mxcc is looked for: $MXCC, $MACA_PATH/mxgpu_llvm/bin, $MACA_PATH/bin, PATH."""
    out = []
    if os.environ.get("MXCC"):
        out.append(("MXCC", Path(os.environ["MXCC"])))
    maca = maca_path()
    out.append(("MACA_PATH/mxgpu_llvm/bin", maca / "mxgpu_llvm" / "bin" / "mxcc"))
    out.append(("MACA_PATH/bin", maca / "bin" / "mxcc"))
    on_path = shutil.which("mxcc")
    if on_path:
        out.append(("PATH", Path(on_path)))
    return out


def find_mxcc() -> str | None:
    for _label, cand in mxcc_candidates():
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return None


def _looked() -> str:
    places = [f"{label}: {path}" for label, path in mxcc_candidates()]
    if not shutil.which("mxcc"):
        places.append("PATH")
    return "; ".join(places)


def toolchain() -> str:
    """The flavour to build: OPRT_METAX_TOOLCHAIN resolved ('auto' -> 'mxcc' when found)."""
    value = (os.environ.get("OPRT_METAX_TOOLCHAIN") or "auto").strip().lower()
    if value not in TOOLCHAINS:
        raise BuildError(f"OPRT_METAX_TOOLCHAIN={value!r} is not one of {', '.join(TOOLCHAINS)}")
    if value != "auto":
        return value
    if find_mxcc():
        return "mxcc"
    raise BuildError(
        "no MACA toolchain: mxcc was not found (looked in " + _looked() + "). On a MetaX host install the MACA "
        "SDK and set MACA_PATH (default /opt/maca) or OPRT_METAX_TOOLCHAIN=mxcc; to build these MACA sources "
        "with nvcc for NVIDIA GPUs instead (reported as flavour 'nvcc-shim', never as MetaX figures) set "
        "OPRT_METAX_TOOLCHAIN=nvcc-shim."
    )


def mxcc_version(mxcc: str) -> str:
    try:
        out = subprocess.run([mxcc, "--version"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return "unknown"
    match = re.search(r"(\d+\.\d+(?:\.\d+)*)", out)
    return match.group(1) if match else "unknown"


def _sources(include_dir: Path) -> list[Path]:
    return oprt_build.kernel_sources(include_dir)


def mxcc_plan(include_dir: Path, temp_dir: Path, out_dir: Path, *, dry_run: bool = False) -> oprt_build.Plan:
    """mxcc -x maca for every kernel source, one link to mcruntime with an rpath to $MACA_PATH/lib."""
    maca = maca_path()
    mxcc = find_mxcc()
    if mxcc is None:
        if not dry_run:
            raise BuildError("OPRT_METAX_TOOLCHAIN=mxcc but mxcc was not found (looked in " + _looked()
                             + "); set MACA_PATH or MXCC, or use OPRT_METAX_TOOLCHAIN=nvcc-shim on NVIDIA hosts")
        mxcc = str(maca / "mxgpu_llvm" / "bin" / "mxcc")
    version = mxcc_version(mxcc)
    sources = _sources(include_dir)
    shared = include_dir / oprt_build.SHARED_DIR
    defines = [VENDOR_DEFINE, f'-DOPRT_TOOLCHAIN="mxcc {version}"', f'-DOPRT_ARCHS="{MXCC_ARCHS}"']
    common = [mxcc, *MXCC_FLAGS, f"--maca-path={maca}", f"-I{maca / 'include'}", f"-I{include_dir}", f"-I{shared}",
              *defines, *shlex.split(os.environ.get("OPRT_MXCC_FLAGS", ""))]
    compiles = [oprt_build.Compile(src, temp_dir / (src.stem + ".o"),
                                   [*common, "-c", str(src), "-o", str(temp_dir / (src.stem + ".o"))])
                for src in sources]
    lib = out_dir / f"lib{LIB_NAME}.so"
    link = [mxcc, "-shared", "-fPIC", f"--maca-path={maca}", *(str(c.obj) for c in compiles), "-o", str(lib),
            f"-L{maca / 'lib'}", "-lmcruntime", f"-Wl,-rpath,{maca / 'lib'}", f"-Wl,-soname,lib{LIB_NAME}.so"]
    jobs = oprt_build.build_jobs(len(sources))
    return oprt_build.Plan(
        title=f"oprt-metax build: flavour mxcc, mxcc {version} ({mxcc}), MACA_PATH {maca}, {jobs} jobs",
        compiles=compiles, link=link, library=lib, jobs=jobs, tool="mxcc", deps=_deps(include_dir))


def shim_plan(include_dir: Path, temp_dir: Path, out_dir: Path, **_: object) -> oprt_build.Plan:
    """nvcc -x cu -include maca_cuda_shim.h for every kernel source, flags and architectures as oprt_nvidia's."""
    nvcc = oprt_build.find_nvcc()
    version = oprt_build.nvcc_version(nvcc)
    archs, described = oprt_build.gencode_flags(oprt_build.cuda_archs())
    sources = _sources(include_dir)
    defines = [f'-DOPRT_TOOLCHAIN="nvcc {version}"', f'-DOPRT_ARCHS="{described}"']
    # -x cu, the shim force-included, -DOPRT_VENDOR_MACA and the include folders: oprt_build's, which tests reuse
    common = [nvcc, *oprt_build.NVCC_FLAGS, *archs, *oprt_build.nvcc_shim_flags(include_dir), *defines,
              *shlex.split(os.environ.get("OPRT_NVCC_FLAGS", ""))]
    compiles = [oprt_build.Compile(src, temp_dir / (src.stem + ".o"),
                                   [*common, "-c", str(src), "-o", str(temp_dir / (src.stem + ".o"))])
                for src in sources]
    lib = out_dir / f"lib{LIB_NAME}.so"
    link = [nvcc, "-shared", "-cudart", "static", "-Xcompiler", "-fPIC", *archs, *(str(c.obj) for c in compiles),
            "-o", str(lib), "-Xlinker", f"-soname,lib{LIB_NAME}.so"]
    jobs = oprt_build.build_jobs(len(sources))
    return oprt_build.Plan(
        title=f"oprt-metax build: flavour nvcc-shim, nvcc {version} ({nvcc}), architectures {described}, "
              f"{jobs} jobs", compiles=compiles, link=link, library=lib, jobs=jobs, tool="nvcc",
        deps=_deps(include_dir))


def _deps(include_dir: Path) -> list[Path]:
    return oprt_build.kernel_headers(include_dir)


def make_plan(include_dir: Path, temp_dir: Path, out_dir: Path, *, dry_run: bool = False) -> oprt_build.Plan:
    dry_run = dry_run or os.environ.get("OPRT_METAX_DRY_RUN", "") not in ("", "0")
    flavour = toolchain()
    plan = (mxcc_plan if flavour == "mxcc" else shim_plan)(include_dir, temp_dir, out_dir, dry_run=dry_run)
    if dry_run and sys.argv[1:2] != ["plan"]:
        print(plan.describe(), flush=True)
        raise BuildError("OPRT_METAX_DRY_RUN is set: the plan above was printed and nothing was built")
    return plan


BUILD = oprt_build.NativeBuild(
    dist=DIST, lib_name=LIB_NAME, ext_name="oprt_metax._oprt_metax", log_name=LOG_NAME,
    abi_macro="OPRT_MX_BUILT_ABI", include_dir=INCLUDE_DIR, make_plan=make_plan,
)

if __name__ == "__main__" and sys.argv[1:2] == ["plan"]:
    # python setup.py plan [TEMP_DIR [OUT_DIR]]: the commands a build would run, run nothing
    temp = Path(sys.argv[2]) if len(sys.argv) > 2 else HERE / "build" / "native"
    out = Path(sys.argv[3]) if len(sys.argv) > 3 else HERE / "build" / "lib" / "oprt_metax"
    print(make_plan(INCLUDE_DIR, temp.resolve(), out.resolve(), dry_run=True).describe())
    sys.exit(0)

setup(**oprt_build.setup_kwargs(BUILD))
