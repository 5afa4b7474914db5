"""oprt_core.build: the shared build machinery of compiled oprt backends (oprt_nvidia, oprt_metax, yours).

``import oprt_core.build`` where oprt-core is installed; a backend's ``setup.py`` imports it so, and where oprt-core
is not importable (pip's build isolation, an sdist) loads this same file from the sdist's vendored copy or the
repository checkout (docs/building.md, "Where a build gets oprt.h"), then asks :func:`find_include_dir` for the
include folder. Pure stdlib + setuptools + cffi, importing nothing of oprt-core (``oprt_core.cabi`` imports it too,
for the same reading of ``oprt.h``).

The sources a build compiles lie beside this file, as in oprt-core's package: ``include/`` (``oprt.h``, the other
HEADERS, and ``oprt_shared/``: the templates and the runtime every kernel source shares) and ``operators/<op>/``
(each op's kernel source ``<op>.cu``, its plan ``plan.h``, and for matmul ``sm90/``, the CUTLASS sources).

What it does, toolchain-independently:
- finds the include folder (:func:`find_include_dir`: ``OPRT_INCLUDE_DIR``, the sdist's copy, the checkout) and the
  kernel sources beside it (:func:`kernel_sources`: every op folder's, found by globbing);
- reads the cffi declarations (``OPRT_CDEF_BEGIN``/``END``) and ``OPRT_ABI_VERSION`` from ``oprt.h``;
- runs a :class:`Plan` (compile commands, one link command) with parallel, incremental compiles and the
  whole compiler output kept in a log that is printed and shipped in the package;
- builds the cffi API-mode extension against the shared library with rpath ``$ORIGIN``, adding a
  pointer entry point ``oprt_ptrs_<op>`` per launch function (:func:`pointer_entry_points`);
- an ``sdist`` command that vendors this module, the include folder and the op folders' C sources into
  ``_oprt_core/`` (:func:`vendor`);
- :class:`BuildError`: a build failure as one clear line (no traceback in pip's log);
- for op packages, an op's kernels as an optional shared library of its own (no cffi extension), which a compiled
  backend loads through ``oprt_core.compiled.c_library``: :class:`OpLibrary`, :func:`op_library_setup_kwargs`,
  :func:`op_runtime_source` and, for nvcc, :func:`nvcc_op_library_plan`.

It also holds the nvcc helpers (found as cupy does, ``OPRT_CUDA_ARCHS``) that both the nvidia build and
the metax nvcc-shim build use, and the CUTLASS header discovery of the nvidia build (:func:`cute_build`,
``OPRT_ENABLE_CUTE``). See docs/building.md.
"""

from __future__ import annotations

import concurrent.futures
import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "HEADERS", "VENDOR_DIR", "SHARED_DIR", "OPERATORS_DIR", "C_SUFFIXES", "operators_dir", "kernel_sources",
    "kernel_headers", "vendor", "BuildError", "Compile", "Plan", "NativeBuild", "find_include_dir",
    "parse_cdef", "parse_abi_version", "read_cdef", "pointer_entry_points",
    "read_abi_version", "run_plan", "setup_kwargs", "find_nvcc", "nvcc_version", "cuda_archs", "gencode_flags",
    "NVCC_FLAGS", "DEFAULT_CUDA_ARCHS", "CuteBuild", "cute_build", "cute_sources", "cute_headers",
    "CUTE_NVCC_FLAGS", "CUTE_DIR", "nvcc_shim_flags", "MACA_SHIM", "MACA_DEFINE",
    "OpLibrary", "op_library_setup_kwargs", "op_runtime_source", "OP_RUNTIME_SOURCE", "nvcc_op_library_plan",
    "OP_LIBRARY_NVCC_LINK_FLAGS", "NOT_BUILT",
]

# what backend sources include (the include folder's own files)
HEADERS = ("oprt.h", "oprt_validate.h", "oprt_layout.h", "oprt_entry.h")
# The templates, headers and runtime every kernel source shares, a folder of the include folder (on the include path
# of every kernel compile).
SHARED_DIR = "oprt_shared"
# The op folders, the include folder's sibling (oprt_core/operators/): each op's kernel source <op>.cu and plan.h.
OPERATORS_DIR = "operators"
C_SUFFIXES = (".cu", ".cuh", ".h")  # the files of an op folder a build reads (and an sdist vendors)
VENDOR_DIR = "_oprt_core"  # an sdist's copy: build.py, include/, operators/ (their C files), as in oprt-core


def operators_dir(include_dir: Path) -> Path:
    """The op folders beside ``include_dir`` (``oprt_core/operators``)."""
    return Path(include_dir).parent / OPERATORS_DIR


