"""Build of oprt-gelu: where nvcc is found, csrc/gelu_tanh.cu becomes ``oprt_gelu/liboprt_gelu_nvidia.so``, the
gelu_tanh kernel that the plugin names for backend ``nvidia`` (``oprt_core.compiled.c_library``); where it is not, the
package installs without it, ``oprt_gelu/build-nvidia.log`` says why, and the backend reports gelu_tanh unsupported
with that reason.

``OPRT_GELU_NVIDIA``: ``auto`` (default), ``on`` (a missing nvcc stops the install), ``off`` (never built). The compile
is oprt_build's (oprt-core's include folder): NVCC_FLAGS, ``OPRT_CUDA_ARCHS`` (default sm_90), ``OPRT_NVCC_FLAGS``,
the CUDA runtime static; oprt-core's include folder and ``include/`` on the include path. The include folder is
looked for in ``OPRT_INCLUDE_DIR``, the repository checkout (``../../oprt_core/src/oprt_core/include``) and the
installed oprt-core (a build without isolation: ``pip install --no-build-isolation``).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
DIST = "oprt-gelu"


def oprt_include() -> tuple[Path | None, str]:
    """oprt-core's include folder (oprt.h, oprt_build.py), or None and where it was looked for."""
    looked: list[str] = []
    places: list[tuple[str, Path]] = []
    env = os.environ.get("OPRT_INCLUDE_DIR")
    if env:
        places.append(("OPRT_INCLUDE_DIR", Path(env)))
    else:
        looked.append("OPRT_INCLUDE_DIR (unset)")
    places.append(("the repository checkout", HERE.parents[1] / "oprt_core" / "src" / "oprt_core" / "include"))
    spec = importlib.util.find_spec("oprt_core")  # found, not imported: its build needs none of it
    if spec is not None and spec.submodule_search_locations:
        places.append(("the installed oprt-core", Path(list(spec.submodule_search_locations)[0]) / "include"))
    else:
        looked.append("the installed oprt-core (not importable by this build)")
    for label, path in places:
        if (path / "oprt.h").is_file() and (path / "oprt_build.py").is_file():
            return path.resolve(), ""
        looked.append(f"{label}: {path}")
    return None, ("oprt-core's include folder (oprt.h, oprt_build.py) was not found; looked in: " + "; ".join(looked)
                  + ". Set OPRT_INCLUDE_DIR=$(python -c 'import oprt_core.cabi as c; print(c.include_dir())'), or "
                  "install with --no-build-isolation where oprt-core is installed")


INCLUDE_DIR, WHY_NOT = oprt_include()
if INCLUDE_DIR is None:
    if os.environ.get("OPRT_GELU_NVIDIA", "").strip().lower() == "on":
        sys.exit(f"error: {DIST} build: OPRT_GELU_NVIDIA=on but liboprt_gelu_nvidia.so cannot be built: {WHY_NOT}")
    print(f"{DIST}: liboprt_gelu_nvidia.so not built: {WHY_NOT}", flush=True)
    setup()
else:
    sys.path.insert(0, str(INCLUDE_DIR))
    sys.dont_write_bytecode = True  # no __pycache__ in oprt-core's include folder
    import oprt_build

    def nvidia_plan(temp_dir: Path, out_dir: Path) -> oprt_build.Plan:
        return oprt_build.nvcc_op_library_plan(
            DIST, "oprt_gelu_nvidia", [HERE / "csrc" / "gelu_tanh.cu"], [INCLUDE_DIR, HERE / "include"], temp_dir,
            out_dir, deps=[HERE / "include" / "oprt_gelu_tanh.h"])

    setup(**oprt_build.op_library_setup_kwargs(DIST, [oprt_build.OpLibrary(
        backend="nvidia", package="oprt_gelu", lib_name="oprt_gelu_nvidia", log_name="build-nvidia.log",
        make_plan=nvidia_plan, mode_env="OPRT_GELU_NVIDIA")]))
