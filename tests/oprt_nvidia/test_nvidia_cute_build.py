"""The CUTLASS matmul sources (operators/matmul/sm90/*.cu: the dispatcher and f16, bf16, tf32, e4m3) compile, each alone
with nvcc -c for sm_90a, where this machine has nvcc and the CUTLASS headers (oprt_build.cute_build: OPRT_CUTLASS_DIR,
the nvidia-cutlass wheel, CUTLASS_PATH), and matmul.cu compiles against their header with OPRT_HAS_CUTE. No GPU needed.
None spills registers (ptxas -v). CI's tox env installs no CUTLASS, so there it skips; compiling all five takes
minutes on two cores."""

from __future__ import annotations

import concurrent.futures
import os
import re
import subprocess
from pathlib import Path

import pytest

import oprt_core.build as oprt_build
from oprt_core.cabi import include_dir


def test_cutlass_sources_compile(tmp_path):
    try:
        nvcc = oprt_build.find_nvcc()
    except oprt_build.BuildError as exc:
        pytest.skip(f"no nvcc: {exc}")
    cute = oprt_build.cute_build(["90"])  # OPRT_ENABLE_CUTE=on without headers: its BuildError fails the test
    if not cute.enabled:
        pytest.skip(cute.summary)
    inc = Path(include_dir())
    shared, matmul = inc / oprt_build.SHARED_DIR, oprt_build.operators_dir(inc) / "matmul"
    base = [nvcc, *oprt_build.NVCC_FLAGS, "-DOPRT_HAS_CUTE=1", f"-I{inc}", f"-I{shared}"]
    cmds = [[*base, *oprt_build.CUTE_NVCC_FLAGS, f"-I{cute.include}", "-c", str(src), "-o", str(tmp_path / src.stem)]
            for src in oprt_build.cute_sources(inc)]
    cmds.append([*base, "-gencode", "arch=compute_90,code=sm_90", "-c", str(matmul / "matmul.cu"), "-o",
                 str(tmp_path / "matmul")])
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(cmds)) as pool:
        runs = list(pool.map(lambda c: subprocess.run(c, capture_output=True, text=True, timeout=1800), cmds))
    for cmd, run in zip(cmds, runs):
        assert run.returncode == 0, f"{' '.join(cmd)}\n{run.stdout}{run.stderr}"
        # CUTLASS's device asserts (no -DNDEBUG) or a call inside the main loop would serialise the WGMMA pipeline
        assert "C7510" not in run.stdout + run.stderr, f"{cmd[-3]}: WGMMA serialised\n{run.stdout}{run.stderr}"
        # nothing spills (ptxas -v): e4m3's second set of accumulators decided its large tile (docs/matmul.md)
        spills = re.findall(r"(\d+) bytes spill stores", run.stdout + run.stderr)
        assert set(spills) <= {"0"}, f"{cmd[-3]}: registers spilled\n{run.stdout}{run.stderr}"


# ---- the dispatcher's rule, on the CPU: matmul_sm90.cu (no CUTLASS header) linked to stand-ins for the kernels ------

