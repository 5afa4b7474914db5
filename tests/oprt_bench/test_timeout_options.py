"""Huge but finite timeouts work (waits are capped); infinite, NaN or non-positive ones are usage errors."""

from __future__ import annotations

import csv

import pytest
from test_cli import invoke, one_error_line

from oprt_bench.sweep import call_with_timeout

SMALL = ("--ops", "relu", "--dtypes", "f32", "--cases", "smoke", "--format", "csv", "-q")


def test_call_with_timeout_accepts_a_huge_timeout():
    assert call_with_timeout(lambda: 42, 1e308) == 42


@pytest.mark.parametrize("args", [("--case-timeout", "1e7"), ("--time-budget", "1e308", "--warm")])
def test_huge_finite_timeouts_run(registry, tmp_path, args):
    out = tmp_path / "run"
    r = invoke(registry, *SMALL, "--out", str(out), *args)
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert rows and {row["status"] for row in rows} == {"ok"}, rows


@pytest.mark.parametrize("args", [
    ("--availability-timeout", "inf"), ("--availability-timeout", "nan"), ("--availability-timeout", "0"),
    ("--case-timeout", "inf"), ("--case-timeout", "-1"), ("--time-budget", "nan"),
    ("backends", "--availability-timeout", "-5"), ("backends", "--availability-timeout", "inf"),
])
def test_non_finite_or_non_positive_timeouts_are_usage_errors(registry, tmp_path, args):
    r = invoke(registry, *SMALL, "--out", str(tmp_path / "run"), *args) if args[0] != "backends" else \
        invoke(registry, *args)
    assert r.exit_code == 2, r.output
    assert "must be a positive" in one_error_line(r)
    assert not (tmp_path / "run").exists()
