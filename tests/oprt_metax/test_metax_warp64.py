"""The MetaX (64-lane) instantiation of the shared kernels, checked without MetaX hardware or MACA.

- Compiled: every kernel source built with nvcc as the MetaX build (vendor_maca.h through maca_cuda_shim.h) with
  OPRT_MACA_WARP64 forcing MetaX's 64-lane warps and 64-bit lane masks. Compile-only: NVIDIA warps have 32 lanes,
  so such objects must never run (nvcc also truncates the 64-bit masks: warning #69).
- Run on the host: the warp-level templates the kernels use (oprt_warp.h) on emulated 32- and 64-lane warps
  (warp_emulation.cpp, built with the host C++ compiler).
"""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "oprt_core" / "src" / "oprt_core" / "include"
SHARED = INCLUDE / "oprt_shared"
HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="not run from a checkout")

# the MetaX build under nvcc, forced to 64 lanes
WARP64_FLAGS = ["-std=c++17", "-arch=sm_90", "-x", "cu", "-include", str(SHARED / "maca_cuda_shim.h"),
                "-DOPRT_VENDOR_MACA", "-DOPRT_MACA_WARP64", f"-I{INCLUDE}", f"-I{SHARED}"]

# what the 64-lane build must see: the vendor's constants, and none of NVIDIA's capabilities
PROBE = """
#include "common.cuh"
static_assert(oprt_kernels::kWarp == 64, "64-lane warps");
static_assert(sizeof(oprt_kernels::lane_mask_t) == 8 && oprt_kernels::kFullMask == ~0ull, "64-bit lane masks");
static_assert(!OPRT_HAS_PTX && !OPRT_HAS_PDL && !OPRT_HAS_CLUSTERS && !OPRT_HAS_CACHE_HINTS, "no NVIDIA capability");
"""


def _nvcc() -> str:
    import oprt_core.build as oprt_build  # noqa: PLC0415 - the shared build module

    try:
        return oprt_build.find_nvcc()
    except oprt_build.BuildError as exc:
        pytest.skip(f"no nvcc: {exc}")


def _compile(cmd: list[str]) -> tuple[list[str], subprocess.CompletedProcess]:
    return cmd, subprocess.run(cmd, capture_output=True, text=True, timeout=1200)


def test_kernels_compile_with_64_lane_warps(tmp_path):
    nvcc = _nvcc()
    probe = tmp_path / "probe.cu"
    probe.write_text(PROBE, encoding="utf-8")
    sources = [probe, *sorted(SHARED.glob("*.cu")), *sorted((INCLUDE.parent / "operators").glob("*/*.cu"))]
    cmds = [[nvcc, *WARP64_FLAGS, "-c", str(src), "-o", str(tmp_path / (src.stem + ".o"))] for src in sources]
    jobs = min(len(cmds), os.cpu_count() or 1)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for cmd, proc in pool.map(_compile, cmds):
            assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}{proc.stderr}"
            # ptxas accepts every __launch_bounds__ as given at 64 lanes (threads an SM within range)
            assert "out of range" not in proc.stderr, proc.stderr


def test_warp_templates_on_emulated_32_and_64_lane_warps(tmp_path):
    cxx = next((shutil.which(c) for c in ("c++", "g++", "clang++") if shutil.which(c)), None)
    if cxx is None:
        pytest.skip("no host C++ compiler")
    exe = tmp_path / "warp_emulation"
    build = subprocess.run([cxx, "-std=c++17", "-O1", "-Wall", "-Wno-unknown-pragmas", f"-I{SHARED}",
                            str(HERE / "warp_emulation.cpp"), "-o", str(exe)], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().endswith("ok: 0 failures"), run.stdout