_DRIVER = r"""
#include <stdio.h>
#include "sm90/matmul_sm90.h"
namespace oprt_sm90 {  // stand-ins for the per-dtype sources: a workspace size that names the dtype
size_t workspace_f16(const Plan &, int) { return 16; }
size_t workspace_bf16(const Plan &, int) { return 32; }
size_t workspace_tf32(const Plan &, int) { return 64; }
size_t workspace_e4m3(const Plan &, int) { return 128; }
cudaError_t run_f16(const LaunchArgs &, bool *l) { *l = true; return cudaSuccess; }
cudaError_t run_bf16(const LaunchArgs &, bool *l) { *l = true; return cudaSuccess; }
cudaError_t run_tf32(const LaunchArgs &, bool *l) { *l = true; return cudaSuccess; }
cudaError_t run_e4m3(const LaunchArgs &, bool *l) { *l = true; return cudaSuccess; }
}
int main() {
    oprt_matmul_plan_t p{};
    long long v[16];
    for (;;) {
        int got = 0;
        for (int i = 0; i < 16; ++i) got += scanf("%lld", &v[i]);
        if (got != 16) break;
        // oprt_plan_matmul's dtypes: e4m3 a and b with a bf16 out, else one dtype
        p.in_dtype = (int)v[0]; p.dtype = v[0] == OPRT_DTYPE_F8E4M3 ? OPRT_DTYPE_BF16 : (int)v[0];
        p.allow_tf32 = (int)v[1]; p.batch = v[2]; p.m = v[3]; p.n = v[4]; p.k = v[5];
        p.a_bs = v[6]; p.a_rs = v[7]; p.a_cs = v[8]; p.b_bs = v[9]; p.b_rs = v[10]; p.b_cs = v[11];
        p.o_bs = v[12]; p.o_rs = v[13]; p.o_cs = v[14]; p.alpha = 1.f;
        oprt_sm90::Plan plan;
        oprt_sm90::plan(&p, (int)v[15], &plan);
        const char *name = oprt_sm90::config_name(plan);
        printf("%s %d %d %zu\n", name ? name : "none", plan.prob.swapped, plan.prob.b_k_major, plan.workspace);
    }
    return 0;
}
"""

F32, F16, BF16, E4M3 = 0, 1, 2, 5  # oprt.h's OPRT_DTYPE_* (checked below against the header); E4M3: a and b, out bf16


def _row(m, n, k, a="n", b="n", out="n", batch=1, a_bs=None, b_bs=None):
    """Strides of a contiguous (``"n"``) or transposed (``"t"``) a (M, K), b (K, N) and out (M, N)."""
    a_rs, a_cs = (k, 1) if a == "n" else (1, m)
    b_rs, b_cs = (n, 1) if b == "n" else (1, k)
    o_rs, o_cs = (n, 1) if out == "n" else (1, m)
    bs = (m * k if a_bs is None else a_bs, k * n if b_bs is None else b_bs, m * n) if batch > 1 else (0, 0, 0)
    return [batch, m, n, k, bs[0], a_rs, a_cs, bs[1], b_rs, b_cs, bs[2], o_rs, o_cs]


