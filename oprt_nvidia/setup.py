"""Build of oprt-nvidia: nvcc compiles the kernel sources both vendors build (oprt_core's operators/*/*.cu and its
include folder's oprt_shared/*.cu, with vendor_cuda.h) into liboprt_nvidia.so, then cffi wraps it.

Steps of the custom ``build_ext`` (see README.md for the environment variables); the shared machinery
(parallel compiles, the log, the cffi extension, the sdist) is oprt-core's build module (oprt_core/build.py,
load_oprt_build below):
1. find the oprt include folder (OPRT_INCLUDE_DIR, the copy vendored into the sdist, the repository checkout);
2. find nvcc as cupy does (NVCC, CUDA_HOME/CUDA_PATH, PATH, /usr/local/cuda);
3. where the CUTLASS headers are found (OPRT_ENABLE_CUTE, OPRT_CUTLASS_DIR, the nvidia-cutlass wheel, CUTLASS_PATH)
   and OPRT_CUDA_ARCHS has 90 or 90a, add the CUTLASS matmul sources (operators/matmul/sm90/*.cu, sm_90a only) and
   define OPRT_HAS_CUTE for every source;
   compile every kernel source in parallel (-Xptxas -v), link liboprt_nvidia.so with the CUDA runtime static,
   keep the whole nvcc output in build-ptxas.log (printed, and shipped inside the package);
4. build the cffi API-mode extension ``oprt_nvidia._oprt_nvidia`` against it with rpath $ORIGIN.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from pathlib import Path
from types import ModuleType

from setuptools import setup

HERE = Path(__file__).resolve().parent
DIST = "oprt-nvidia"


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

LIB_NAME = "oprt_nvidia"


def make_plan(include_dir: Path, temp_dir: Path, out_dir: Path) -> oprt_build.Plan:
    """nvcc commands: every kernel source compiled with NVCC_FLAGS and the gencode flags (the CUTLASS sources, where
    built, for sm_90a with the CUTLASS include folder), one link, runtime static."""
    nvcc = oprt_build.find_nvcc()
    version = oprt_build.nvcc_version(nvcc)
    arch_list = oprt_build.cuda_archs()
    cute = oprt_build.cute_build(arch_list)
    archs, described = oprt_build.gencode_flags(arch_list)
    sources = oprt_build.kernel_sources(include_dir)
    cute_sources = oprt_build.cute_sources(include_dir) if cute.enabled else []
    shared = include_dir / oprt_build.SHARED_DIR
    defines = [f'-DOPRT_TOOLCHAIN="nvcc {version}"', f'-DOPRT_ARCHS="{described}"']
    if cute.enabled:
        defines += ["-DOPRT_HAS_CUTE=1", f'-DOPRT_CUTE="CUTLASS {cute.version}"']
    base = [nvcc, *oprt_build.NVCC_FLAGS, *defines, f"-I{include_dir}", f"-I{shared}"]
    extra = shlex.split(os.environ.get("OPRT_NVCC_FLAGS", ""))
    jobs = oprt_build.build_jobs(len(sources) + len(cute_sources))
    compiles = []
    for src in sources:
        obj = temp_dir / (src.stem + ".o")
        compiles.append(oprt_build.Compile(src, obj, [*base, *archs, *extra, "-c", str(src), "-o", str(obj)]))
    for src in cute_sources:
        obj = temp_dir / (src.stem + ".o")
        cmd = [*base, *oprt_build.CUTE_NVCC_FLAGS, f"-I{cute.include}", *extra, "-c", str(src), "-o", str(obj)]
        compiles.append(oprt_build.Compile(src, obj, cmd))
    lib = out_dir / f"lib{LIB_NAME}.so"
    link = [nvcc, "-shared", "-cudart", "static", "-Xcompiler", "-fPIC", *archs, *(str(c.obj) for c in compiles),
            "-o", str(lib), "-Xlinker", f"-soname,lib{LIB_NAME}.so"]
    return oprt_build.Plan(
        title=f"oprt-nvidia build: nvcc {version} ({nvcc}), architectures {described}, {cute.summary}, {jobs} jobs",
        compiles=compiles, link=link, library=lib, jobs=jobs, tool="nvcc",
        deps=oprt_build.kernel_headers(include_dir) + (oprt_build.cute_headers(include_dir) if cute.enabled else []),
    )


def extra_cdef() -> str:
    """The library's functions outside oprt.h, for the cffi extension (oprt_nvidia.last_launch() calls one): the
    declarations between oprt_shared/extensions.cuh's OPRT_NV_CDEF markers, the header runtime.cu's definitions
    compile against."""
    header = INCLUDE_DIR / oprt_build.SHARED_DIR / "extensions.cuh"
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
