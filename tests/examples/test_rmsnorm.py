"""examples/oprt-rmsnorm: the rms_norm_example spec, its numpy implementation, its registration and the sweep.

Needs the distribution oprt-rmsnorm (``pip install ./examples/oprt-rmsnorm``; tox env ``rmsnorm``).
The ``large`` case set runs only with ``OPRT_TEST_LARGE=1``.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import zlib
from importlib import metadata

import numpy as np
import pytest

pytest.importorskip("oprt_rmsnorm", reason="oprt-rmsnorm is not installed: pip install ./examples/oprt-rmsnorm")

from oprt_rmsnorm import plugin as rms_plugin  # noqa: E402
from oprt_rmsnorm import rms_norm_numpy, rms_norm_reference, rms_norm_spec  # noqa: E402

from oprt_core import DTYPES, InvalidArgumentError, Registry, get_plugin_manager, numpy_plugin, ops  # noqa: E402
from oprt_core.spec import REQUIRED_CASE_SETS as CASE_SETS  # noqa: E402
from oprt_core.spec import Case, TensorCase  # noqa: E402

OPRT_BENCH = [sys.executable, "-c", "import sys; from oprt_bench.cli import main; sys.argv[0] = 'oprt-bench'; main()"]
RUN_LARGE = os.environ.get("OPRT_TEST_LARGE") == "1"
SPEC = rms_norm_spec
EPS32 = DTYPES["f32"].eps


def seed_of(*parts: object) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


def registry(*extra) -> Registry:
    """numpy + rms_norm_example registered in-process (no entry points), plus ``extra`` (plugin, name) pairs."""
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(numpy_plugin, "numpy", "oprt-core")
    pm.register_plugin(rms_plugin, "rms_norm_example", "oprt-rmsnorm")
    for plugin, name in extra:
        pm.register_plugin(plugin, name)
    return Registry(pm)


# -- the reference against an independent formulation ------------------------------------------------------------

def fsum_rms_norm(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    """Row by row with math.fsum (exactly rounded sums) and Python floats."""
    rows = x.reshape(-1, x.shape[-1]) if x.size else x.reshape(0, x.shape[-1])
    out = np.empty(rows.shape, np.float64)
    for i, row in enumerate(rows):
        vals = [float(v) for v in row]
        inv = 1.0 / math.sqrt(math.fsum(v * v for v in vals) / len(vals) + eps)
        out[i] = [v * inv * float(wj) for v, wj in zip(vals, w)]
    return out.reshape(x.shape)


@pytest.mark.parametrize("shape", [(1,), (7,), (3, 1), (5, 33), (2, 3, 129), (4, 1000)])
@pytest.mark.parametrize("eps", [1e-6, 0.1, 0.0])
def test_reference_matches_fsum(shape, eps):
    rng = np.random.default_rng(seed_of(shape, eps))
    x = rng.uniform(-2, 2, shape)
    w = rng.uniform(-1.5, 1.5, shape[-1])
    got = SPEC.reference([x, w], {"eps": eps})
    np.testing.assert_allclose(got, fsum_rms_norm(x, w, eps), rtol=1e-13, atol=0)
    np.testing.assert_allclose(rms_norm_reference(x, w, eps), got, rtol=0, atol=0)


def test_reference_properties():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (6, 50))
    ones = np.ones(50)
    y = SPEC.reference([x, ones], {"eps": 0.0})
    np.testing.assert_allclose(np.mean(y * y, axis=-1), 1.0, rtol=1e-13)  # unit RMS per row
    np.testing.assert_allclose(SPEC.reference([5 * x, ones], {"eps": 0.0}), y, rtol=1e-13)  # scale invariant
    # rows are independent, the weight scales columns
    w = rng.uniform(-1, 1, 50)
    np.testing.assert_allclose(SPEC.reference([x, w], {})[2], SPEC.reference([x[2:3], w], {})[0], rtol=0)
    np.testing.assert_allclose(SPEC.reference([x, w], {"eps": 0.0}), y * w, rtol=1e-13)
    assert SPEC.reference([np.empty((3, 0)), np.empty(0)], {}).shape == (3, 0)
    assert SPEC.reference([np.empty((0, 4)), np.ones(4)], {}).shape == (0, 4)


# -- the spec's shape, param, cost and case facts ---------------------------------------------------------------

def test_spec_facts():
    assert SPEC.name == "rms_norm_example" and SPEC.input_names == ("x", "weight") and SPEC.n_inputs == 2
    assert SPEC.validate_params({}) == {"eps": 1e-6}
    assert set(SPEC.dtypes) == set(DTYPES) and set(SPEC.budgets) == set(DTYPES)
    assert set(SPEC.case_sets) == set(CASE_SETS)
    case = Case("rms_norm_example", "c", (TensorCase((64, 1000)), TensorCase((1000,))), (("eps", 1e-6),))
    for dt in DTYPES.values():
        assert SPEC.bytes_moved(case, dt) == (2 * 64 * 1000 + 1000) * dt.itemsize
    assert SPEC.flops(case) == 4 * 64 * 1000 + 3 * 64
    assert SPEC.output_shape([(2, 3, 8), (8,)], {}) == (2, 3, 8)


@pytest.mark.parametrize(("shapes", "params", "text"), [
    ([(4, 8), (4,)], {}, r"weight has shape \(4,\), expected \(8,\)"),
    ([(4, 8), (4, 8)], {}, r"weight has shape \(4, 8\), expected \(8,\)"),
    ([(), (1,)], {}, "at least 1 dim"),
    ([(4, 8), (8,)], {"eps": -1.0}, "eps must be >= 0"),
    ([(4, 8), (8,)], {"eps": "1e-6"}, "must be float or int"),
    ([(4, 8), (8,)], {"epsilon": 1e-6}, "unknown param of rms_norm_example 'epsilon'"),
])
def test_spec_rejects_bad_calls(shapes, params, text):
    with pytest.raises(InvalidArgumentError, match=text):
        SPEC.output_shape(shapes, params)


def test_custom_case_from_a_shape():
    case = SPEC.custom_case((128, 4096), {"eps": 1e-5})
    assert [t.shape for t in case.inputs] == [(128, 4096), (4096,)]
    assert case.param_dict == {"eps": 1e-5}


def test_case_sets_cover_the_edges():
    edge = SPEC.cases("edge")
    layouts = {t.layout for c in edge for t in c.inputs}
    assert {"transposed", "step2", "offset1", "reversed", "broadcast0"} <= layouts
    assert any(c.inputs[0].shape[-1] == 1 for c in edge)  # rows of length 1
    assert any(c.inputs[0].shape[-1] % 2 and c.inputs[0].shape[-1] > 1000 for c in edge)  # odd widths
    assert any(0 in c.inputs[0].shape for c in edge)
    assert any(c.param_dict["eps"] != 1e-6 for c in SPEC.cases("smoke"))
    for cs in CASE_SETS:
        for c in SPEC.cases(cs):
            assert c.op == "rms_norm_example" and c.inputs[1].shape == c.inputs[0].shape[-1:]


# -- the budget is not vacuous ------------------------------------------------------------------------------------

def _inputs(dtype: str, shape=(16, 64), eps=0.1):
    case = Case("rms_norm_example", "b", (TensorCase(shape), TensorCase(shape[-1:])), (("eps", eps),))
    x, w = SPEC.make_inputs(case, dtype, np.random.default_rng(seed_of("budget", dtype, shape)))
    return x, w, eps


def _rounded(values: np.ndarray, dtype: str) -> np.ndarray:
    return values.astype(DTYPES[dtype].numpy)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_budget_accepts_a_correct_f32_result_and_rounding(dtype):
    x, w, eps = _inputs(dtype)
    ref = SPEC.reference([x, w], {"eps": eps})
    assert SPEC.check(_rounded(ref, dtype), [x, w], dtype, {"eps": eps}).ok
    out = np.empty(x.shape, x.dtype)
    rms_norm_numpy([x, w], out, {"eps": eps})
    assert SPEC.check(out, [x, w], dtype, {"eps": eps}).ok


def _wrong(kind: str, x: np.ndarray, w: np.ndarray, eps: float, dtype: str) -> np.ndarray:
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    n = x.shape[-1]
    ms = np.mean(x64 * x64, axis=-1, keepdims=True)
    if kind == "no-weight":
        y = x64 / np.sqrt(ms + eps)
    elif kind == "mean-over-n+1":
        y = x64 / np.sqrt(np.sum(x64 * x64, axis=-1, keepdims=True) / (n + 1) + eps) * w64
    elif kind == "ignores-eps":
        y = x64 / np.sqrt(ms + 1e-6) * w64
    elif kind == "layernorm":
        c = x64 - x64.mean(axis=-1, keepdims=True)
        y = c / np.sqrt(np.mean(c * c, axis=-1, keepdims=True) + eps) * w64
    elif kind == "weight-shifted":
        y = x64 / np.sqrt(ms + eps) * np.roll(w64, 1)
    elif kind == "scaled-beyond-budget":
        # a uniform relative error just outside rtol for every n up to 2^24
        y = x64 / np.sqrt(ms + eps) * w64 * (1 + 3 * DTYPES[dtype].eps + 20 * EPS32)
    else:
        raise AssertionError(kind)
    return _rounded(y, dtype) if kind != "scaled-beyond-budget" else y


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("kind", ["no-weight", "mean-over-n+1", "ignores-eps", "layernorm", "weight-shifted",
                                  "scaled-beyond-budget"])
def test_budget_rejects_wrong_results(dtype, kind):
    # short rows for the count error (1/(2(n+1)) relative) to exceed bf16's 2^-6 budget
    x, w, eps = _inputs(dtype, shape=(16, 8) if kind == "mean-over-n+1" else (16, 64))
    res = SPEC.check(_wrong(kind, x, w, eps, dtype), [x, w], dtype, {"eps": eps})
    assert not res.ok, f"{kind} in {dtype} passed the budget (max rel err {res.max_rel_err:.3g})"


def test_budget_is_tight_in_f32_at_llm_widths():
    """In f32 the budget is ~1e-6 at n = 4096: a mean over n + 1 (1.2e-4 relative) is far outside it."""
    x, w, eps = _inputs("f32", shape=(4, 4096), eps=1e-6)
    atol, rtol = SPEC.tolerance("f32", [x.astype(np.float64), w.astype(np.float64)], None, {"eps": eps})
    assert rtol < 2e-6 and atol < 1e-40
    assert not SPEC.check(_wrong("mean-over-n+1", x, w, eps, "f32"), [x, w], "f32", {"eps": eps}).ok


# -- the numpy backend, taught rms_norm_example through oprt_register_impls ---------------------------------------

def _case_params():
    for case_set in CASE_SETS:
        marks = [] if case_set != "large" or RUN_LARGE else [
            pytest.mark.skip(reason="large case set: set OPRT_TEST_LARGE=1 to run it")]
        for case in SPEC.cases(case_set):
            for dtype in SPEC.dtypes:
                yield pytest.param(case_set, case, dtype, marks=marks, id=f"{case_set}-{case.name}-{dtype}")


@pytest.fixture(scope="module")
def numpy_backend():
    return registry().get_backend("numpy")


@pytest.mark.parametrize(("case_set", "case", "dtype"), list(_case_params()))
def test_numpy_backend_every_case(numpy_backend, case_set, case, dtype):
    be = numpy_backend
    assert be.supports("rms_norm_example", dtype, case).ok
    params = SPEC.validate_params(case.param_dict, [t.shape for t in case.inputs])
    inputs = SPEC.make_inputs(case, dtype, np.random.default_rng(seed_of(case_set, case.name, dtype)))
    out = be.empty(SPEC.output_shape([x.shape for x in inputs], params), dtype)
    be.fill_nan(out)
    be.prepare("rms_norm_example", [be.to_device(x) for x in inputs], out, params)()
    res = SPEC.check(be.to_host(out), inputs, dtype, params)
    assert res.ok, f"{case_set}/{case.name}/{dtype}: {res.message}"


def test_registration_in_process():
    reg = registry()
    assert reg.owner[("op", "rms_norm_example")] == "rms_norm_example"
    assert reg.owner[("impl", "rms_norm_example@numpy")] == "rms_norm_example"
    row = {p.name: p for p in reg.plugins()}["rms_norm_example"]
    assert row.ops == ["rms_norm_example"] and row.error is None
    assert row.impls == ["rms_norm_example@numpy", "rms_norm_example@triton"]
    # no triton backend in this registry: its implementation is unused, not an error
    assert reg.unused_impls == {("triton", "rms_norm_example"): "backend 'triton' is not registered"}
    x = np.random.default_rng(0).uniform(-1, 1, (3, 8)).astype(np.float32)
    w = np.linspace(0.5, 1.5, 8, dtype=np.float32)
    got = ops.run("rms_norm_example", [x, w], {"eps": 1e-5}, backend="numpy", registry=reg)
    np.testing.assert_allclose(got, x / np.sqrt(np.mean(x * x, -1, keepdims=True) + 1e-5) * w, rtol=2e-6)


def test_other_backends_leave_rms_norm_unsupported():
    """Backends without an implementation say so in supports(), available or not."""
    reg = registry()
    assert not reg.get_backend("numpy").supports("negate", "f32").ok
    baselines = pytest.importorskip("oprt_bench.baselines", reason="oprt-bench is not installed")
    case = SPEC.cases("smoke")[0]
    for be in (baselines.TorchBackend(), baselines.CupyBackend()):
        sup = be.supports("rms_norm_example", "f32", case)
        assert not sup.ok and "rms_norm_example" in sup.reason
    full = Registry(get_plugin_manager())
    for name in ("nvidia", "metax", "torch", "cupy"):
        if name in full.backends:
            sup = full.get_backend(name).supports("rms_norm_example", "f32", case)
            assert not sup.ok and sup.reason, name


# -- the sweep ---------------------------------------------------------------------------------------------------

def test_sweep_rows_unsupported_on_an_available_backend_without_it():
    """make_plan + run_sweep as the CLI drives them: numpy ok, an available torch backend (CPU) unsupported."""
    pytest.importorskip("torch", reason="torch is not installed")
    from oprt_bench.baselines import TorchBackend
    from oprt_bench.sweep import SweepOptions, make_plan, run_sweep
    from oprt_core import hookimpl

    class TorchCpu:
        @hookimpl
        def oprt_register_backends(self, register) -> None:
            register(TorchBackend(device="cpu"))

    reg = registry((TorchCpu(), "torch-cpu"))
    assert reg.get_backend("torch-cpu").availability().ok
    plan = make_plan(reg, SweepOptions(ops="rms_norm_example", backends="numpy,torch-cpu", cases="smoke", mode="test"))
    rows: list[dict] = []
    run_sweep(plan, rows.append)
    assert len(rows) == 2 * len(SPEC.cases("smoke")) * len(DTYPES)
    by = {(r["backend"], r["status"]) for r in rows}
    assert by == {("numpy", "ok"), ("torch-cpu", "unsupported")}
    assert all("rms_norm_example" in r["message"] for r in rows if r["backend"] == "torch-cpu")


def _installed(dist: str) -> bool:
    try:
        metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not _installed("oprt-bench"), reason="oprt-bench is not installed")
def test_cli_sweep_rms_norm_numpy(tmp_path):
    """``oprt-bench --ops rms_norm_example --backends numpy --cases smoke`` through the installed entry points."""
    import csv

    out = tmp_path / "run"
    # --baseline none: where torch is available it is the default baseline, and would add its rows
    proc = subprocess.run([*OPRT_BENCH, "--ops", "rms_norm_example", "--backends", "numpy", "--baseline", "none",
                           "--cases", "smoke", "--time-budget", "0.02", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    files = list(out.rglob("*.csv"))
    assert files, proc.stdout
    rows = list(csv.DictReader(files[0].open()))
    assert len(rows) == len(SPEC.cases("smoke")) * len(DTYPES)
    assert {r["status"] for r in rows} == {"ok"} and {r["op"] for r in rows} == {"rms_norm_example"}
    # every other installed backend that is available reports rms_norm_example unsupported, never failed
    proc = subprocess.run([*OPRT_BENCH, "--ops", "rms_norm_example", "--cases", "smoke",
                           "--mode", "test", "--out", str(tmp_path / "all")], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = list(csv.DictReader(next((tmp_path / "all").rglob("*.csv")).open()))
    for r in rows:
        if r["backend"] in ("nvidia", "metax", "torch", "cupy"):
            assert r["status"] == "unsupported", r
        elif r["backend"] in ("numpy", "triton"):
            assert r["status"] == "ok", r


# -- its C ABI: the same declaration gives the prototypes a compiled backend implements ----------------------------

def test_the_committed_c_header_is_generated_from_the_spec():
    from pathlib import Path

    from oprt_core import cdecl

    header = Path(__file__).resolve().parents[2] / "examples" / "oprt-rmsnorm" / "include" / "oprt_rms_norm_example.h"
    assert header.read_text(encoding="utf-8") == cdecl.header([SPEC], "OPRT_RMS_NORM_EXAMPLE_H_"), (
        "stale: python -m oprt_core.cdecl --header oprt_rmsnorm.spec:rms_norm_spec > "
        "examples/oprt-rmsnorm/include/oprt_rms_norm_example.h")
    text = header.read_text(encoding="utf-8")
    assert "const oprt_tensor_desc_t *x,\n" in text and "const oprt_tensor_desc_t *weight, float eps);" in text
    assert "const void *x, const void *weight,\n" in text and "oprt_stream_t stream);" in text
    from oprt_core.cdecl import c_params

    assert c_params(SPEC, SPEC.validate_params({"eps": 1})) == (1.0,)


def test_ops_has_a_function_for_the_plugin_op():
    """``oprt_core.ops.rms_norm_example`` is made from the spec, as the core ops' functions are (installed plugin)."""
    import inspect

    assert list(inspect.signature(ops.rms_norm_example).parameters) == ["x", "weight", "eps", "backend", "out"]
    rng = np.random.default_rng(5)
    x, w = rng.uniform(-1, 1, (4, 33)).astype(np.float32), rng.uniform(-1, 1, 33).astype(np.float32)
    got = ops.rms_norm_example(x, w, eps=0.5)
    np.testing.assert_array_equal(got, ops.run("rms_norm_example", [x, w], {"eps": 0.5}))
    assert SPEC.check(got, [x, w], "f32", {"eps": 0.5}).ok
    assert not SPEC.check(ops.rms_norm_example(x, w), [x, w], "f32", {"eps": 0.5}).ok  # the default eps differs
