"""Build of oprt-gelu: where nvcc is found, csrc/gelu_tanh.cu becomes ``oprt_gelu/liboprt_gelu_nvidia.so``, the
gelu_tanh kernel that the plugin names for backend ``nvidia`` (``oprt_core.compiled.c_library``); where it is not, the
package installs without it, ``oprt_gelu/build-nvidia.log`` says why, and the backend reports gelu_tanh unsupported
with that reason.

``OPRT_GELU_NVIDIA``: ``auto`` (default), ``on`` (a missing nvcc stops the install), ``off`` (never built). The compile
is oprt-core's build module's (``oprt_core.build``): NVCC_FLAGS, ``OPRT_CUDA_ARCHS`` (default sm_90),
``OPRT_NVCC_FLAGS``, the CUDA runtime static; oprt-core's include folder and ``include/`` on the include path. The
build module is the installed oprt-core's (a build without isolation: ``pip install --no-build-isolation``), else the
file beside ``OPRT_INCLUDE_DIR`` or in the repository checkout (``../../oprt_core/src/oprt_core/build.py``); the
include folder is ``OPRT_INCLUDE_DIR``, else the one beside that module.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from setuptools import setup

HERE = Path(__file__).resolve().parent
DIST = "oprt-gelu"


def load_oprt_build() -> tuple[ModuleType | None, str]:
    """oprt-core's build helpers (``oprt_core.build``), or None and where they were looked for: imported where
    oprt-core is importable (a build without isolation: ``pip install --no-build-isolation``), otherwise that same file
    loaded from beside ``OPRT_INCLUDE_DIR`` or from the repository checkout (docs/building.md)."""
    try:
        import oprt_core.build

        return oprt_core.build, ""
    except ImportError as exc:
        looked = [f"oprt_core.build (not importable: {exc})"]
    env = os.environ.get("OPRT_INCLUDE_DIR")
    places = [("beside OPRT_INCLUDE_DIR", Path(env).parent)] if env else []
    places.append(("the repository checkout", HERE.parents[1] / "oprt_core" / "src" / "oprt_core"))
    for label, folder in places:
        if (folder / "build.py").is_file():
            spec = importlib.util.spec_from_file_location("oprt_core_build", folder / "build.py")
            module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # for its dataclasses
            spec.loader.exec_module(module)
            return module, ""
        looked.append(f"{label}: {folder / 'build.py'}")
    return None, ("oprt-core's build module was not found; looked in: " + "; ".join(looked)
                  + ". Set OPRT_INCLUDE_DIR=$(python -c 'import oprt_core.cabi as c; print(c.include_dir())'), or "
                  "install with --no-build-isolation where oprt-core is installed")


def oprt_include(oprt_build: ModuleType) -> tuple[Path | None, str]:
    """oprt-core's include folder: ``OPRT_INCLUDE_DIR``, else the one beside the build module loaded; or None and
    why."""
    env = os.environ.get("OPRT_INCLUDE_DIR")
    path = Path(env) if env else Path(oprt_build.__file__).resolve().parent / "include"
    if (path / "oprt.h").is_file():
        return path.resolve(), ""
    return None, f"oprt-core's include folder (oprt.h) was not found in {path}"


oprt_build, WHY_NOT = load_oprt_build()
INCLUDE_DIR, WHY_NOT = oprt_include(oprt_build) if oprt_build is not None else (None, WHY_NOT)
if INCLUDE_DIR is None or oprt_build is None:
    if os.environ.get("OPRT_GELU_NVIDIA", "").strip().lower() == "on":
        sys.exit(f"error: {DIST} build: OPRT_GELU_NVIDIA=on but liboprt_gelu_nvidia.so cannot be built: {WHY_NOT}")
    print(f"{DIST}: liboprt_gelu_nvidia.so not built: {WHY_NOT}", flush=True)
    setup()
else:

    def nvidia_plan(temp_dir: Path, out_dir: Path) -> oprt_build.Plan:
        return oprt_build.nvcc_op_library_plan(
            DIST, "oprt_gelu_nvidia", [HERE / "csrc" / "gelu_tanh.cu"], [INCLUDE_DIR, HERE / "include"], temp_dir,
            out_dir, deps=[HERE / "include" / "oprt_gelu_tanh.h"])

    setup(**oprt_build.op_library_setup_kwargs(DIST, [oprt_build.OpLibrary(
        backend="nvidia", package="oprt_gelu", lib_name="oprt_gelu_nvidia", log_name="build-nvidia.log",
        make_plan=nvidia_plan, mode_env="OPRT_GELU_NVIDIA")]))