def kernel_sources(include_dir: Path) -> list[Path]:
    """The kernel translation units both GPU vendors compile: the shared runtime (``oprt_shared/*.cu``) and every op
    folder's kernel sources (``operators/*/*.cu``), sorted; a new op folder is built with no build file edited.
    BuildError where there are none, or where two share a file name (their objects would)."""
    sources = [*sorted((Path(include_dir) / SHARED_DIR).glob("*.cu")),
               *sorted(operators_dir(include_dir).glob("*/*.cu"))]
    if not sources:
        raise BuildError(f"no kernel sources in {Path(include_dir) / SHARED_DIR} or {operators_dir(include_dir)}")
    _unique_stems(sources)
    return sources


def _unique_stems(sources: list[Path]) -> None:
    seen: dict[str, Path] = {}
    for src in sources:
        if src.stem in seen:
            raise BuildError(f"kernel sources {seen[src.stem]} and {src} share the name {src.stem!r} (one object file "
                             "each: rename one)")
        seen[src.stem] = src


def kernel_headers(include_dir: Path) -> list[Path]:
    """The headers the kernel sources include (the shared ones, the oprt ones, the op folders' plans and headers): a
    newer one recompiles every source."""
    folder, ops = Path(include_dir) / SHARED_DIR, operators_dir(include_dir)
    return [*sorted(folder.glob("*.cuh")), *sorted(folder.glob("*.h")), *(Path(include_dir) / h for h in HEADERS),
            *sorted(ops.glob("*/*.h")), *sorted(ops.glob("*/*.cuh"))]


def vendor(include_dir: Path, dest: Path) -> None:
    """Copy this module, ``include_dir`` (HEADERS and ``oprt_shared/``) and the op folders' C files (C_SUFFIXES, their
    sub-folders too) into ``dest`` (an sdist's ``_oprt_core/``), laid out as in oprt-core: ``build.py``,
    ``include/``, ``operators/``. Whatever ``dest`` held is replaced (it may hold hard links into the source tree)."""
    include_dir, dest = Path(include_dir), Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "include").mkdir(parents=True)
    shutil.copyfile(Path(__file__), dest / "build.py")
    for name in HEADERS:
        shutil.copyfile(include_dir / name, dest / "include" / name)
    shutil.copytree(include_dir / SHARED_DIR, dest / "include" / SHARED_DIR,
                    ignore=shutil.ignore_patterns("__pycache__"))
    ops = operators_dir(include_dir)
    for src in sorted(ops.rglob("*")):
        if src.is_file() and src.suffix in C_SUFFIXES and "__pycache__" not in src.parts:
            target = dest / OPERATORS_DIR / src.relative_to(ops)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)

_DIST = ["oprt"]  # distribution named in error messages; NativeBuild sets it


class BuildError(SystemExit):
    """A build failure reported as one clear message (SystemExit: no traceback in pip's log)."""

    def __init__(self, message: str, dist: str | None = None):
        super().__init__(f"error: {dist or _DIST[0]} build: {message}")


# ---- the include folder ------------------------------------------------------------------------------

def find_include_dir(setup_dir: Path, dist: str) -> Path:
    """The include folder (every file of HEADERS, and the op folders beside it) for the backend whose ``setup.py``
    lies in ``setup_dir``.

    Looked for in this order (docs/building.md, "Where a build gets oprt.h"): ``OPRT_INCLUDE_DIR``; the copy
    vendored into the sdist (``_oprt_core/include``); the repository checkout (``../oprt_core/src/oprt_core/include``).
    None holding every file: a BuildError naming each place looked in.
    """
    setup_dir = Path(setup_dir)
    looked: list[str] = []
    env = os.environ.get("OPRT_INCLUDE_DIR")
    candidates = [("OPRT_INCLUDE_DIR", Path(env))] if env else []
    if not env:
        looked.append("OPRT_INCLUDE_DIR (unset)")
    candidates.append(("copy vendored into the sdist", setup_dir / VENDOR_DIR / "include"))
    candidates.append(("repository checkout", setup_dir.parent / "oprt_core" / "src" / "oprt_core" / "include"))
    for label, path in candidates:
        if all((path / f).is_file() for f in HEADERS) and operators_dir(path).is_dir():
            return path.resolve()
        looked.append(f"{label}: {path}")
    raise BuildError(
        "cannot find the oprt include folder (" + ", ".join(HEADERS) + ", with ../" + OPERATORS_DIR + " beside it); "
        "looked in: " + "; ".join(looked)
        + f". Set OPRT_INCLUDE_DIR to oprt_core/src/oprt_core/include, or build from an sdist of {dist}.", dist)


# ---- oprt.h -----------------------------------------------------------------------------------

_CDEF_RE = re.compile(r"/\* OPRT_CDEF_BEGIN \*/(.*?)/\* OPRT_CDEF_END \*/", re.S)
_ABI_VERSION_RE = re.compile(r"#define OPRT_ABI_VERSION (\d+)")


def parse_cdef(header: str) -> str | None:
    """The declarations between OPRT_CDEF_BEGIN/END of the text of oprt.h; None without the markers."""
    match = _CDEF_RE.search(header)
    return match.group(1) if match else None


