"""``oprt-bench table`` and ``oprt-bench report`` on runs whose files do not hold what run.json says: a results.csv
cut mid-line or that lost its last rows, a run that did not finish. Both say what is damaged (a warning line each,
and the report at its top and as the run's status), leave the rows of damaged lines out, and ``table`` exits 1.
And rows listed in plan order whatever the order they were written in."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from bench_helpers import make_registry
from click.testing import CliRunner

from oprt_bench.cli import cli

SWEEP = ["--no-calibrate", "--ops", "copy,relu", "--backends", "numpy", "--dtypes", "f32,f16", "--cases", "smoke",
         "--time-budget", "0.005", "-q"]


def invoke(*args: str):
    return CliRunner(env={"COLUMNS": "200"}).invoke(cli, list(args), obj={"registry": make_registry()})


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """A complete run of 10 rows: copy and relu smoke cases, f32 and f16, on numpy."""
    out = tmp_path_factory.mktemp("damaged") / "whole"
    r = invoke(*SWEEP, "--out", str(out))
    assert r.exit_code == 0, r.output
    return out


def _copy(whole, tmp_path, keep_lines: int, cut: int | None = None):
    """The run with results.csv cut to its first ``keep_lines`` lines (the header is one) and, with ``cut``, the
    first ``cut`` characters of the next line after them, unterminated (a write cut mid-line)."""
    run = tmp_path / "run"
    shutil.copytree(whole, run)
    lines = (run / "results.csv").read_text().splitlines(keepends=True)
    (run / "results.csv").write_text("".join(lines[:keep_lines]) + (lines[keep_lines][:cut] if cut else ""))
    return run, lines


def _key(line: str) -> str:
    cells = line.split(",")
    return f"{cells[0]} {cells[1]} {cells[3]} {cells[5]}"  # op, case, dtype, backend


def test_whole_run_is_not_damaged(whole, tmp_path):
    r = invoke("table", str(whole), "--format", "markdown")
    assert r.exit_code == 0 and "warning" not in r.output, r.output
    r = invoke("report", str(whole), "--out", str(tmp_path / "r.html"))
    assert r.exit_code == 0 and "warning" not in r.output, r.output
    html = (tmp_path / "r.html").read_text()
    assert "class='damaged'" not in html and "<dt>status</dt><dd>complete</dd>" in html


def test_table_names_a_line_cut_mid_row_and_leaves_its_row_out(whole, tmp_path):
    # the 8th row cut just after its status cell, the rest lost: as read back that row says ok
    run, lines = _copy(whole, tmp_path, 8)
    cut_line = lines[8]
    (run / "results.csv").write_text("".join(lines[:8]) + cut_line[:cut_line.index(",ok,") + 4])
    r = invoke("table", str(run), "--format", "markdown")
    assert r.exit_code == 1, r.output
    warnings = [line for line in r.stderr.splitlines() if line.startswith("oprt-bench: warning: ")]
    assert any(f"results.csv line 9 ({_key(cut_line)}): cut:" in w for w in warnings), r.stderr
    # the rows after it are missing too: named
    missing = [_key(line) for line in lines[9:]]
    assert any(f"{len(missing)} row(s) of run.json's plan missing" in w and all(k in w for k in missing)
               for w in warnings), r.stderr
    # the cut row is not shown as ok: its (case, dtype) line is not in its op's table
    op, case, dtype, _ = _key(cut_line).split()
    section = r.stdout.split(f"### {op}")[1]
    assert f"| {case} | {dtype} |" not in section
    assert "Exit 1 when the run is damaged" in " ".join(invoke("table", "--help").output.split())


def test_table_names_rows_lost_at_the_end(whole, tmp_path):
    run, lines = _copy(whole, tmp_path, 7)  # the header and 6 rows: 4 rows lost, every line whole
    r = invoke("table", str(run), "--format", "plain")
    assert r.exit_code == 1, r.output
    lost = [_key(line) for line in lines[7:]]
    warning = r.stderr.strip()
    assert warning.startswith("oprt-bench: warning: ") and "4 row(s) of run.json's plan missing" in warning
    assert all(k in warning for k in lost), warning


def test_table_names_a_run_that_did_not_finish(whole, tmp_path):
    run, _ = _copy(whole, tmp_path, 11)  # every row
    meta = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps(meta | {"status": "interrupted (SIGTERM)"}))
    r = invoke("table", str(run), "--format", "plain")
    assert r.exit_code == 1
    assert "did not finish: run.json status 'interrupted (SIGTERM)'" in r.stderr


def test_report_shows_the_damage_instead_of_status_complete(whole, tmp_path):
    run, lines = _copy(whole, tmp_path, 6, cut=30)  # line 7 cut inside its quoted params cell
    r = invoke("report", str(run), "--out", str(tmp_path / "r.html"))
    assert r.exit_code == 0, r.output
    assert "oprt-bench: warning: " in r.stderr and "results.csv line 7" in r.stderr
    html = (tmp_path / "r.html").read_text()
    box = re.search(r"<div class='damaged' id='damage'>(.*?)</div>", html, re.S)
    assert box and html.index("id='damage'") < html.index("<h2>Environment</h2>")
    assert "results.csv line 7" in box.group(1) and "row(s) of run.json&#x27;s plan missing" in box.group(1)
    status = re.search(r"<dt>status</dt><dd class='damaged'>([^<]*)</dd>", html)
    assert status and status.group(1).startswith("DAMAGED: ") and "(run.json status: complete)" in status.group(1)
    assert "<dt>status</dt><dd>complete</dd>" not in html


def test_tables_list_rows_in_plan_order_whatever_the_order_written(whole, tmp_path, monkeypatch):
    """A --cluster run writes rows as they complete: the table and the report list them as planned."""
    planned = invoke("table", str(whole), "--format", "csv").stdout
    run, lines = _copy(whole, tmp_path, 11)
    (run / "results.csv").write_text(lines[0] + "".join(reversed(lines[1:])))  # as if completed in reverse
    r = invoke("table", str(run), "--format", "csv")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1:] and [ln.split(",")[:3] for ln in r.stdout.splitlines()] == [
        ln.split(",")[:3] for ln in planned.splitlines()]
    assert [ln.split(",")[1:3] for ln in planned.splitlines()[1:5]] == [
        ["1000", "f32"], ["1000", "f16"], ["33x65-transposed", "f32"], ["33x65-transposed", "f16"]]
    r = invoke("report", str(run), "--out", str(tmp_path / "r.html"))
    html = (tmp_path / "r.html").read_text()
    copy = html.split("data-op='copy'>")[1].split("</table>")[0]
    cells = re.findall(r"<tr><td class='l'>([^<]*)</td><td class='l'>[^<]*</td><td class='l'>([^<]*)</td>", copy)
    assert cells == [("1000", "f32"), ("1000", "f16"), ("33x65-transposed", "f32"), ("33x65-transposed", "f16")]
    # the sweep's own table: rows emitted in reverse (as a cluster may finish them) print as planned
    import oprt_bench.run as run_module

    real = run_module.run_sweep

    def reversed_sweep(plan, emit, **kw):
        rows = []
        real(plan, rows.append, **kw)
        for row in reversed(rows):
            emit(row)

    monkeypatch.setattr(run_module, "run_sweep", reversed_sweep)
    r = invoke(*SWEEP[:-1], "--out", str(tmp_path / "sweep"), "--table", "csv")
    assert r.exit_code == 0, r.output
    assert [ln.split(",")[:3] for ln in r.stdout.splitlines()] == [ln.split(",")[:3] for ln in planned.splitlines()]
