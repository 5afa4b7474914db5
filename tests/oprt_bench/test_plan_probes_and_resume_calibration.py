"""Planning probes only the backends a run uses; --resume keeps the resumed run's calibration."""

from __future__ import annotations

import csv
import json

import pytest
from bench_helpers import make_registry
from test_cli import invoke

from oprt_bench.sweep import SweepOptions, make_plan
from oprt_core import Availability
from oprt_core.numpy_backend import NumpyBackend


class ProbedBackend(NumpyBackend):
    """Counts its availability checks (a hung plugin would cost the whole --availability-timeout)."""

    name = "probed"
    calls = 0

    def availability(self) -> Availability:
        type(self).calls += 1
        return super().availability()


def test_only_wanted_backends_and_baseline_are_probed():
    ProbedBackend.calls = 0
    registry = make_registry(ProbedBackend())
    plan = make_plan(registry, SweepOptions(backends="numpy", ops="relu", cases="smoke", isolation="none"))
    assert [e.name for e in plan.backends] == ["numpy"]
    assert ProbedBackend.calls == 0
    make_plan(registry, SweepOptions(backends="numpy", baseline="probed", ops="relu", cases="smoke",
                                     isolation="none"))
    assert ProbedBackend.calls == 1
    plan = make_plan(registry, SweepOptions(backends="all", ops="relu", cases="smoke", isolation="none"))
    assert {e.name for e in plan.backends} == {"numpy", "probed"}


def test_resume_keeps_the_calibration_of_the_resumed_run(registry, tmp_path):
    out = tmp_path / "run"
    r = invoke(registry, "--ops", "relu", "--dtypes", "f32,f16", "--cases", "smoke", "--time-budget", "0.005",
               "--format", "csv", "--out", str(out), "-q", calibrate=True)
    assert r.exit_code == 0, r.output
    meta = json.loads((out / "run.json").read_text())
    marked = dict(meta["backends"]["numpy"]["calibration"], measured_peak_gbps=12345.0)
    meta["backends"]["numpy"]["calibration"] = marked
    meta["backends"]["numpy"]["peak"] = {"gbps": 12345.0, "source": "measured"}
    lines = (out / "results.csv").read_text().splitlines(keepends=True)
    (out / "results.csv").write_text("".join(lines[:2]))  # one row kept: the other is measured again
    meta.update(status="running", finished_utc=None)
    (out / "run.json").write_text(json.dumps(meta))
    r = invoke(registry, "--resume", str(out), "--calibrate")
    assert r.exit_code == 0, r.output
    after = json.loads((out / "run.json").read_text())
    assert after["backends"]["numpy"]["calibration"] == marked
    assert after["backends"]["numpy"]["peak"] == {"gbps": 12345.0, "source": "measured"}
    assert after["backends"]["numpy"]["timer"] == meta["backends"]["numpy"]["timer"]
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == 6
    last = rows[-1]  # measured by the resumed run: against the kept peak
    assert float(last["pct_of_peak"]) == pytest.approx(100 * float(last["gbps"]) / 12345.0)
