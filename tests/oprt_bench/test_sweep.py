"""Planning (validation) and running a sweep in-process, with test-double backends."""

from __future__ import annotations

import pytest
from bench_helpers import FlakyBackend, UnavailableBackend, WrongBackend, make_registry

from oprt_bench.sweep import SweepOptions, case_seed, make_plan, run_sweep
from oprt_core import OprtError


@pytest.fixture
def doubles_registry():
    """numpy, an unavailable backend, one that computes relu wrong and raises in copy, one whose copy turns wrong
    after its first call."""
    return make_registry(UnavailableBackend(), WrongBackend(wrong="relu", broken="copy"), FlakyBackend("copy"))


def _rows(registry, **kw):
    rows = []
    kw.setdefault("time_budget_s", 0.005)
    kw.setdefault("cases", "smoke")
    run_sweep(make_plan(registry, SweepOptions(**kw)), rows.append)
    return rows


def test_case_seed_is_stable_and_distinct():
    assert case_seed(0, "copy", "1000", "f32") == case_seed(0, "copy", "1000", "f32")
    seeds = {case_seed(s, op, c, d)
             for s in (0, 1) for op in ("copy", "relu") for c in ("a", "b") for d in ("f32", "f16")}
    assert len(seeds) == 16


def test_rows_do_not_depend_on_sweep_order(registry):
    a = _rows(registry, ops="copy,softmax", dtypes="f16", mode="test")
    b = _rows(registry, ops="softmax,copy", dtypes="bf16,f16", mode="test")
    key = lambda r: (r["op"], r["case"], r["dtype"])  # noqa: E731
    got = {key(r): (r["seed"], r["max_abs_err"], r["max_rel_err"]) for r in b}
    for r in a:
        assert got[key(r)] == (r["seed"], r["max_abs_err"], r["max_rel_err"])


def test_modes(registry):
    test = _rows(registry, ops="relu", dtypes="f32", mode="test")
    assert all(r["status"] == "ok" and r.get("median_ms") is None and r["timing"] == "" for r in test)
    bench = _rows(registry, ops="relu", dtypes="f32", mode="bench", cold=False)
    assert all(r["median_ms"] > 0 and r["samples"] >= 5 and r["timing"] == "warm" for r in bench)
    row = bench[0]
    assert row["gbps"] == pytest.approx(row["bytes"] / (row["median_ms"] * 1e6))
    assert row["baseline"] == "numpy" and row["speedup"] == 1.0


def test_statuses_from_test_doubles(doubles_registry):
    rows = _rows(doubles_registry, ops="copy,relu", backends="numpy,wrong,flaky", dtypes="f32")
    by = {(r["op"], r["case"], r["backend"]): r for r in rows}
    assert [r["backend"] for r in rows[:3]] == ["numpy", "wrong", "flaky"]  # the baseline first
    copy_wrong = by[("copy", "1000", "wrong")]
    assert copy_wrong["status"] == "error" and "kernel launch failed" in copy_wrong["message"]
    relu_wrong = by[("relu", "1000", "wrong")]
    assert relu_wrong["status"] == "failed" and "outside budget" in relu_wrong["message"]
    assert relu_wrong["max_abs_err"] >= 1
    flaky = by[("copy", "1000", "flaky")]
    assert flaky["status"] == "failed" and flaky["message"].startswith("after timing:")
    assert flaky["median_ms"] > 0  # the timing stays in the row
    ok = by[("relu", "1000", "flaky")]
    assert ok["status"] == "ok" and ok["speedup"] > 0 and ok["flavour"] == "numpy-" + ok["flavour"].split("-", 1)[1]


def test_unsupported_dtype_and_backend_reason(registry):
    from oprt_core.numpy_backend import NumpyBackend
    from oprt_core.spec import OpSpec

    class NoF16(NumpyBackend):
        name = "nof16"

        def supports(self, op, dtype, case=None):
            from oprt_core import Support

            return Support(dtype != "f16", "f16 not built")

    reg = make_registry(NoF16())
    rows = _rows(reg, ops="copy", backends="nof16", dtypes="f32,f16", baseline="none", mode="test")
    assert {r["dtype"]: r["status"] for r in rows} == {"f32": "ok", "f16": "unsupported"}
    assert any(r.get("message") == "f16 not built" for r in rows)
    assert all(r["baseline"] == "" for r in rows)
    assert isinstance(reg.get_op("copy"), OpSpec)