# (dtype, allow_tf32, plan row, SM count) -> (kernel column, swapped, b K-major, workspace)
_RULE = [
    ((BF16, 0, _row(4096, 4096, 1024), 132), ("cutlass_sm90_128x256x64_ws", 0, 0, 32)),
    ((F16, 0, _row(512, 384, 256), 132), ("cutlass_sm90_128x128x64_ws", 0, 0, 16)),
    ((BF16, 0, _row(2048, 2048, 512), 132), ("cutlass_sm90_128x128x64_ws", 0, 0, 32)),   # 128 large tiles < 132 SMs
    ((BF16, 0, _row(2048, 2048, 512), 128), ("cutlass_sm90_128x256x64_ws", 0, 0, 32)),   # ... >= 128
    ((BF16, 0, _row(2048, 2048, 512, batch=2), 132), ("cutlass_sm90_128x256x64_ws", 0, 0, 32)),  # the batch counts
    ((BF16, 0, _row(16, 1024, 512, b="t"), 132), ("cutlass_sm90_64x128x64_pingpong", 0, 1, 32)),
    ((BF16, 0, _row(64, 1024, 512), 132), ("cutlass_sm90_64x128x64_pingpong", 0, 0, 32)),
    ((BF16, 0, _row(65, 1024, 512), 132), ("cutlass_sm90_128x128x64_ws", 0, 0, 32)),
    ((F32, 1, _row(1024, 1024, 512, b="t"), 132), ("cutlass_sm90_128x128x32_ws_tf32", 0, 1, 64)),
    ((F32, 1, _row(32, 1024, 512, b="t"), 132), ("cutlass_sm90_64x128x32_pingpong_tf32", 0, 1, 64)),
    # out column-major: the kernel's M and N are out's N and M
    ((BF16, 0, _row(256, 384, 128, a="t", b="t", out="t"), 132), ("cutlass_sm90_128x128x64_ws", 1, 0, 32)),
    ((BF16, 0, _row(384, 64, 136, b="t", out="t"), 132), ("cutlass_sm90_64x128x64_pingpong", 1, 1, 32)),
    ((BF16, 0, _row(96, 264, 520, batch=6), 132), ("cutlass_sm90_128x128x64_ws", 0, 0, 32)),
    # declined: the tiled kernel
    ((F32, 0, _row(1024, 1024, 512, b="t"), 132), ("none", 0, 0, 0)),                # f32 without TF32
    ((BF16, 0, _row(256, 256, 100), 132), ("none", 0, 0, 0)),                        # K % 8
    ((BF16, 0, _row(256, 252, 256), 132), ("none", 0, 0, 0)),                        # N % 8
    ((BF16, 0, _row(256, 256, 256, a="t"), 132), ("none", 0, 0, 0)),                 # a M-major, out row-major
    ((BF16, 0, _row(256, 384, 128, b="n", out="t"), 132), ("none", 0, 0, 0)),        # b N-major, out column-major
    ((BF16, 0, _row(96, 264, 520, batch=6, a_bs=0), 132), ("none", 0, 0, 0)),        # a broadcast over the batch
    ((BF16, 0, _row(96, 264, 520, batch=6, b_bs=520 * 264 + 4), 132), ("none", 0, 0, 0)),  # batch stride % 8
    ((BF16, 0, [1, 64, 64, 64, 0, 32, 1, 0, 64, 1, 0, 64, 1], 132), ("none", 0, 0, 0)),   # a's rows overlap
    ((BF16, 0, [1, 64, 64, 64, 0, 128, 2, 0, 64, 1, 0, 64, 1], 132), ("none", 0, 0, 0)),  # a stepped
    ((BF16, 0, [1, 64, 64, 64, 0, 64, 1, 0, -64, 1, 0, 64, 1], 132), ("none", 0, 0, 0)),  # b reversed
    ((BF16, 0, _row(1 << 31, 64, 64), 132), ("none", 0, 0, 0)),                      # M past an int
    # one row of a: its row stride is never used
    ((BF16, 0, [1, 1, 512, 256, 0, 3, 1, 0, 1, 256, 0, 512, 1], 132), ("cutlass_sm90_64x128x64_pingpong", 0, 1, 32)),
    # e4m3 a and b (bf16 out): K-major a and b only, 128 deep; 16 elements (16 bytes) along a's and b's K, 8 along N
    ((E4M3, 0, _row(4096, 4096, 1024, b="t"), 132), ("cutlass_sm90_128x128x128_2x1_ws_e4m3", 0, 1, 128)),
    ((E4M3, 0, _row(512, 384, 256, b="t"), 132), ("cutlass_sm90_128x128x128_ws_e4m3", 0, 1, 128)),
    ((E4M3, 0, _row(200, 264, 256, b="t"), 132), ("cutlass_sm90_128x128x128_ws_e4m3", 0, 1, 128)),  # N % 16 != 0
    ((E4M3, 0, _row(16, 4096, 4096, b="t"), 132), ("cutlass_sm90_64x128x128_pingpong_e4m3", 0, 1, 128)),
    ((E4M3, 0, _row(1, 4096, 4096, b="t"), 132), ("cutlass_sm90_64x128x128_pingpong_e4m3", 0, 1, 128)),
    ((E4M3, 0, _row(96, 256, 512, batch=4, b="t"), 132), ("cutlass_sm90_128x128x128_ws_e4m3", 0, 1, 128)),
    # out column-major: the kernel's A is b^T (K-major where b is), its B a^T (K-major where a is)
    ((E4M3, 0, _row(384, 64, 144, b="t", out="t"), 132), ("cutlass_sm90_64x128x128_pingpong_e4m3", 1, 1, 128)),
    # TF32 and e4m3 with an N-major B in the kernel's view: B copied K-major into the workspace's start (L N K
    # elements, rounded up to 256 bytes), CUTLASS's workspace after it
    ((F32, 1, _row(1024, 1024, 512), 132), ("matmul_transpose_b+cutlass_sm90_128x128x32_ws_tf32", 0, 1, 64 + 2097152)),
    ((E4M3, 0, _row(512, 384, 256), 132), ("matmul_transpose_b+cutlass_sm90_128x128x128_ws_e4m3", 0, 1, 128 + 98304)),
    ((E4M3, 0, _row(4096, 4096, 1024), 132),
     ("matmul_transpose_b+cutlass_sm90_128x128x128_2x1_ws_e4m3", 0, 1, 128 + 4194304)),
    ((E4M3, 0, _row(16, 1024, 512), 132),
     ("matmul_transpose_b+cutlass_sm90_64x128x128_pingpong_e4m3", 0, 1, 128 + 524288)),
    ((E4M3, 0, _row(200, 264, 256), 132), ("matmul_transpose_b+cutlass_sm90_128x128x128_ws_e4m3", 0, 1, 128 + 67584)),
    ((E4M3, 0, _row(96, 264, 512, batch=6), 132),
     ("matmul_transpose_b+cutlass_sm90_128x128x128_ws_e4m3", 0, 1, 128 + 811008)),  # N % 16 != 0: the copy takes it
    ((E4M3, 0, _row(8, 40, 16), 132), ("matmul_transpose_b+cutlass_sm90_64x128x128_pingpong_e4m3", 0, 1, 128 + 768)),
    ((E4M3, 0, _row(256, 384, 128, a="t", b="t", out="t"), 132),
     ("matmul_transpose_b+cutlass_sm90_128x128x128_ws_e4m3", 1, 1, 128 + 32768)),  # swapped: its B (a^T) N-major
    # e4m3 declined: the tiled kernel
    ((E4M3, 0, _row(96, 256, 512, batch=4, b_bs=0), 132), ("none", 0, 0, 0)),        # N-major b broadcast: no copy
    ((E4M3, 0, [1, 64, 64, 64, 0, 64, 1, 0, 32, 1, 0, 64, 1], 132), ("none", 0, 0, 0)),  # N-major b's rows overlap
    ((E4M3, 0, _row(256, 256, 136, b="t"), 132), ("none", 0, 0, 0)),                 # K % 16 (bf16 takes K = 136)
    ((E4M3, 0, _row(256, 252, 256, b="t"), 132), ("none", 0, 0, 0)),                 # out's N % 8
    ((E4M3, 0, _row(256, 256, 256, a="t", b="t"), 132), ("none", 0, 0, 0)),          # a M-major, out row-major
    ((E4M3, 0, _row(96, 256, 512, batch=4, b="t", a_bs=96 * 512 + 8), 132), ("none", 0, 0, 0)),  # batch stride % 16
]


