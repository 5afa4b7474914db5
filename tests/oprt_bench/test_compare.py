"""compare on synthetic runs: clearly faster, clearly slower, too noisy to judge, status changes, shifts."""

from __future__ import annotations

import json

import pytest
from bench_helpers import make_registry, run_script
from click.testing import CliRunner

from oprt_bench.cli import cli
from oprt_bench.compare import classify, parse_threshold
from oprt_bench.results import RowWriter


def _row(case: str, median: float, spread: float, status: str = "ok", backend: str = "nvidia") -> dict:
    return {"op": "softmax", "case": case, "shape": case, "dtype": "f32", "backend": backend, "status": status,
            "median_ms": median if status == "ok" else None, "p10_ms": median - spread if status == "ok" else None,
            "p90_ms": median + spread if status == "ok" else None, "samples": 100}


def _write_run(path, rows):
    path.mkdir()
    writer = RowWriter(path / "results.csv")
    for r in rows:
        writer.write(r)
    writer.close()
    (path / "run.json").write_text(json.dumps({"host": {"hostname": path.name}, "status": "complete"}))
    return path


@pytest.fixture
def runs(tmp_path):
    old = [_row("faster", 1.00, 0.005), _row("slower", 1.00, 0.005), _row("noisy", 1.00, 0.30),
           _row("steady", 1.00, 0.005), _row("breaks", 1.00, 0.005), _row("fixed", 0, 0, "failed"),
           _row("gone", 1.0, 0.005)]
    new = [_row("faster", 0.80, 0.005), _row("slower", 1.25, 0.005), _row("noisy", 1.20, 0.30),
           _row("steady", 1.02, 0.005), _row("breaks", 0, 0, "error"), _row("fixed", 1.0, 0.005),
           _row("added", 1.0, 0.005)]
    return _write_run(tmp_path / "old", old), _write_run(tmp_path / "new", new)


def test_classify_rule():
    ok = lambda m, s: {"status": "ok", "median_ms": m, "p10_ms": m - s, "p90_ms": m + s}  # noqa: E731
    assert classify(ok(1.0, 0.01), ok(0.8, 0.01), 0.05).verdict == "faster"
    assert classify(ok(1.0, 0.01), ok(1.2, 0.01), 0.05).verdict == "slower"
    noisy = classify(ok(1.0, 0.3), ok(1.2, 0.3), 0.05)
    assert noisy.verdict == "noisy" and noisy.noisy and noisy.ratio == pytest.approx(1.2)
    assert noisy.min_change > 1.0  # bounds of +-90%: only a change of more than 2x would show
    # p10..p90 of +-1% stretched 3x: a 5% change could hide in the bounds, a 10% one could not
    assert classify(ok(1.0, 0.01), ok(1.0, 0.01), 0.05).verdict == "noisy"
    assert classify(ok(1.0, 0.01), ok(1.0, 0.01), 0.10).verdict == "same"
    assert classify(ok(1.0, 0.001), ok(1.04, 0.001), 0.05).verdict == "same"  # separated, but under the threshold
    assert classify(ok(1.0, 0.001), ok(1.04, 0.001), 0.01).verdict == "slower"


def test_parse_threshold():
    assert parse_threshold("5%") == pytest.approx(0.05)
    assert parse_threshold("0.1") == pytest.approx(0.1)
    with pytest.raises(Exception, match="not a number"):
        parse_threshold("five")


def test_compare_table_and_exit_codes(runs):
    old, new = runs
    runner = CliRunner()
    r = runner.invoke(cli, ["compare", str(old), str(new), "--json"], obj={"registry": make_registry()})
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    verdicts = {row["case"]: row["verdict"] for row in doc["rows"]}
    assert verdicts == {"faster": "faster", "slower": "slower", "noisy": "noisy", "steady": "same", "breaks": "broken",
                        "fixed": "fixed", "gone": "removed", "added": "added"}
    assert doc["regressions"] == 2
    r = runner.invoke(cli, ["compare", str(old), str(new), "--fail-on-regression"], env={"COLUMNS": "250"})
    assert r.exit_code == 1
    assert "slower" in r.stdout and "faster" in r.stdout and "noisy ~ (needs" in r.stdout
    assert "2 regression(s)" in r.stdout and "1 too noisy for the threshold" in r.stdout
    assert "steady" not in r.stdout  # unchanged rows only with --all
    r = runner.invoke(cli, ["compare", str(old), str(old), "--fail-on-regression", "--all"])
    assert r.exit_code == 1 and "cannot judge (noisy): 1 row(s) too noisy" in r.stdout  # the noisy row
    r = runner.invoke(cli, ["compare", str(old), str(old), "--fail-on-regression", "--all", "--allow-noisy"])
    assert r.exit_code == 0 and "steady" in r.stdout


