"""The CUTLASS matmul sources (oprt_kernels/sm90/*.cu) compile, each alone with nvcc -c for sm_90a, where this machine
has nvcc and the CUTLASS headers (oprt_build.cute_build: OPRT_CUTLASS_DIR, the nvidia-cutlass wheel, CUTLASS_PATH),
and matmul.cu compiles against their header with OPRT_HAS_CUTE. No GPU needed. CI's tox env installs no CUTLASS, so
there it skips; compiling all four takes minutes on two cores."""

from __future__ import annotations

import concurrent.futures
import subprocess
from pathlib import Path

import pytest

from oprt_core.cabi import include_dir
from oprt_core.include import oprt_build


def test_cutlass_sources_compile(tmp_path):
    try:
        nvcc = oprt_build.find_nvcc()
    except oprt_build.BuildError as exc:
        pytest.skip(f"no nvcc: {exc}")
    cute = oprt_build.cute_build(["90"])  # OPRT_ENABLE_CUTE=on without headers: its BuildError fails the test
    if not cute.enabled:
        pytest.skip(cute.summary)
    inc = Path(include_dir())
    kernels = inc / oprt_build.KERNELS_DIR
    base = [nvcc, *oprt_build.NVCC_FLAGS, "-DOPRT_HAS_CUTE=1", f"-I{inc}", f"-I{kernels}"]
    cmds = [[*base, *oprt_build.CUTE_NVCC_FLAGS, f"-I{cute.include}", "-c", str(src), "-o", str(tmp_path / src.stem)]
            for src in oprt_build.cute_sources(inc)]
    cmds.append([*base, "-gencode", "arch=compute_90,code=sm_90", "-c", str(kernels / "matmul.cu"), "-o",
                 str(tmp_path / "matmul")])
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(cmds)) as pool:
        runs = list(pool.map(lambda c: subprocess.run(c, capture_output=True, text=True, timeout=1800), cmds))
    for cmd, run in zip(cmds, runs):
        assert run.returncode == 0, f"{' '.join(cmd)}\n{run.stdout}{run.stderr}"
        # CUTLASS's device asserts (no -DNDEBUG) or a call inside the main loop would serialise the WGMMA pipeline
        assert "C7510" not in run.stdout + run.stderr, f"{cmd[-3]}: WGMMA serialised\n{run.stdout}{run.stderr}"
