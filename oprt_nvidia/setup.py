"""Build of oprt-nvidia: nvcc compiles csrc/*.cu into liboprt_nvidia.so, then cffi wraps it.

Steps of the custom ``build_ext`` (see README.md for the environment variables):
1. find the oprt headers (OPRT_INCLUDE_DIR, the copy vendored into the sdist, the repository checkout);
2. find nvcc as cupy does (NVCC, CUDA_HOME/CUDA_PATH, PATH, /usr/local/cuda);
3. compile every .cu file in parallel (-Xptxas -v), link liboprt_nvidia.so with the CUDA runtime static,
   keep the whole nvcc output in build-ptxas.log (printed, and shipped inside the package);
4. build the cffi API-mode extension ``oprt_nvidia._oprt_nvidia`` against it with rpath $ORIGIN.
"""

from __future__ import annotations

import concurrent.futures
import os
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
CSRC = HERE / "csrc"
VENDORED_INCLUDE = HERE / "_oprt_include"
REPO_INCLUDE = HERE.parent / "oprt_core" / "src" / "oprt_core" / "include"
HEADERS = ("oprt.h", "oprt_validate.h")
LIB_NAME = "oprt_nvidia"
EXT_NAME = "oprt_nvidia._oprt_nvidia"
LOG_NAME = "build-ptxas.log"
DEFAULT_ARCHS = "90"
NVCC_FLAGS = ["-O3", "-std=c++17", "-Xcompiler", "-fPIC", "-cudart", "static", "-lineinfo", "-Xptxas", "-v"]


class BuildError(SystemExit):
    """A build failure reported as one clear message (SystemExit: no traceback in pip's log)."""

    def __init__(self, message: str):
        super().__init__(f"error: oprt-nvidia build: {message}")


# ---- headers ---------------------------------------------------------------------------------

def find_include_dir() -> Path:
    """The folder holding oprt.h and oprt_validate.h, searched in the documented order."""
    looked: list[str] = []
    env = os.environ.get("OPRT_INCLUDE_DIR")
    candidates = []
    if env:
        candidates.append(("OPRT_INCLUDE_DIR", Path(env)))
    else:
        looked.append("OPRT_INCLUDE_DIR (unset)")
    candidates.append(("copy vendored into the sdist", VENDORED_INCLUDE))
    candidates.append(("repository checkout", REPO_INCLUDE))
    for label, path in candidates:
        if all((path / h).is_file() for h in HEADERS):
            return path.resolve()
        looked.append(f"{label}: {path}")
    raise BuildError(
        "cannot find the oprt headers (" + ", ".join(HEADERS) + "); looked in: " + "; ".join(looked)
        + ". Set OPRT_INCLUDE_DIR to oprt_core/src/oprt_core/include, or build from an sdist of oprt-nvidia."
    )


def read_cdef(include_dir: Path) -> str:
    """The declarations between OPRT_CDEF_BEGIN/END of oprt.h (oprt_core may be absent at build time)."""
    text = (include_dir / "oprt.h").read_text(encoding="utf-8")
    match = re.search(r"/\* OPRT_CDEF_BEGIN \*/(.*?)/\* OPRT_CDEF_END \*/", text, re.S)
    if match is None:
        raise BuildError(f"{include_dir / 'oprt.h'} lacks its OPRT_CDEF_BEGIN/END markers")
    return match.group(1)


def read_abi_version(include_dir: Path) -> int:
    match = re.search(r"#define OPRT_ABI_VERSION (\d+)", (include_dir / "oprt.h").read_text(encoding="utf-8"))
    if match is None:
        raise BuildError("oprt.h does not define OPRT_ABI_VERSION")
    return int(match.group(1))


# ---- nvcc ------------------------------------------------------------------------------------

