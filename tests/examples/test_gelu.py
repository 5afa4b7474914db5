"""examples/oprt-gelu: the gelu_tanh spec (an op oprt-core does not have), its numpy implementation, its
registration, the sweep, its generated C header and its CUDA kernel (compiled with nvcc, no GPU needed).

Needs the distribution oprt-gelu (``pip install ./examples/oprt-gelu``; tox env ``gelu``).
The ``large`` case set runs only with ``OPRT_TEST_LARGE=1``.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import zlib
from importlib import metadata
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

pytest.importorskip("oprt_gelu", reason="oprt-gelu is not installed: pip install ./examples/oprt-gelu")

from oprt_gelu import gelu_tanh_numpy, gelu_tanh_reference, gelu_tanh_spec  # noqa: E402
from oprt_gelu import plugin as gelu_plugin  # noqa: E402
from oprt_gelu.spec import SCALE  # noqa: E402

from oprt_core import DTYPES, Registry, get_plugin_manager, numpy_plugin, ops  # noqa: E402
from oprt_core.cabi import include_dir  # noqa: E402
from oprt_core.spec import REQUIRED_CASE_SETS as CASE_SETS  # noqa: E402

OPRT_BENCH = [sys.executable, "-c", "import sys; from oprt_bench.cli import main; sys.argv[0] = 'oprt-bench'; main()"]
RUN_LARGE = os.environ.get("OPRT_TEST_LARGE") == "1"
SPEC = gelu_tanh_spec
PACKAGE = Path(__file__).resolve().parents[2] / "examples" / "oprt-gelu"


def seed_of(*parts: object) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


def registry(*extra) -> Registry:
    """numpy + gelu_tanh registered in-process (no entry points), plus ``extra`` (plugin, name) pairs."""
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(numpy_plugin, "numpy", "oprt-core")
    pm.register_plugin(gelu_plugin, "gelu_tanh", "oprt-gelu")
    for plugin, name in extra:
        pm.register_plugin(plugin, name)
    return Registry(pm)


# -- the reference and the spec -----------------------------------------------------------------------------------

def test_reference_matches_the_formula_element_by_element():
    xs = np.array([-6.0, -4.0, -1.5, -0.25, 0.0, 0.25, 1.0, 3.0, 8.0])
    want = [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))) for v in xs]
    # 1 + tanh(u) cancels in float64 too (at -4: ~1e-11 relative between two orders of evaluation)
    np.testing.assert_allclose(gelu_tanh_reference(xs), want, rtol=1e-10, atol=1e-300)
    assert gelu_tanh_reference(np.array([30.0]))[0] == 30.0 and gelu_tanh_reference(np.array([-30.0]))[0] == -0.0


def test_not_a_core_op_and_its_facts():
    from oprt_core.compute_ops import COMPUTE_SPECS
    from oprt_core.core_ops import CORE_SPECS
    from oprt_core.llm_ops import LLM_SPECS

    assert "gelu_tanh" not in {**CORE_SPECS, **LLM_SPECS, **COMPUTE_SPECS}
    assert set(CASE_SETS) <= set(SPEC.case_sets) and SPEC.inplace == ("x",) and SPEC.has_c_abi
    case = SPEC.cases("default")[0]
    assert SPEC.bytes_moved(case, "bf16") == 2 * case.numel * 2 and SPEC.flops(case) == 9 * case.numel
    x = SPEC.make_inputs(SPEC.cases("smoke")[0], "f32", np.random.default_rng(1))[0]
    assert x.min() < -3.5 and x.max() > 3.5 and np.all(x != 0)  # the bend and the cancelling tail, never zeros
    assert np.abs(x).max() < SCALE


# -- the budget ------------------------------------------------------------------------------------------------------

def _x(dtype: str, n: int = 20000, seed: int = 0) -> np.ndarray:
    return SPEC.make_inputs(SPEC.custom_case((n,)), dtype, np.random.default_rng(seed))[0]


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_budget_accepts_one_rounding_and_the_numpy_implementation(dtype):
    x = _x(dtype)
    ref = SPEC.reference([x])
    assert SPEC.check(ref.astype(DTYPES[dtype].numpy), [x], dtype).ok
    out = np.empty_like(x)
    gelu_tanh_numpy([x], out, {})
    assert SPEC.check(out, [x], dtype).ok


def _erf_gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_budget_rejects_wrong_results(dtype):
    x = _x(dtype)
    x64 = x.astype(np.float64)
    np_dt = DTYPES[dtype].numpy
    no_cubic = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * x64))
    assert not SPEC.check(no_cubic.astype(np_dt), [x], dtype).ok
    k = 40 if dtype == "f32" else 3  # every element a few ulps of the dtype off (40 of f32: past the f32 terms)
    assert not SPEC.check((SPEC.reference([x]) * (1 + k * DTYPES[dtype].eps)).astype(np_dt), [x], dtype).ok
    if dtype == "f32":  # the erf form is 1e-4 away: only f32 tells them apart
        assert not SPEC.check(_erf_gelu(x64).astype(np.float32), [x], dtype).ok


def test_budget_absorbs_the_cancelling_tail_in_f32():
    """For x < -3, 1 + tanh(u) cancels: an f32 formula loses digits there, and the budget's |x| * eps term allows
    exactly that; in f16 and bf16 the subnormal floor does."""
    x = np.linspace(-4, -3, 4001, dtype=np.float32)
    x32 = x.astype(np.float32)
    u = np.float32(math.sqrt(2 / math.pi)) * (x32 + np.float32(0.044715) * x32 * x32 * x32)
    f32_formula = (np.float32(0.5) * x32 * (np.float32(1) + np.tanh(u))).astype(np.float32)
    assert SPEC.check(f32_formula, [x], "f32").ok
    xb = x.astype(ml_dtypes.bfloat16)
    assert SPEC.check(SPEC.reference([xb]).astype(ml_dtypes.bfloat16), [xb], "bf16").ok


# -- the numpy backend on every case ---------------------------------------------------------------------------------

def _case_params():
    for case_set in CASE_SETS:
        if case_set == "large" and not RUN_LARGE:
            continue
        for case in SPEC.cases(case_set):
            if case_set == "default" and case.numel > 1 << 24:
                continue
            for dtype in DTYPES:
                yield pytest.param(case_set, case, dtype, id=f"{case_set}-{case.name}-{dtype}")


@pytest.fixture(scope="module")
def numpy_backend():
    return registry().get_backend("numpy")


@pytest.mark.parametrize(("case_set", "case", "dtype"), list(_case_params()))
def test_numpy_backend_every_case(numpy_backend, case_set, case, dtype):
    be = numpy_backend
    assert be.supports("gelu_tanh", dtype, case).ok
    inputs = SPEC.make_inputs(case, dtype, np.random.default_rng(seed_of(case_set, case.name, dtype)))
    out = be.empty(SPEC.output_shape([x.shape for x in inputs], {}), dtype)
    be.fill_nan(out)
    be.prepare("gelu_tanh", [be.to_device(x) for x in inputs], out, {})()
    res = SPEC.check(be.to_host(out), inputs, dtype)
    assert res.ok, f"{case_set}/{case.name}/{dtype}: {res.message}"


def test_in_place_through_the_op_api():
    reg = registry()
    x = _x("f32", 1000, 3)
    y = x.copy()
    assert ops.run("gelu_tanh", [y], backend="numpy", out=y, registry=reg) is y
    assert SPEC.check(y, [x], "f32").ok and not np.array_equal(y, x)


def test_registration_in_process():
    reg = registry()
    assert reg.owner[("op", "gelu_tanh")] == "gelu_tanh"
    assert reg.owner[("impl", "gelu_tanh@numpy")] == "gelu_tanh"
    row = {p.name: p for p in reg.plugins()}["gelu_tanh"]
    assert row.ops == ["gelu_tanh"] and row.error is None
    assert row.impls == ["gelu_tanh@numpy", "gelu_tanh@triton"]
    # no triton backend in this registry: its implementation is unused, not an error
    assert reg.unused_impls == {("triton", "gelu_tanh"): "backend 'triton' is not registered"}


def test_other_backends_leave_it_unsupported():
    """Backends without an implementation say so in supports(), available or not."""
    case = SPEC.cases("smoke")[0]
    baselines = pytest.importorskip("oprt_bench.baselines", reason="oprt-bench is not installed")
    for be in (baselines.TorchBackend(), baselines.CupyBackend()):
        sup = be.supports("gelu_tanh", "f32", case)
        assert not sup.ok and "gelu_tanh" in sup.reason
    full = Registry(get_plugin_manager())
    for name in ("nvidia", "metax", "torch", "cupy"):
        if name in full.backends:
            sup = full.get_backend(name).supports("gelu_tanh", "f32", case)
            assert not sup.ok and sup.reason, name


def _installed(dist: str) -> bool:
    try:
        metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not _installed("oprt-bench"), reason="oprt-bench is not installed")
def test_cli_sweep_numpy(tmp_path):
    """``oprt-bench --ops gelu_tanh --backends numpy --cases smoke`` through the installed entry points."""
    import csv

    out = tmp_path / "run"
    proc = subprocess.run([*OPRT_BENCH, "--ops", "gelu_tanh", "--backends", "numpy", "--baseline", "none",
                           "--cases", "smoke", "--time-budget", "0.02", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = list(csv.DictReader(next(out.rglob("*.csv")).open()))
    assert len(rows) == len(SPEC.cases("smoke")) * len(DTYPES)
    assert {r["status"] for r in rows} == {"ok"} and {r["op"] for r in rows} == {"gelu_tanh"}


# -- its C ABI and CUDA kernel --------------------------------------------------------------------------------------

def test_the_committed_c_header_is_generated_from_the_spec():
    from oprt_core import cdecl

    header = PACKAGE / "include" / "oprt_gelu_tanh.h"
    assert header.read_text(encoding="utf-8") == cdecl.header([SPEC], "OPRT_GELU_TANH_H_"), (
        "stale: python -m oprt_core.cdecl --header oprt_gelu.spec:gelu_tanh_spec > "
        "examples/oprt-gelu/include/oprt_gelu_tanh.h")
    text = header.read_text(encoding="utf-8")
    assert "const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *x);" in text
    assert "void *out, const void *x, oprt_stream_t stream);" in text
    assert "d_->common.alias.inplace[0] = 1;" in text  # out may be x: the spec's inplace


def test_the_cuda_kernel_compiles(tmp_path):
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if nvcc is None:
        pytest.skip("nvcc is not installed (the kernel compiles with it; no GPU needed)")
    obj = tmp_path / "gelu_tanh.o"
    proc = subprocess.run([nvcc, "-std=c++17", "-c", f"-I{include_dir()}", f"-I{PACKAGE / 'include'}",
                           str(PACKAGE / "csrc" / "gelu_tanh.cu"), "-o", str(obj)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    nm = shutil.which("nm")
    symbols = subprocess.run([nm, "-g", str(obj)], capture_output=True, text=True).stdout if nm else ""
    for name in ("oprt_create_gelu_tanh_descriptor", "oprt_gelu_tanh", "oprt_destroy_gelu_tanh_descriptor"):
        assert not symbols or f" T {name}\n" in symbols, name


def test_ops_has_a_function_for_the_plugin_op():
    """``oprt_core.ops.gelu_tanh`` is made from the spec, as the core ops' functions are (installed plugin)."""
    import inspect

    assert list(inspect.signature(ops.gelu_tanh).parameters) == ["x", "backend", "out"]
    x = _x("f32", 100, 5)
    np.testing.assert_array_equal(ops.gelu_tanh(x), ops.run("gelu_tanh", [x]))
