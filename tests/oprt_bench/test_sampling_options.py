"""--target-ci and --min-samples: how precisely a row is sampled."""

from __future__ import annotations

import csv
import json

import pytest
from test_cli import invoke, one_error_line
from test_stats_timing import FakeDevice

from oprt_bench.timing import TimingConfig, measure


def _rows(out):
    return list(csv.DictReader((out / "results.csv").open()))


def test_min_samples_and_full_budget_reach_the_rows_and_run_json(registry, tmp_path):
    out = tmp_path / "run"
    r = invoke(registry, "--ops", "copy", "--dtypes", "f32", "--cases", "smoke", "--time-budget", "0.01",
               "--target-ci", "0", "--min-samples", "40", "--out", str(out))
    assert r.exit_code == 0, r.output
    rows = _rows(out)
    assert rows and all(int(row["samples"]) >= 40 for row in rows)
    assert {row["stopped_by"] for row in rows} <= {"budget", "max_samples"}  # never "converged" with 0
    timing = json.loads((out / "run.json").read_text())["plan"]["timing"]
    assert timing["target_rel_ci"] == 0.0 and timing["min_samples"] == 40


def test_defaults_are_the_documented_ones(registry, tmp_path):
    out = tmp_path / "run"
    assert invoke(registry, "--ops", "copy", "--dtypes", "f32", "--cases", "smoke", "--time-budget", "0.01",
                  "--out", str(out)).exit_code == 0
    timing = json.loads((out / "run.json").read_text())["plan"]["timing"]
    assert timing["target_rel_ci"] == TimingConfig.target_rel_ci == 0.01
    assert timing["min_samples"] == TimingConfig.min_samples == 5


@pytest.mark.parametrize("args, words", [
    (("--target-ci", "1"), "--target-ci must be a fraction"),
    (("--target-ci", "-0.1"), "--target-ci must be a fraction"),
    (("--target-ci", "nan"), "--target-ci must be a fraction"),
    (("--min-samples", "0"), "--min-samples must be a whole number from 1 to 1000"),
    (("--min-samples", "1001"), "--min-samples must be a whole number from 1 to 1000"),
])
def test_bad_values_are_one_line_errors_and_write_nothing(registry, tmp_path, args, words):
    out = tmp_path / "run"
    r = invoke(registry, "--ops", "copy", "--cases", "smoke", *args, "--out", str(out))
    assert r.exit_code == 2
    assert words in one_error_line(r)
    assert not out.exists()


def test_resume_refuses_another_target_ci(registry, tmp_path):
    out = tmp_path / "run"
    assert invoke(registry, "--ops", "copy", "--dtypes", "f32", "--cases", "smoke", "--time-budget", "0.01",
                  "--out", str(out)).exit_code == 0
    r = invoke(registry, "--resume", str(out), "--target-ci", "0.001")
    assert r.exit_code == 2
    assert "target_rel_ci" in one_error_line(r)


def test_zero_target_never_converges_even_on_identical_samples():
    dev = FakeDevice([1.0] * 10_000)
    cfg = TimingConfig(time_budget_s=0.05, warmup_s=0.0, min_samples=5)
    assert measure(dev, dev.launch, cfg, clock=dev.clock).stopped_by == "converged"
    m = measure(dev, dev.launch, TimingConfig(time_budget_s=0.05, warmup_s=0.0, min_samples=5, target_rel_ci=0.0),
                clock=dev.clock)
    assert m.stopped_by == "budget" and len(m.samples_ms) > 5