@pytest.fixture(scope="module")
def rule_driver(tmp_path_factory):
    """matmul_sm90.cu's plan() and config_name() linked to stand-in kernels: a program reading plan rows on stdin and
    printing (kernel column, swapped, b K-major, workspace) a line."""
    try:
        nvcc = oprt_build.find_nvcc()
    except oprt_build.BuildError as exc:
        pytest.skip(f"no nvcc: {exc}")
    inc = Path(include_dir())
    header = (inc / "oprt.h").read_text(encoding="utf-8")
    for name, value in (("F32", F32), ("F16", F16), ("BF16", BF16), ("F8E4M3", E4M3)):
        assert f"OPRT_DTYPE_{name} = {value}" in header
    tmp = tmp_path_factory.mktemp("rule")
    (tmp / "driver.cu").write_text(_DRIVER)
    exe = tmp / "rule"
    matmul = oprt_build.operators_dir(inc) / "matmul"
    build = subprocess.run([nvcc, "-std=c++17", f"-I{inc}", f"-I{inc / oprt_build.SHARED_DIR}", f"-I{matmul}",
                            str(tmp / "driver.cu"), str(matmul / oprt_build.CUTE_DIR / "matmul_sm90.cu"), "-o",
                            str(exe)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    return exe


def _plans(exe, rows, env=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPRT_NVIDIA_MATMUL_")} | (env or {})
    stdin = "".join(" ".join(str(v) for v in [dtype, tf32, *row, sms]) + "\n" for dtype, tf32, row, sms in rows)
    run = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, timeout=60, check=True, env=env)
    return [tuple(int(x) if x.isdigit() else x for x in line.split()) for line in run.stdout.splitlines()]


def test_dispatch_rule(rule_driver):
    """Which products the CUTLASS kernels take, with which tile and workspace, and which they decline (docs/matmul.md's
    rule), from matmul_sm90.cu's plan() itself."""
    assert _plans(rule_driver, [row for row, _ in _RULE]) == [want for _, want in _RULE]


_SCHEDULED = [  # (plan row, kernel column with OPRT_NVIDIA_MATMUL_STREAMK=1, _SWIZZLE=4, _RASTER=m)
    ((BF16, 0, _row(4096, 4096, 1024), 132), "cutlass_sm90_128x256x64_ws_streamk_swizzle4_rasterM"),
    ((F16, 0, _row(8192, 8192, 512, b="t"), 132), "cutlass_sm90_128x256x64_ws_streamk_swizzle4_rasterM"),
    ((BF16, 0, _row(512, 384, 256), 132), "cutlass_sm90_128x128x64_ws_swizzle4_rasterM"),  # stream-K: large only
    ((BF16, 0, _row(64, 1024, 512), 132), "cutlass_sm90_64x128x64_pingpong_swizzle4_rasterM"),
    ((E4M3, 0, _row(4096, 4096, 1024, b="t"), 132), "cutlass_sm90_128x128x128_2x1_ws_e4m3_swizzle4_rasterM"),
    ((F32, 1, _row(4096, 4096, 1024, b="t"), 132), "cutlass_sm90_128x256x32_ws_tf32_swizzle4_rasterM"),
    ((BF16, 0, _row(256, 256, 136, a="t", b="t"), 132), "none"),  # declined: no scheduler
]


def test_scheduler_settings_from_the_environment(rule_driver):
    """OPRT_NVIDIA_MATMUL_STREAMK / _SWIZZLE / _RASTER / _TILE reach the plan and the kernel column (stream-K and the
    256 x 128 tile only on the 16-bit large configuration); values it does not know keep the default, whose names carry
    no suffix."""
    rows = [row for row, _ in _SCHEDULED]
    env = {"OPRT_NVIDIA_MATMUL_STREAMK": "1", "OPRT_NVIDIA_MATMUL_SWIZZLE": "4", "OPRT_NVIDIA_MATMUL_RASTER": "m"}
    assert [got[0] for got in _plans(rule_driver, rows, env)] == [name for _, name in _SCHEDULED]
    defaults = [got[0] for got in _plans(rule_driver, rows)]
    assert [got[0] for got in _plans(rule_driver, rows, {"OPRT_NVIDIA_MATMUL_STREAMK": "yes",
                                                         "OPRT_NVIDIA_MATMUL_SWIZZLE": "3",
                                                         "OPRT_NVIDIA_MATMUL_RASTER": "x"})] == defaults
    assert not any(n.endswith(("streamk", "M", "N")) or "swizzle" in n for n in defaults)
    raster_n = _plans(rule_driver, rows[:1], {"OPRT_NVIDIA_MATMUL_RASTER": "n"})
    assert raster_n[0][0] == "cutlass_sm90_128x256x64_ws_rasterN"
    # the 256 x 128 tile: 16-bit large configurations only, and then no stream-K
    tall = {"OPRT_NVIDIA_MATMUL_TILE": "256x128", "OPRT_NVIDIA_MATMUL_STREAMK": "1"}
    assert [got[0] for got in _plans(rule_driver, rows, tall)] == [
        "cutlass_sm90_256x128x64_1x2_ws", "cutlass_sm90_256x128x64_1x2_ws", "cutlass_sm90_128x128x64_ws",
        "cutlass_sm90_64x128x64_pingpong", "cutlass_sm90_128x128x128_2x1_ws_e4m3", "cutlass_sm90_128x256x32_ws_tf32",
        "none"]
    assert _plans(rule_driver, rows[:1], {"OPRT_NVIDIA_MATMUL_TILE": "128x128"})[0][0] == "cutlass_sm90_128x256x64_ws"