def parse_abi_version(header: str) -> int | None:
    """OPRT_ABI_VERSION as the text of oprt.h defines it; None where it does not."""
    match = _ABI_VERSION_RE.search(header)
    return int(match.group(1)) if match else None


def read_cdef(include_dir: Path) -> str:
    """The declarations between OPRT_CDEF_BEGIN/END of oprt.h (oprt_core may be absent at build time)."""
    cdef = parse_cdef((Path(include_dir) / "oprt.h").read_text(encoding="utf-8"))
    if cdef is None:
        raise BuildError(f"{Path(include_dir) / 'oprt.h'} lacks its OPRT_CDEF_BEGIN/END markers")
    return cdef


# A launch function of oprt.h: oprt_status_t oprt_<op>(oprt_<op>_descriptor_t desc, void *workspace,
# size_t workspace_size, <device pointers>, oprt_stream_t stream);
_LAUNCH_RE = re.compile(
    r"oprt_status_t\s+oprt_(\w+)\s*\(\s*(oprt_\1_descriptor_t)\s+desc\s*,\s*void\s*\*\s*workspace\s*,"
    r"\s*size_t\s+workspace_size\s*,(?P<ptrs>[^;]*?),\s*oprt_stream_t\s+stream\s*\)\s*;", re.S)
_PTR_RE = re.compile(r"^\s*(const\s+)?void\s*\*\s*(\w+)\s*$")


def pointer_entry_points(cdef: str) -> tuple[str, str]:
    """(declarations for ``FFI.cdef``, C definitions for ``set_source``) of one ``oprt_ptrs_<op>`` per launch
    function in ``cdef``: the same call with every pointer (workspace, output, inputs) as a ``uintptr_t`` and
    the default stream. The op API's fast path launches on raw integer pointers; through these it skips an
    ``ffi.cast`` per pointer (~0.3 us each on the H200's host CPU). A function whose pointer parameters are
    not all ``void *`` / ``const void *`` gets none (the caller falls back to the cast path)."""
    decls, defs = [], []
    for m in _LAUNCH_RE.finditer(cdef):
        op, desc_t = m.group(1), m.group(2)
        ptrs = []
        for part in m.group("ptrs").split(","):
            pm = _PTR_RE.match(part)
            if pm is None:
                break
            ptrs.append(("const void *" if pm.group(1) else "void *", pm.group(2)))
        else:
            params = ", ".join([f"{desc_t} desc", "uintptr_t workspace", "size_t workspace_size",
                                *(f"uintptr_t {name}" for _, name in ptrs)])
            args = ", ".join(["desc", "(void *)workspace", "workspace_size",
                              *(f"({ctype}){name}" for ctype, name in ptrs), "NULL"])
            decls.append(f"oprt_status_t oprt_ptrs_{op}({params});")
            defs.append(f"static oprt_status_t oprt_ptrs_{op}({params}) {{\n    return oprt_{op}({args});\n}}")
    return "\n".join(decls) + "\n", "\n".join(defs) + "\n"


def read_abi_version(include_dir: Path) -> int:
    """OPRT_ABI_VERSION of oprt.h in ``include_dir``."""
    version = parse_abi_version((Path(include_dir) / "oprt.h").read_text(encoding="utf-8"))
    if version is None:
        raise BuildError("oprt.h does not define OPRT_ABI_VERSION")
    return version


# ---- plans: what a toolchain compiles and links -----------------------------------------------------

@dataclass
class Compile:
    source: Path
    obj: Path
    cmd: list[str]


@dataclass
class Plan:
    """Everything one shared-library build runs; a toolchain's setup.py makes it, :func:`run_plan` runs it.

    :param title: first line of the log, e.g. ``oprt-nvidia build: nvcc 13.0 (/usr/bin/nvcc), ...``
    :param compiles: one command per source, run in parallel
    :param link: the command that links every object into ``library``
    :param library: the shared library the link writes
    :param deps: files every object depends on besides its source (headers): a newer one recompiles all
    :param jobs: parallel compiles
    :param tool: the compiler's name in messages ("nvcc", "mxcc")
    """

    title: str
    compiles: list[Compile]
    link: list[str]
    library: Path
    deps: list[Path] = field(default_factory=list)
    jobs: int = 1
    tool: str = "compiler"

    def commands(self) -> list[list[str]]:
        return [c.cmd for c in self.compiles] + [self.link]

    def describe(self) -> str:
        """The plan as shell lines (a dry run prints this)."""
        lines = [f"# {self.title}"]
        lines += [shlex.join(cmd) for cmd in self.commands()]
        return "\n".join(lines)


def _run(cmd: list[str]) -> tuple[list[str], int, str, float]:
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as exc:  # the compiler vanished or is not executable
        return cmd, 127, f"{cmd[0]}: {exc}", time.perf_counter() - start
    return cmd, proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - start