@pytest.mark.parametrize(("kw", "fragment"), [
    ({"ops": "nope"}, "unknown op 'nope'; valid choices: add_rms_norm, all, copy"),
    ({"backends": "nope"}, "unknown backend 'nope'; valid choices: all, ghost, numpy"),
    ({"backends": "ghost"}, "backend 'ghost' is unavailable: no device"),
    ({"dtypes": "f64"}, "unknown dtype 'f64'; valid choices: all, bf16, e4m3, f16, f32"),
    ({"cases": "huge"}, "unknown case set 'huge'; valid choices: default, edge, large, models, smoke"),
    ({"shapes": ["12by4"]}, "malformed shape '12by4'"),
    ({"shapes": ["scalar"], "ops": "softmax"}, "--shape scalar does not fit op softmax"),
    ({"formats": "csv,pdf"}, "unknown format 'pdf'; valid choices: csv, html, json"),
    ({"baseline": "ghost"}, "baseline backend 'ghost' is unavailable"),
    ({"baseline": "torch"}, "unknown baseline backend 'torch'; valid choices: ghost, none, numpy"),
    ({"time_budget_s": -1.0}, "--time-budget must be a positive number"),
])
def test_plan_rejects_user_mistakes(kw, fragment):
    from bench_helpers import UnavailableBackend

    with pytest.raises(OprtError) as info:
        make_plan(make_registry(UnavailableBackend()), SweepOptions(**kw))
    assert fragment in str(info.value)


def test_all_backends_skips_unavailable_and_adds_baseline(doubles_registry):
    plan = make_plan(doubles_registry, SweepOptions(backends="all"))
    assert "ghost" in plan.skipped_backends and plan.backends[0].name == "numpy"
    plan = make_plan(doubles_registry, SweepOptions(backends="wrong"))
    assert [b.name for b in plan.backends] == ["numpy", "wrong"]
    # before calibration: no measured peak (pct_of_peak empty), the driver's spec peak for pct_of_spec
    assert plan.backends[1].peak.gbps is None and plan.backends[1].spec.gbps == 100.0


def test_custom_shapes_replace_the_case_set(registry):
    plan = make_plan(registry, SweepOptions(ops="copy,reduce_sum", shapes=["64x32", "100"]))
    assert [c.name for c in plan.cases["copy"]] == ["64x32", "100"]
    assert [c.name for c in plan.cases["reduce_sum"]] == ["64x32-axis-1", "100-axis-1"]


def test_max_rel_err_is_normwise_not_inflated_by_near_zero_references(registry):
    """A --mode test row's max_rel_err is max |out - ref| / max |ref|: an output element whose reference is near 0
    (a dot product that cancels) does not blow it up, and the budget still decides the status."""
    import numpy as np

    from oprt_core import operators

    matmul = next(s for s in operators.specs("compute") if s.name == "matmul")
    a = np.array([[1.0, 1.0]], np.float32)
    b = np.array([[1.0, 3.0], [-1.0 + 2.0**-23, 1.0]], np.float32)  # references 2^-23 and 4
    out = np.array([[2.0**-23 + 5e-7, 4.0]], np.float32)  # 5e-7 off where the reference is ~0: within matmul's atol
    check = matmul.check(out, [a, b], "f32")
    assert check.ok and check.max_abs_err == pytest.approx(5e-7, rel=1e-3)
    assert check.max_rel_err == pytest.approx(check.max_abs_err / 4)  # the old |err| / |ref| was ~4.2
    # the same in a sweep: random signed matmul outputs come near 0, numpy's f32 rounding stays ~eps
    rows = _rows(registry, ops="matmul", dtypes="f32", mode="test", backends="numpy", baseline="none")
    ok = [r for r in rows if r["status"] == "ok"]
    assert ok and all(r["max_rel_err"] < 16 * 2.0**-23 for r in ok), [(r["case"], r["max_rel_err"]) for r in ok]