def test_compare_usage_errors_subprocess(runs, tmp_path):
    old, new = runs
    p = run_script("compare", str(old), str(tmp_path / "nowhere"))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "is not a run" in p.stderr
    p = run_script("compare", str(old), str(new), "--threshold", "lots")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--threshold 'lots'" in p.stderr
    p = run_script("compare", str(old), str(new), "--threshold", "30%", "--fail-on-regression")
    assert p.returncode == 1  # 'breaks' is a regression at any threshold


def test_compare_warns_when_shared_rows_were_timed_differently(tmp_path):
    old = [dict(_row("a", 1.0, 0.005), timing="cold"), dict(_row("b", 1.0, 0.005), timing="cold")]
    new = [dict(_row("a", 0.9, 0.005), timing="cold-clean"), dict(_row("b", 1.0, 0.005), timing="cold")]
    o, n = _write_run(tmp_path / "old", old), _write_run(tmp_path / "new", new)
    r = CliRunner().invoke(cli, ["compare", str(o), str(n)])
    assert r.exit_code == 0, r.output
    assert "warning: 1 shared row(s) were timed differently (cold -> cold-clean)" in r.stderr
    r = CliRunner().invoke(cli, ["compare", str(o), str(n), "--json"])
    assert "cold -> cold-clean" in json.loads(r.stdout)["warning"]
    r = CliRunner().invoke(cli, ["compare", str(o), str(o)])
    assert "warning" not in r.stderr


def test_compare_shows_rows_that_took_another_kernel(tmp_path):
    """kernel cells (results schema 3) that both name a kernel and differ: shown whatever the verdict, in a kernel
    column and the JSON; an empty cell (schema 2, a backend that cannot say) or a failed lookup is no change."""
    old = [dict(_row("path", 1.0, 0.005), kernel="reduce_cols_band+reduce_cols_band_finish"),
           dict(_row("same-path", 1.0, 0.005), kernel="reduce_rows_trips"),
           dict(_row("unnamed", 1.0, 0.005), kernel=""),
           dict(_row("unasked", 1.0, 0.005), kernel="unknown (RuntimeError: no names)")]
    new = [dict(_row("path", 1.01, 0.005), kernel="reduce_cols_deep+reduce_cols_finish"),
           dict(_row("same-path", 1.0, 0.005), kernel="reduce_rows_trips"),
           dict(_row("unnamed", 1.0, 0.005), kernel="reduce_rows_vec"),
           dict(_row("unasked", 1.0, 0.005), kernel="reduce_rows_vec")]
    o, n = _write_run(tmp_path / "old", old), _write_run(tmp_path / "new", new)
    r = CliRunner().invoke(cli, ["compare", str(o), str(n), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    changed = {row["case"]: row["kernel_changed"] for row in doc["rows"]}
    assert changed == {"path": True, "same-path": False, "unnamed": False, "unasked": False}
    assert doc["kernel_changes"] == 1
    row = next(row for row in doc["rows"] if row["case"] == "path")
    assert row["verdict"] == "same" and row["new_kernel"] == "reduce_cols_deep+reduce_cols_finish"
    r = CliRunner().invoke(cli, ["compare", str(o), str(n)], env={"COLUMNS": "250"})
    assert r.exit_code == 0, r.output
    assert "reduce_cols_band+reduce_cols_band_finish -> reduce_cols_deep+reduce_cols_finish" in r.stdout
    assert "same-path" not in r.stdout and "unnamed" not in r.stdout and "unasked" not in r.stdout
    assert "1 took another kernel" in r.stdout
    r = CliRunner().invoke(cli, ["compare", str(o), str(o)], env={"COLUMNS": "250"})
    header = next(line for line in r.stdout.splitlines() if "verdict" in line)
    assert "kernel" not in header and "took another kernel" not in r.stdout  # no change: no column