def run_plan(plan: Plan, temp_dir: Path, out_dir: Path, log_name: str) -> Path:
    """Compile (in parallel, skipping fresh objects), link, and keep the whole compiler output.

    An object is kept when it is newer than its source and every dep and was made by the same command.
    The log (``log_name``) gets one section per source and one for the link; it is printed (so CI's build
    log keeps it), written to ``temp_dir`` and, on success, copied next to the library in ``out_dir``.
    """
    temp_dir.mkdir(parents=True, exist_ok=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    log: list[str] = [f"# {plan.title}"]
    start = time.perf_counter()
    todo = []
    for c in plan.compiles:
        section = temp_dir / (c.source.stem + ".log")
        stamp = temp_dir / (c.source.stem + ".cmd")
        fresh = (c.obj.is_file() and section.is_file() and stamp.is_file()
                 and stamp.read_text(encoding="utf-8") == shlex.join(c.cmd)
                 and all(c.obj.stat().st_mtime > d.stat().st_mtime for d in [c.source, *plan.deps]))
        if not fresh:
            todo.append(c)
    failed = []
    by_cmd = {id(c.cmd): c for c in todo}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(plan.jobs, 1)) as pool:
        for cmd, rc, output, secs in pool.map(_run, [c.cmd for c in todo]):
            src = by_cmd[id(cmd)].source
            text = f"\n## {src.name}: {secs:.1f} s, exit {rc}\n$ {shlex.join(cmd)}\n{output.rstrip()}"
            (temp_dir / (src.stem + ".log")).write_text(text, encoding="utf-8")
            if rc != 0:
                failed.append(src.name)
                (temp_dir / (src.stem + ".cmd")).unlink(missing_ok=True)
            else:
                (temp_dir / (src.stem + ".cmd")).write_text(shlex.join(cmd), encoding="utf-8")
    for c in plan.compiles:
        section = temp_dir / (c.source.stem + ".log")
        if section.is_file():
            log.append(section.read_text(encoding="utf-8"))
    log[0] += f", {len(todo)} of {len(plan.compiles)} sources recompiled"
    if not failed:
        cmd, rc, output, secs = _run(plan.link)
        log.append(f"\n## link: {secs:.1f} s, exit {rc}\n$ {shlex.join(cmd)}\n{output.rstrip()}")
        if rc != 0:
            failed.append("link")
    log.append(f"\n# total {time.perf_counter() - start:.1f} s")
    text = "\n".join(log) + "\n"
    (temp_dir / log_name).write_text(text, encoding="utf-8")
    print(text, flush=True)
    if failed:
        raise BuildError(f"{plan.tool} failed on {', '.join(failed)}; the whole output is above and in "
                         f"{temp_dir / log_name}")
    shutil.copyfile(temp_dir / log_name, out_dir / log_name)
    return plan.library


# ---- setuptools glue -----------------------------------------------------------------------------

@dataclass
class NativeBuild:
    """One compiled backend's build: its names and how it makes a :class:`Plan`.

    :param dist: distribution name, for messages ("oprt-nvidia")
    :param lib_name: the shared library is ``lib<lib_name>.so``
    :param ext_name: the cffi extension module ("oprt_nvidia._oprt_nvidia")
    :param log_name: the compiler log shipped in the package ("build-ptxas.log")
    :param abi_macro: macro the extension is compiled with, holding oprt.h's ABI version
    :param include_dir: the folder with oprt.h and oprt_validate.h (:func:`find_include_dir`)
    :param make_plan: ``(include_dir, temp_dir, out_dir) -> Plan``
    :param temp_subdir: folder under setuptools' build_temp for objects and per-source logs
    :param extra_cdef: C declarations of the library's own functions outside oprt.h, given to cffi's ``cdef`` and
        compiled into the extension's source after oprt.h (oprt-nvidia: ``oprt_nvidia_last_launch``)
    """

    dist: str
    lib_name: str
    ext_name: str
    log_name: str
    abi_macro: str
    include_dir: Path
    make_plan: Callable[[Path, Path, Path], Plan]
    temp_subdir: str = "native"
    extra_cdef: str = ""

    def __post_init__(self) -> None:
        _DIST[0] = self.dist
        self.include_dir = Path(self.include_dir).resolve()


def _cffi_source(build: NativeBuild, temp: Path) -> Path:
    import cffi

    ffi = cffi.FFI()
    cdef = read_cdef(build.include_dir)
    decls, defs = pointer_entry_points(cdef)
    ffi.cdef(cdef + decls + "\n" + build.extra_cdef)
    ffi.set_source(build.ext_name, '#include <stdint.h>\n#include "oprt.h"\n' + build.extra_cdef + "\n" + defs)
    temp.mkdir(parents=True, exist_ok=True)
    target = temp / (build.ext_name.rsplit(".", 1)[-1] + ".c")
    ffi.emit_c_code(str(target))
    return target


