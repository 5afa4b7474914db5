"""A multi-output op (add_rms_norm: out and h) through the bench's row protocol: both outputs allocated, poisoned,
checked against their own budgets, one row per case with the op's bytes; a backend that leaves one output wrong
gets a failed row naming that output."""

from __future__ import annotations

import numpy as np

from oprt_bench.model import SweepOptions
from oprt_bench.sweep import make_plan, run_sweep
from oprt_core import Registry, get_plugin_manager, hookimpl, numpy_plugin
from oprt_core.numpy_backend import NumpyBackend
from oprt_core.operators.add_rms_norm import SPEC as add_rms_norm_spec


def _h_without_residual(inputs, outs, params) -> None:
    """out right, h = x (the residual dropped)."""
    x, r, w = (a.astype(np.float32) for a in inputs)
    h = x + r
    y = h / np.sqrt(np.mean(h * h, axis=-1, keepdims=True) + np.float32(params["eps"])) * w
    np.copyto(outs[0], y.astype(outs[0].dtype))
    np.copyto(outs[1], inputs[0])


class _Half(NumpyBackend):
    name = "half"

    def add_op(self, spec, impl) -> None:
        super().add_op(spec, _h_without_residual if spec.name == "add_rms_norm" else impl)


class _Plugin:
    @hookimpl
    def oprt_register_backends(self, register) -> None:
        register(_Half())


def _rows(backends: str, mode: str) -> list[dict]:
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(numpy_plugin, "numpy", "oprt-core")
    pm.register_plugin(_Plugin(), "half")
    plan = make_plan(Registry(pm), SweepOptions(ops="add_rms_norm", backends=backends, cases="smoke", mode=mode,
                                                dtypes="f32,bf16", isolation="none", time_budget_s=0.01,
                                                calibrate=False))
    rows: list[dict] = []
    run_sweep(plan, rows.append)
    return rows


def test_rows_of_both_outputs_checked_and_timed():
    rows = _rows("numpy", "all")
    cases = add_rms_norm_spec.cases("smoke")
    assert len(rows) == len(cases) * 2  # one row per case and dtype, as for one output
    for r in rows:
        assert r["status"] == "ok", r
        case = next(c for c in cases if c.name == r["case"])
        assert r["bytes"] == add_rms_norm_spec.bytes_moved(case, r["dtype"]) > 0
        assert r["median_ms"] > 0 and 0 < r["max_abs_err"] < 1e-2


def test_a_wrong_second_output_fails_its_row_by_name():
    rows = [r for r in _rows("half", "test") if r["backend"] == "half"]  # (numpy's rows: the baseline's)
    assert len(rows) == len(add_rms_norm_spec.cases("smoke")) * 2
    assert all(r["status"] == "failed" for r in rows)
    assert all(r["message"].startswith("h: ") for r in rows), [r["message"] for r in rows]