def find_nvcc() -> str:
    """nvcc the way cupy finds it: $NVCC, $CUDA_HOME/bin, $CUDA_PATH/bin, PATH, /usr/local/cuda/bin."""
    looked: list[str] = []
    env = os.environ.get("NVCC")
    if env:
        exe = shlex.split(env)[0]
        found = shutil.which(exe)
        if found:
            return found
        looked.append(f"NVCC={env} (not an executable)")
    else:
        looked.append("NVCC (unset)")
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            cand = Path(root) / "bin" / "nvcc"
            if cand.is_file() and os.access(cand, os.X_OK):
                return str(cand)
            looked.append(f"{var}/bin: {cand}")
        else:
            looked.append(f"{var} (unset)")
    found = shutil.which("nvcc")
    if found:
        return found
    looked.append("PATH")
    default = Path("/usr/local/cuda/bin/nvcc")
    if default.is_file() and os.access(default, os.X_OK):
        return str(default)
    looked.append(str(default))
    raise BuildError(
        "nvcc (the CUDA compiler) was not found; looked in: " + "; ".join(looked)
        + ". Install the CUDA toolkit, or point the build at it with NVCC=/path/to/nvcc or CUDA_HOME=/path/to/cuda."
    )


def nvcc_version(nvcc: str) -> str:
    """'13.0' from `nvcc --version` ('Cuda compilation tools, release 13.0, V13.0.88')."""
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=False).stdout
    match = re.search(r"release (\d+\.\d+)", out)
    return match.group(1) if match else "unknown"


def cuda_archs() -> list[str]:
    """Architectures from OPRT_CUDA_ARCHS ('80;90', '90a', commas or spaces too), default sm_90."""
    text = os.environ.get("OPRT_CUDA_ARCHS", "").strip() or DEFAULT_ARCHS
    archs = [a.strip().lower().removeprefix("sm_").removeprefix("compute_") for a in re.split(r"[;, ]+", text)]
    archs = [a for a in archs if a]
    for a in archs:
        if not re.fullmatch(r"\d{2,3}[af]?", a):
            raise BuildError(f"OPRT_CUDA_ARCHS entry {a!r} is not an architecture such as 80, 90 or 90a")
    return sorted(set(archs), key=lambda a: (int(re.sub(r"\D", "", a)), a))


def gencode_flags(archs: list[str]) -> tuple[list[str], str]:
    """Native code for each architecture plus PTX of the newest (so newer GPUs JIT it)."""
    flags: list[str] = []
    for a in archs:
        flags += ["-gencode", f"arch=compute_{a},code=sm_{a}"]
    flags += ["-gencode", f"arch=compute_{archs[-1]},code=compute_{archs[-1]}"]
    described = " ".join([f"sm_{a}" for a in archs] + [f"compute_{archs[-1]}"])
    return flags, described


def run_nvcc(cmd: list[str]) -> tuple[list[str], int, str, float]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return cmd, proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - start