def setup_kwargs(build: NativeBuild) -> dict:
    """``ext_modules`` and ``cmdclass`` (build_ext, sdist) for ``setup(**setup_kwargs(build))``."""
    from setuptools import Extension
    from setuptools.command.build_ext import build_ext
    from setuptools.command.sdist import sdist

    class BuildExt(build_ext):
        """Builds the shared library with the backend's toolchain, then the cffi extension linked to it."""

        def run(self) -> None:
            ext = self.extensions[0]
            out_dir = Path(self.get_ext_fullpath(ext.name)).resolve().parent
            temp = Path(self.build_temp).resolve()
            # out_dir is build_lib's package folder (what the wheel ships), or src/<pkg> when editable
            plan = build.make_plan(build.include_dir, temp / build.temp_subdir, out_dir)
            run_plan(plan, temp / build.temp_subdir, out_dir, build.log_name)
            ext.sources = [str(_cffi_source(build, temp))]
            ext.include_dirs = [str(build.include_dir)]
            ext.library_dirs = [str(out_dir)]
            ext.libraries = [build.lib_name]
            ext.runtime_library_dirs = []
            ext.extra_link_args = ["-Wl,-rpath,$ORIGIN"]
            ext.define_macros = [(build.abi_macro, str(read_abi_version(build.include_dir)))]
            super().run()

    class Sdist(sdist):
        """Vendors this module, the oprt headers and the kernel sources into the sdist (never into the checkout)."""

        def make_release_tree(self, base_dir: str, files: list[str]) -> None:
            super().make_release_tree(base_dir, files)
            vendor(build.include_dir, Path(base_dir) / VENDOR_DIR)

    return {"ext_modules": [Extension(build.ext_name, sources=[])], "cmdclass": {"build_ext": BuildExt, "sdist": Sdist}}


# ---- op packages: an op's kernels as a shared library of its own -------------------------------------------------

# The one translation unit an op library adds to its kernel sources: oprt_validate.h's runtime (the thread-local error
# text behind oprt_set_error, oprt_last_error_message, oprt_status_string, oprt_library_abi_version), which the entry
# points of OPRT_DEFINE_OP call and CompiledBackend reads. A backend library has it in its own runtime source.
OP_RUNTIME_SOURCE = ("/* Written by oprt_core.build.op_runtime_source: the op library's error text and ABI\n"
                     " * version. */\n"
                     '#define OPRT_IMPLEMENTATION\n#include "oprt_validate.h"\n')
NOT_BUILT = "not built: "  # the first words of an op library's log where the library was left out


def op_runtime_source(temp_dir: Path, suffix: str = ".cu") -> Path:
    """Write :data:`OP_RUNTIME_SOURCE` as ``temp_dir/oprt_op_runtime<suffix>`` (left as is when unchanged, so its
    object stays fresh) and return the path."""
    path = Path(temp_dir) / f"oprt_op_runtime{suffix}"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text(encoding="utf-8") != OP_RUNTIME_SOURCE:
        path.write_text(OP_RUNTIME_SOURCE, encoding="utf-8")
    return path


@dataclass
class OpLibrary:
    """One optional shared library of an op package's kernels, for one backend (``liboprt_gelu_nvidia.so``).

    :param backend: the backend it is for ("nvidia"), in messages
    :param package: the package folder it is written into ("oprt_gelu"), beside the plugin that names it
    :param lib_name: the library is ``lib<lib_name>.so``
    :param log_name: the build log written beside it ("build-nvidia.log"): the compiler output, or, where the library
        was left out, one line ``not built: <why>`` (:data:`NOT_BUILT`) for the plugin to quote
    :param make_plan: ``(temp_dir, out_dir) -> Plan``; a :class:`BuildError` it raises (no compiler, no include
        folder) leaves the library out in mode ``auto``; a failing compile always stops the build
    :param mode_env: the variable choosing the mode: ``auto`` (default: build where the toolchain is found), ``on``
        (a missing toolchain stops the build) or ``off`` (never build)
    """

    backend: str
    package: str
    lib_name: str
    log_name: str
    make_plan: Callable[[Path, Path], Plan]
    mode_env: str


def _op_library_mode(lib: OpLibrary, dist: str) -> str:
    raw = os.environ.get(lib.mode_env, "").strip().lower() or "auto"
    if raw not in ("auto", "on", "off"):
        raise BuildError(f"{lib.mode_env}={os.environ.get(lib.mode_env)!r} is not one of auto, on, off", dist)
    return raw


