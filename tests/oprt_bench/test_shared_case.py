"""A case drawn once by the parent and mapped by every backend's worker from shared memory."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bench_helpers import run_script

from oprt_bench import execute
from oprt_bench.execute import CasePreparer, prepare_case
from oprt_bench.shared_case import SharedCase, attach
from oprt_core import operators
from oprt_core.spec import Case, TensorCase, to_float64

LAYOUTS = ("contiguous", "transposed", "step2", "offset1", "reversed", "broadcast0")
SHM = Path("/dev/shm")


def _names(desc) -> set[str]:
    """The shared-memory blocks a case description refers to."""
    arrays = [*(desc.inputs or ()), *(desc.inputs64 or ()), *([desc.reference] if desc.reference else [])]
    return {a.block.lstrip("/") for a in arrays}


def _alive(names: set[str]) -> set[str]:
    """Those of ``names`` that still exist (other processes' blocks are never looked at: tests run in parallel)."""
    return {n for n in names if (SHM / n).exists()} if SHM.is_dir() else set()


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_a_shared_case_maps_back_identical_views(layout, dtype):
    spec = operators.spec("vector_add")
    case = Case("vector_add", f"37x53-{layout}", (TensorCase((37, 53), layout), TensorCase((37, 53))))
    prepared = prepare_case(spec, case, dtype, seed=11)
    inputs, ref, error, inputs64 = prepared
    assert not error and inputs is not None
    shared = SharedCase(prepared)
    names = _names(shared.description)
    try:
        assert shared.nbytes > 0
        mapped = attach(shared.description)
        m_inputs, m_ref, m_error, m_inputs64 = mapped.prepared
        assert m_error == ""
        for orig, got in zip(inputs, m_inputs):
            assert got.dtype == orig.dtype and got.shape == orig.shape and got.strides == orig.strides
            assert np.array_equal(to_float64(got), to_float64(orig))
        assert np.array_equal(m_ref, ref) and not m_ref.flags.writeable
        assert all(np.array_equal(a, b) and not a.flags.writeable for a, b in zip(m_inputs64, inputs64))
        del m_inputs, m_ref, m_inputs64
        mapped.close()
    finally:
        shared.close()
    assert not _alive(names), "a shared-memory block outlived the case"


def test_the_preparer_frees_its_case():
    spec = operators.spec("relu")
    prep = CasePreparer(spec, spec.custom_case((1000,)), "f32", seed=3)
    desc = prep.shared()
    assert prep.shared() is desc  # made once per case
    names = _names(desc)
    assert len(names) == 3  # input, reference, float64 input
    if SHM.is_dir():
        assert _alive(names) == names
    prep.release()
    assert not _alive(names) and prep.value is None


def test_two_workers_share_the_case_and_measure_what_a_lone_worker_does(tmp_path, monkeypatch):
    """numpy beside the faulty test backend (numpy again, without a plan): the parent draws each case once;
    each numpy row's error equals the one of a run where numpy's worker drew the case itself."""
    both, alone = tmp_path / "both", tmp_path / "alone"
    common = ["--ops", "softmax,vector_add", "--cases", "smoke", "--mode", "test", "--baseline", "none"]
    env_plugins = {"OPRT_PLUGINS": "numpy,faulty", "OPRT_FAULTY_PLAN": ""}
    from bench_helpers import isolated_env

    proc = run_script(*common, "--backends", "numpy,faulty", "--out", str(both), env=isolated_env(**env_plugins))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run_script(*common, "--backends", "numpy", "--out", str(alone))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows_both = json.loads((both / "results.json").read_text())["rows"]
    rows_alone = json.loads((alone / "results.json").read_text())["rows"]
    key = lambda r: (r["op"], r["case"], r["dtype"])  # noqa: E731
    errors_alone = {key(r): r["max_abs_err"] for r in rows_alone}
    numpy_both = [r for r in rows_both if r["backend"] == "numpy"]
    assert numpy_both and all(r["status"] == "ok" for r in rows_both)
    assert {key(r): r["max_abs_err"] for r in numpy_both} == errors_alone
    faulty = {key(r): r["max_abs_err"] for r in rows_both if r["backend"] == "faulty"}
    assert faulty == errors_alone  # the same inputs reached the second worker


def test_the_parent_shares_only_when_several_workers_run_the_case(monkeypatch):
    calls: list[int] = []
    real = execute.CasePreparer.shared

    def counting(self):
        calls.append(1)
        return real(self)

    monkeypatch.setattr(execute.CasePreparer, "shared", counting)
    from oprt_bench.sweep import Runners, SweepOptions, make_plan, run_sweep
    from oprt_core import plugins

    # the installed plugins (numpy, and faulty: numpy again without a plan), so both run in workers
    monkeypatch.setenv("OPRT_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("OPRT_PLUGINS", "numpy,faulty")
    monkeypatch.delenv("OPRT_FAULTY_PLAN", raising=False)
    plugins.get_registry.cache_clear()
    try:
        for backends, expect_shared in (("numpy", False), ("numpy,faulty", True)):
            calls.clear()
            plan = make_plan(plugins.get_registry(), SweepOptions(ops="relu", backends=backends, baseline="none",
                                                                  dtypes="f32", cases="smoke", mode="test"))
            assert set(plan.sources) == set(backends.split(","))
            rows: list = []
            with Runners(plan) as runners:
                run_sweep(plan, rows.append, runners=runners)
            assert rows and all(r.status == "ok" for r in rows)
            assert bool(calls) is expect_shared
    finally:
        plugins.get_registry.cache_clear()