def build_cuda_library(out_dir: Path, temp_dir: Path, include_dir: Path) -> Path:
    """Compile csrc/*.cu in parallel and link liboprt_nvidia.so into out_dir; returns its path."""
    nvcc = find_nvcc()
    version = nvcc_version(nvcc)
    archs, described = gencode_flags(cuda_archs())
    sources = sorted(CSRC.glob("*.cu"))
    if not sources:
        raise BuildError(f"no CUDA sources in {CSRC}")
    temp_dir.mkdir(parents=True, exist_ok=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    defines = [f'-DOPRT_NV_TOOLCHAIN="nvcc {version}"', f'-DOPRT_NV_ARCHS="{described}"']
    common = [nvcc, *NVCC_FLAGS, *archs, *defines, f"-I{include_dir}", f"-I{CSRC}"]
    extra = shlex.split(os.environ.get("OPRT_NVCC_FLAGS", ""))
    jobs = int(os.environ.get("OPRT_BUILD_JOBS", "0")) or min(len(sources), os.cpu_count() or 1)
    log: list[str] = [f"# oprt-nvidia build: nvcc {version} ({nvcc}), architectures {described}, {jobs} jobs"]
    objects = [temp_dir / (src.stem + ".o") for src in sources]
    cmds = [[*common, *extra, "-c", str(src), "-o", str(obj)] for src, obj in zip(sources, objects)]
    # incremental: an object newer than its source, every .cuh, the headers and the same command is kept
    deps = [*CSRC.glob("*.cuh"), *(include_dir / h for h in HEADERS)]
    start = time.perf_counter()
    failed = []
    todo = []
    for cmd, src, obj in zip(cmds, sources, objects):
        section = temp_dir / (src.stem + ".log")
        stamp = temp_dir / (src.stem + ".cmd")
        fresh = (obj.is_file() and section.is_file() and stamp.is_file()
                 and stamp.read_text(encoding="utf-8") == shlex.join(cmd)
                 and all(obj.stat().st_mtime > d.stat().st_mtime for d in [src, *deps]))
        if not fresh:
            todo.append(cmd)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for cmd, rc, output, secs in pool.map(run_nvcc, todo):
            src = Path(cmd[cmd.index("-c") + 1])
            text = f"\n## {src.name}: {secs:.1f} s, exit {rc}\n$ {shlex.join(cmd)}\n{output.rstrip()}"
            (temp_dir / (src.stem + ".log")).write_text(text, encoding="utf-8")
            if rc != 0:
                failed.append(src.name)
                (temp_dir / (src.stem + ".cmd")).unlink(missing_ok=True)
            else:
                (temp_dir / (src.stem + ".cmd")).write_text(shlex.join(cmd), encoding="utf-8")
    for src in sources:
        section = temp_dir / (src.stem + ".log")
        if section.is_file():
            log.append(section.read_text(encoding="utf-8"))
    log[0] += f", {len(todo)} of {len(sources)} sources recompiled"
    lib = out_dir / f"lib{LIB_NAME}.so"
    if not failed:
        link = [nvcc, "-shared", "-cudart", "static", "-Xcompiler", "-fPIC", *archs, *map(str, objects),
                "-o", str(lib), "-Xlinker", f"-soname,lib{LIB_NAME}.so"]
        cmd, rc, output, secs = run_nvcc(link)
        log.append(f"\n## link: {secs:.1f} s, exit {rc}\n$ {shlex.join(cmd)}\n{output.rstrip()}")
        if rc != 0:
            failed.append("link")
    log.append(f"\n# total {time.perf_counter() - start:.1f} s")
    text = "\n".join(log) + "\n"
    (temp_dir / LOG_NAME).write_text(text, encoding="utf-8")
    print(text, flush=True)  # keeps the -Xptxas -v report in the CI build log
    if failed:
        raise BuildError(f"nvcc failed on {', '.join(failed)}; the whole output is above and in "
                         f"{temp_dir / LOG_NAME}")
    shutil.copyfile(temp_dir / LOG_NAME, out_dir / LOG_NAME)
    return lib


# ---- setuptools commands ---------------------------------------------------------------------

class BuildExt(build_ext):
    """Builds liboprt_nvidia.so with nvcc, then the cffi extension linked against it."""

    def run(self) -> None:
        include_dir = find_include_dir()
        ext = self.extensions[0]
        ext_path = Path(self.get_ext_fullpath(ext.name)).resolve()
        out_dir = ext_path.parent
        temp = Path(self.build_temp).resolve()
        # out_dir is build_lib's package folder (what the wheel ships), or src/oprt_nvidia when editable
        build_cuda_library(out_dir, temp / "cuda", include_dir)
        ext.sources = [str(self._cffi_source(include_dir, temp))]
        ext.include_dirs = [str(include_dir)]
        ext.library_dirs = [str(out_dir)]
        ext.libraries = [LIB_NAME]
        ext.runtime_library_dirs = []
        ext.extra_link_args = ["-Wl,-rpath,$ORIGIN"]
        ext.define_macros = [("OPRT_NV_BUILT_ABI", str(read_abi_version(include_dir)))]
        super().run()

    @staticmethod
    def _cffi_source(include_dir: Path, temp: Path) -> Path:
        import cffi

        ffi = cffi.FFI()
        ffi.cdef(read_cdef(include_dir))
        ffi.set_source(EXT_NAME, '#include "oprt.h"\n')
        temp.mkdir(parents=True, exist_ok=True)
        target = temp / "_oprt_nvidia.c"
        ffi.emit_c_code(str(target))
        return target


class Sdist(sdist):
    """Vendors oprt.h and oprt_validate.h into the sdist (never into the checkout)."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        include_dir = find_include_dir()
        dest = Path(base_dir) / VENDORED_INCLUDE.name
        dest.mkdir(parents=True, exist_ok=True)
        for h in HEADERS:
            target = dest / h
            if target.exists():
                target.unlink()  # may be a hard link into the source tree
            shutil.copyfile(include_dir / h, target)


setup(
    ext_modules=[Extension(EXT_NAME, sources=[])],
    cmdclass={"build_ext": BuildExt, "sdist": Sdist},
)