def op_library_setup_kwargs(dist: str, libraries: list[OpLibrary], skipped: str = "") -> dict:
    """``ext_modules`` and ``cmdclass`` for ``setup(**op_library_setup_kwargs(...))`` of an op package: ``build_ext``
    builds each library (:func:`run_plan`) into its package folder (build_lib's, or ``src/<package>`` when editable)
    with no extension module, or leaves it out with the reason in its log. ``skipped``: why none can be built (the
    oprt include folder was not found), written into every log unless a mode is ``on`` (then the build stops)."""
    from setuptools import Extension
    from setuptools.command.build_ext import build_ext

    _DIST[0] = dist

    class BuildOpLibraries(build_ext):
        """Builds the op libraries with their toolchains; no Python extension."""

        def run(self) -> None:
            for lib, ext in zip(libraries, self.extensions):
                out_dir = Path(self.get_ext_fullpath(ext.name)).resolve().parent
                temp = Path(self.build_temp).resolve() / lib.lib_name
                mode = _op_library_mode(lib, dist)
                why = skipped or (f"{lib.mode_env}=off" if mode == "off" else "")
                plan = None
                if not why:
                    try:
                        plan = lib.make_plan(temp, out_dir)
                    except BuildError as exc:
                        why = str(exc.code).removeprefix(f"error: {dist} build: ")
                if plan is None:
                    if mode == "on":
                        raise BuildError(f"{lib.mode_env}=on but lib{lib.lib_name}.so cannot be built: {why}", dist)
                    out_dir.mkdir(parents=True, exist_ok=True)
                    (out_dir / f"lib{lib.lib_name}.so").unlink(missing_ok=True)  # an older build's would not say why
                    text = f"{NOT_BUILT}{why}\n"
                    (out_dir / lib.log_name).write_text(text, encoding="utf-8")
                    print(f"{dist}: lib{lib.lib_name}.so (backend {lib.backend}) {text}", end="", flush=True)
                    continue
                run_plan(plan, temp, out_dir, lib.log_name)

        def get_outputs(self) -> list[str]:
            outs = []
            for lib, ext in zip(libraries, self.extensions):
                folder = Path(self.get_ext_fullpath(ext.name)).parent
                outs += [str(p) for p in (folder / f"lib{lib.lib_name}.so", folder / lib.log_name) if p.is_file()]
            return outs

        def get_output_mapping(self) -> dict[str, str]:
            return {}

    # one placeholder extension per library: what makes setuptools run build_ext (and tag the wheel per platform)
    exts = [Extension(f"{lib.package}.lib{lib.lib_name}", sources=[]) for lib in libraries]
    return {"ext_modules": exts, "cmdclass": {"build_ext": BuildOpLibraries}}


def build_jobs(n_sources: int) -> int:
    """OPRT_BUILD_JOBS, or (unset or 0) one job per source, at most the CPU count."""
    raw = os.environ.get("OPRT_BUILD_JOBS", "0")
    try:
        jobs = int(raw)
    except ValueError:
        jobs = -1
    if jobs < 0:
        raise BuildError(f"OPRT_BUILD_JOBS={raw!r} is not a number of jobs (a non-negative integer; 0: automatic)")
    return jobs or min(max(n_sources, 1), os.cpu_count() or 1)


# ---- nvcc (oprt_nvidia, and oprt_metax's nvcc-shim flavour) ---------------------------------------------

DEFAULT_CUDA_ARCHS = "90"
NVCC_FLAGS = ["-O3", "-std=c++17", "-Xcompiler", "-fPIC", "-cudart", "static", "-lineinfo", "-Xptxas", "-v"]


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
    text = os.environ.get("OPRT_CUDA_ARCHS", "").strip() or DEFAULT_CUDA_ARCHS
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


# Link flags of an op library: its calls of its own functions (the error text, the static CUDA runtime) bind inside
# it whatever else the process loaded (a backend library, a libcudart.so loaded globally), and the static runtime's
# symbols are not exported.
OP_LIBRARY_NVCC_LINK_FLAGS = ["-Xlinker", "-Bsymbolic", "-Xlinker", "--exclude-libs,ALL"]


def nvcc_op_library_plan(dist: str, lib_name: str, sources: list[Path], include_dirs: list[Path], temp_dir: Path,
                         out_dir: Path, deps: list[Path] | None = None) -> Plan:
    """The nvcc plan of an op library: each of ``sources`` and :func:`op_runtime_source` compiled with NVCC_FLAGS,
    the ``OPRT_CUDA_ARCHS`` gencode flags, ``OPRT_NVCC_FLAGS`` and ``include_dirs`` (oprt's include folder first),
    linked into ``out_dir/lib<lib_name>.so`` with the CUDA runtime static (the library loads where there is no
    driver) and :data:`OP_LIBRARY_NVCC_LINK_FLAGS`. Kernels launch on the stream their entry point is given, so
    nothing may compile with ``--default-stream per-thread`` (NULL must stay the legacy default stream the backend's
    events are recorded on). BuildError where nvcc is not found."""
    nvcc = find_nvcc()
    version = nvcc_version(nvcc)
    archs, described = gencode_flags(cuda_archs())
    base = [nvcc, *NVCC_FLAGS, *(f"-I{d}" for d in include_dirs)]
    extra = shlex.split(os.environ.get("OPRT_NVCC_FLAGS", ""))
    compiles = []
    for src in [*sources, op_runtime_source(temp_dir)]:
        obj = Path(temp_dir) / (Path(src).stem + ".o")
        compiles.append(Compile(Path(src), obj, [*base, *archs, *extra, "-c", str(src), "-o", str(obj)]))
    lib = Path(out_dir) / f"lib{lib_name}.so"
    link = [nvcc, "-shared", "-cudart", "static", "-Xcompiler", "-fPIC", *archs, *(str(c.obj) for c in compiles),
            "-o", str(lib), "-Xlinker", f"-soname,lib{lib_name}.so", *OP_LIBRARY_NVCC_LINK_FLAGS]
    jobs = build_jobs(len(compiles))
    headers = ([*(Path(include_dirs[0]) / h for h in HEADERS), *sorted(operators_dir(include_dirs[0]).glob("*/plan.h"))]
               if include_dirs else [])
    return Plan(title=f"{dist} build of lib{lib_name}.so: nvcc {version} ({nvcc}), architectures {described}, "
                      f"{jobs} jobs", compiles=compiles, link=link, library=lib, jobs=jobs, tool="nvcc",
                deps=[*headers, *(deps or [])])


