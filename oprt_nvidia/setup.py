"""Build of oprt-nvidia: nvcc compiles the shared kernel sources (oprt_kernels/*.cu of oprt_core's include folder,
with vendor_cuda.h) into liboprt_nvidia.so, then cffi wraps it.

Steps of the custom ``build_ext`` (see README.md for the environment variables); the shared machinery
(parallel compiles, the log, the cffi extension, the sdist) is oprt_build.py from oprt_core's include folder:
1. find the oprt include folder (OPRT_INCLUDE_DIR, the copy vendored into the sdist, the repository checkout);
2. find nvcc as cupy does (NVCC, CUDA_HOME/CUDA_PATH, PATH, /usr/local/cuda);
3. compile every kernel source in parallel (-Xptxas -v), link liboprt_nvidia.so with the CUDA runtime static,
   keep the whole nvcc output in build-ptxas.log (printed, and shipped inside the package);
4. build the cffi API-mode extension ``oprt_nvidia._oprt_nvidia`` against it with rpath $ORIGIN.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
DIST = "oprt-nvidia"

# ---- the include-folder search: literally the same in every backend's setup.py. It cannot be shared, since it is
# how the shared code (oprt_build.py) is found; the order and the reasons are in docs/building.md ("Where a build
# gets oprt.h"). ------------------------------------------------------------------------------------------------
NEEDED = ("oprt.h", "oprt_validate.h", "oprt_layout.h", "oprt_build.py")


def find_include_dir() -> Path:
    """The folder holding every file of NEEDED, searched in the documented order."""
    looked: list[str] = []
    env = os.environ.get("OPRT_INCLUDE_DIR")
    candidates = [("OPRT_INCLUDE_DIR", Path(env))] if env else []
    if not env:
        looked.append("OPRT_INCLUDE_DIR (unset)")
    candidates.append(("copy vendored into the sdist", HERE / "_oprt_include"))
    candidates.append(("repository checkout", HERE.parent / "oprt_core" / "src" / "oprt_core" / "include"))
    for label, path in candidates:
        if all((path / f).is_file() for f in NEEDED):
            return path.resolve()
        looked.append(f"{label}: {path}")
    raise SystemExit(
        f"error: {DIST} build: cannot find the oprt include folder (" + ", ".join(NEEDED) + "); looked in: "
        + "; ".join(looked)
        + f". Set OPRT_INCLUDE_DIR to oprt_core/src/oprt_core/include, or build from an sdist of {DIST}."
    )


INCLUDE_DIR = find_include_dir()
sys.path.insert(0, str(INCLUDE_DIR))
sys.dont_write_bytecode = True  # no __pycache__ in oprt_core's include folder
import oprt_build  # noqa: E402

LIB_NAME = "oprt_nvidia"


def make_plan(include_dir: Path, temp_dir: Path, out_dir: Path) -> oprt_build.Plan:
    """nvcc commands: every kernel source compiled with NVCC_FLAGS and the gencode flags, one link, runtime static."""
    nvcc = oprt_build.find_nvcc()
    version = oprt_build.nvcc_version(nvcc)
    archs, described = oprt_build.gencode_flags(oprt_build.cuda_archs())
    sources = oprt_build.kernel_sources(include_dir)
    kernels = include_dir / oprt_build.KERNELS_DIR
    defines = [f'-DOPRT_TOOLCHAIN="nvcc {version}"', f'-DOPRT_ARCHS="{described}"']
    common = [nvcc, *oprt_build.NVCC_FLAGS, *archs, *defines, f"-I{include_dir}", f"-I{kernels}"]
    extra = shlex.split(os.environ.get("OPRT_NVCC_FLAGS", ""))
    jobs = oprt_build.build_jobs(len(sources))
    compiles = []
    for src in sources:
        obj = temp_dir / (src.stem + ".o")
        compiles.append(oprt_build.Compile(src, obj, [*common, *extra, "-c", str(src), "-o", str(obj)]))
    lib = out_dir / f"lib{LIB_NAME}.so"
    link = [nvcc, "-shared", "-cudart", "static", "-Xcompiler", "-fPIC", *archs, *(str(c.obj) for c in compiles),
            "-o", str(lib), "-Xlinker", f"-soname,lib{LIB_NAME}.so"]
    return oprt_build.Plan(
        title=f"oprt-nvidia build: nvcc {version} ({nvcc}), architectures {described}, {jobs} jobs",
        compiles=compiles, link=link, library=lib, jobs=jobs, tool="nvcc",
        deps=oprt_build.kernel_headers(include_dir),
    )


def extra_cdef() -> str:
    """The library's functions outside oprt.h, for the cffi extension (oprt_nvidia.last_launch() calls one): the
    declarations between oprt_kernels/extensions.cuh's OPRT_NV_CDEF markers, the header runtime.cu's definitions
    compile against."""
    header = INCLUDE_DIR / oprt_build.KERNELS_DIR / "extensions.cuh"
    text = header.read_text()
    begin, end = "// OPRT_NV_CDEF_BEGIN", "// OPRT_NV_CDEF_END"
    if begin not in text or end not in text:
        raise SystemExit(f"error: {DIST} build: {header} lacks its {begin} / {end} markers")
    return "\n" + text.split(begin, 1)[1].split(end, 1)[0].strip() + "\n"


BUILD = oprt_build.NativeBuild(
    dist=DIST, lib_name=LIB_NAME, ext_name="oprt_nvidia._oprt_nvidia", log_name="build-ptxas.log",
    abi_macro="OPRT_NV_BUILT_ABI", include_dir=INCLUDE_DIR, make_plan=make_plan, temp_subdir="cuda",
    extra_cdef=extra_cdef(),
)

setup(**oprt_build.setup_kwargs(BUILD))