# oprt_metax's nvcc-shim flavour: the MetaX build of the kernel sources (vendor_maca.h) compiled by nvcc, the shim
# mapping each MACA name vendor_maca.h uses to its CUDA twin (docs/metax.md)
MACA_SHIM = "maca_cuda_shim.h"  # in SHARED_DIR
MACA_DEFINE = "-DOPRT_VENDOR_MACA"  # vendor.h: the MACA side (mxcc and nvcc-shim alike)


def nvcc_shim_flags(include_dir: Path) -> list[str]:
    """The nvcc flags that make a compile the nvcc-shim flavour's: CUDA source language, maca_cuda_shim.h
    force-included, vendor_maca.h chosen, oprt's include folder and its shared folder on the include path."""
    shared = Path(include_dir) / SHARED_DIR
    return ["-x", "cu", "-include", str(shared / MACA_SHIM), MACA_DEFINE, f"-I{include_dir}", f"-I{shared}"]


# ---- CUTLASS / CuTe (oprt_nvidia only: the sm_90 matmul kernels of operators/matmul/sm90/) ----------------------

CUTE_DIR = "sm90"  # folder of an op folder with CUTLASS sources (matmul's); kernel_sources() does not look in it
# The CUTLASS sources compile for sm_90a only (WGMMA and the TMA multicast are sm_90a instructions); -DNDEBUG keeps
# CUTLASS's device asserts out, whose calls would serialise the WGMMA pipeline (ptxas warning C7510).
CUTE_NVCC_FLAGS = ["--expt-relaxed-constexpr", "-DNDEBUG", "-gencode", "arch=compute_90a,code=sm_90a"]
_CUTE_MODES = ("auto", "on", "off")
_CUTLASS_VERSION_RE = re.compile(r"#define CUTLASS_(MAJOR|MINOR|PATCH) (\d+)")


@dataclass
class CuteBuild:
    """Whether the nvidia build compiles the CUTLASS kernels, and from which headers.

    :param enabled: the op folders' ``sm90/`` sources are compiled and ``OPRT_HAS_CUTE`` is defined
    :param summary: one phrase for the build log's title: ``"CuTe kernels for sm_90a from CUTLASS 4.2.0
        (nvidia-cutlass: /path/include)"`` (the source, then the include folder), or why not
        (``"no CuTe kernels (OPRT_ENABLE_CUTE=off)"``)
    :param include: the folder holding ``cutlass/cutlass.h`` and ``cute/``
    :param version: CUTLASS's version from ``cutlass/version.h`` ("4.2.0"; "unknown" where it does not say)
    :param source: which place of the search it came from ("OPRT_CUTLASS_DIR", "nvidia-cutlass", "CUTLASS_PATH")
    """

    enabled: bool
    summary: str
    include: Path | None = None
    version: str = ""
    source: str = ""


def _is_cutlass_include(path: Path) -> bool:
    return (path / "cutlass" / "cutlass.h").is_file() and (path / "cute").is_dir()


def _cutlass_wheel_include() -> tuple[Path | None, str]:
    """The headers of the pip wheel nvidia-cutlass (``cutlass_library/source/include``), found with
    importlib.util.find_spec: the package's __init__ (which imports its generator) never runs."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("cutlass_library")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return None, "the nvidia-cutlass wheel (cutlass_library: not installed)"
    include = Path(list(spec.submodule_search_locations)[0]) / "source" / "include"
    return include, f"the nvidia-cutlass wheel: {include}"


def cutlass_version(include: Path) -> str:
    """CUTLASS's version from ``cutlass/version.h`` ("4.2.0"), "unknown" where it does not say."""
    try:
        text = (Path(include) / "cutlass" / "version.h").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "unknown"
    parts = dict(_CUTLASS_VERSION_RE.findall(text))
    if not all(k in parts for k in ("MAJOR", "MINOR", "PATCH")):
        return "unknown"
    return f"{parts['MAJOR']}.{parts['MINOR']}.{parts['PATCH']}"


def cute_build(archs: list[str]) -> CuteBuild:
    """Whether and from where the nvidia build compiles its CUTLASS kernels (docs/building.md, "CUTLASS kernels").

    ``OPRT_ENABLE_CUTE`` is ``auto`` (default: where the headers and an sm_90 architecture are there), ``on`` (a
    BuildError where either is missing) or ``off``. The headers are looked for in this order: ``OPRT_CUTLASS_DIR``
    (a folder holding ``cutlass/cutlass.h`` and ``cute/``; set but not such a folder: a BuildError whatever the
    mode), the nvidia-cutlass wheel's ``cutlass_library/source/include``, ``$CUTLASS_PATH/include``. ``archs`` are
    :func:`cuda_archs`; one of them must be 90 or 90a (the kernels are sm_90a code).
    """
    raw = os.environ.get("OPRT_ENABLE_CUTE", "").strip().lower() or "auto"
    if raw not in _CUTE_MODES:
        raise BuildError(f"OPRT_ENABLE_CUTE={os.environ.get('OPRT_ENABLE_CUTE')!r} is not one of auto, on, off")
    if raw == "off":
        return CuteBuild(False, "no CuTe kernels (OPRT_ENABLE_CUTE=off)")
    looked: list[str] = []
    found: tuple[Path, str] | None = None
    env_dir = os.environ.get("OPRT_CUTLASS_DIR")
    if env_dir:
        path = Path(env_dir)
        if not _is_cutlass_include(path):
            raise BuildError(f"OPRT_CUTLASS_DIR={env_dir} does not hold cutlass/cutlass.h and cute/ (it names the "
                             "CUTLASS include folder, e.g. <cutlass checkout>/include); unset it or fix it")
        found = (path, "OPRT_CUTLASS_DIR")
    else:
        looked.append("OPRT_CUTLASS_DIR (unset)")
        wheel, described = _cutlass_wheel_include()
        if wheel is not None and _is_cutlass_include(wheel):
            found = (wheel, "nvidia-cutlass")
        else:
            looked.append(described + (" (no cutlass/cutlass.h and cute/ there)" if wheel is not None else ""))
            root = os.environ.get("CUTLASS_PATH")
            if root and _is_cutlass_include(Path(root) / "include"):
                found = (Path(root) / "include", "CUTLASS_PATH")
            else:
                looked.append(f"CUTLASS_PATH/include: {Path(root) / 'include'}" if root else "CUTLASS_PATH (unset)")
    if found is None:
        if raw == "on":
            raise BuildError("OPRT_ENABLE_CUTE=on but the CUTLASS headers were not found; looked in: "
                             + "; ".join(looked) + ". Install them with `pip install nvidia-cutlass` (then build "
                             "with --no-build-isolation, or set OPRT_CUTLASS_DIR to its cutlass_library/source/"
                             "include), or set OPRT_CUTLASS_DIR to a CUTLASS checkout's include folder; "
                             "OPRT_ENABLE_CUTE=off builds without them")
        return CuteBuild(False, "no CuTe kernels (no CUTLASS headers: " + "; ".join(looked) + ")")
    include, source = found[0].resolve(), found[1]
    if not any(a in ("90", "90a") for a in archs):
        if raw == "on":
            raise BuildError(f"OPRT_ENABLE_CUTE=on but OPRT_CUDA_ARCHS ({';'.join(archs)}) has no 90 or 90a: the "
                             "CUTLASS kernels are sm_90a code; add 90 (e.g. OPRT_CUDA_ARCHS='80;90') or set "
                             "OPRT_ENABLE_CUTE=off")
        return CuteBuild(False, f"no CuTe kernels (no 90 or 90a among the architectures {' '.join(archs)})")
    version = cutlass_version(include)
    return CuteBuild(True, f"CuTe kernels for sm_90a from CUTLASS {version} ({source}: {include})", include, version,
                     source)


def cute_sources(include_dir: Path) -> list[Path]:
    """The CUTLASS kernel sources (``operators/*/sm90/*.cu``), sorted; BuildError where there are none."""
    sources = sorted(operators_dir(include_dir).glob(f"*/{CUTE_DIR}/*.cu"))
    if not sources:
        raise BuildError(f"no CUTLASS kernel sources in {operators_dir(include_dir)}/*/{CUTE_DIR}")
    _unique_stems([*kernel_sources(include_dir), *sources])
    return sources


def cute_headers(include_dir: Path) -> list[Path]:
    """The headers of ``operators/*/sm90/`` (matmul.cu includes one of them where the build has the kernels)."""
    ops = operators_dir(include_dir)
    return [*sorted(ops.glob(f"*/{CUTE_DIR}/*.h")), *sorted(ops.glob(f"*/{CUTE_DIR}/*.cuh"))]
