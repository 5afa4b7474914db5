"""The results table the sweep prints (and ``oprt-bench table RUN_DIR``): per op, every backend side by side, failures
first, fitted to the width; ``-q`` keeps the summary line alone; ``--table plain|markdown|csv`` alone on stdout."""

from __future__ import annotations

import csv
import io
import math

import pandas as pd
import pytest
from bench_helpers import WrongBackend, isolated_env, make_registry, run_script
from click.testing import CliRunner
from rich.console import Console

from oprt_bench.cli import cli
from oprt_bench.table import build_table, render, renderables

SWEEP = ["--no-calibrate", "--ops", "copy,relu", "--backends", "wrong", "--dtypes", "f32,f16", "--cases", "smoke",
         "--time-budget", "0.01"]


def invoke(*args: str, columns: int = 200, registry=None):
    return CliRunner(env={"COLUMNS": str(columns)}).invoke(
        cli, list(args), obj={"registry": registry or make_registry(WrongBackend(wrong="relu", broken="copy"))})


@pytest.fixture(scope="module")
def wrong_run(tmp_path_factory):
    """numpy (the baseline) and the wrong backend (relu off by one: failed; copy raises: error), as markdown."""
    out = tmp_path_factory.mktemp("table") / "run"
    r = invoke(*SWEEP, "--out", str(out), "--table", "markdown")
    assert r.exit_code == 1, r.output
    return out, r


def _rows(out):
    return list(csv.DictReader((out / "results.csv").open()))


def _op_section(text: str, op: str) -> list[str]:
    """The markdown pipe-table lines under ``### op``."""
    lines = text.splitlines()
    start = lines.index(f"### {op}")
    body = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        body.append(line)
    return body


def test_markdown_table_alone_on_stdout_failures_first(wrong_run):
    out, r = wrong_run
    text = r.stdout
    assert "rows (" not in text and "[1/" not in text  # progress and summary went to stderr
    assert "oprt-bench: 20 rows (10 ok, 6 failed, 4 error)" in r.stderr
    # the failures table comes before any op table, with each failure's message
    assert text.index("### failures and errors (10)") < text.index("### copy") < text.index("### relu")
    assert text.count("kernel launch failed: test double") == 4 and text.count("outside budget") == 6
    for op in ("copy", "relu"):
        head, sep, *body = _op_section(text, op)
        # no calibration: no % of peak; the wrong backend failed every row: its time column says so, no other
        assert head == "| case | dtype | numpy ms | numpy GB/s | wrong ms |"
        assert sep == "| --- | --- | ---: | ---: | ---: |"
        cells = [[c.strip() for c in line.strip("|").split("|")] for line in body]
        # one line per (case, dtype), in sweep order (every one fails here), the names as the op's case set has them
        swept = list(dict.fromkeys((r["case"], r["dtype"]) for r in _rows(out) if r["op"] == op))
        assert [(c[0], c[1]) for c in cells] == swept and ("33x65-transposed", "f16") in swept
        want = "error" if op == "copy" else "failed"
        assert [c[4] for c in cells] == [want] * len(swept)  # the wrong backend fails every case of both ops
        assert all(float(c[2]) > 0 and float(c[3]) > 0 for c in cells)  # numpy timed every one


def test_failing_lines_first_within_an_op(tmp_path, monkeypatch):
    """Only some cases fail (the faulty plugin's plan): those lines lead their op's table, the rest keep run order."""
    import oprt_faultyplugin as faulty

    monkeypatch.setenv("OPRT_FAULTY_PLAN", "relu/1000-leaky:wrong")
    reg = make_registry(faulty.FaultyBackend())
    r = invoke("--no-calibrate", "--ops", "relu", "--backends", "faulty", "--baseline", "numpy", "--dtypes", "f32",
               "--cases", "smoke", "--time-budget", "0.01", "--out", str(tmp_path / "run"), "--table", "csv",
               registry=reg)
    assert r.exit_code == 1, r.output
    table = pd.read_csv(io.StringIO(r.stdout), keep_default_na=False)
    run_order = [row["case"] for row in _rows(tmp_path / "run") if row["backend"] == "numpy"]
    assert run_order.index("1000-leaky") > 0  # not first in the sweep...
    assert list(table["case"]) == ["1000-leaky"] + [c for c in run_order if c != "1000-leaky"]  # ...first here
    assert list(table["faulty_status"]) == ["failed"] + ["ok"] * (len(run_order) - 1)
    assert "outside budget" in table["faulty_message"][0]


def test_csv_is_the_wide_table(wrong_run, tmp_path):
    out, _ = wrong_run
    r = invoke("table", str(out), "--format", "csv")
    assert r.exit_code == 0, r.output
    table = pd.read_csv(io.StringIO(r.stdout), keep_default_na=False)
    assert list(table.columns) == ["op", "case", "dtype"] + [
        f"{b}_{k}" for b in ("numpy", "wrong") for k in ("status", "median_ms", "gbps", "pct_of_peak", "tflops",
                                                          "pct_of_compute", "speedup", "message")]
    assert len(table) == 10 and set(table["op"]) == {"copy", "relu"}
    csv_rows = {(r["op"], r["case"], r["dtype"], r["backend"]): r for r in _rows(out)}
    for line in table.to_dict("records"):
        base = csv_rows[(line["op"], line["case"], line["dtype"], "numpy")]
        assert math.isclose(line["numpy_median_ms"], float(base["median_ms"]), rel_tol=1e-9)
        assert math.isclose(line["numpy_gbps"], float(base["gbps"]), rel_tol=1e-9)
        assert line["wrong_status"] in ("failed", "error") and line["wrong_median_ms"] == ""
    assert set(table[table["op"] == "copy"]["wrong_message"]) == {"RuntimeError: kernel launch failed: test double"}


def test_table_subcommand_prints_what_the_sweep_printed(wrong_run):
    out, r = wrong_run
    again = invoke("table", str(out), "--format", "markdown")
    assert again.exit_code == 0, again.output
    assert again.stdout == r.stdout


def test_times_are_in_ms_in_the_table_and_in_compare(wrong_run):
    """One unit for times, the one results.csv stores: the table's and compare's time columns are in ms, and say so."""
    out, r = wrong_run
    head, _, *body = _op_section(r.stdout, "relu")
    assert "| numpy ms |" in head and " us " not in r.stdout
    shown = {(c[0], c[1]): c[2] for c in ([x.strip() for x in line.strip("|").split("|")] for line in body)}
    for row in _rows(out):
        if row["op"] == "relu" and row["backend"] == "numpy":
            assert float(shown[(row["case"], row["dtype"])]) == pytest.approx(float(row["median_ms"]), rel=5e-3)
    cmp = invoke("compare", str(out), str(out), "--all")
    assert cmp.exit_code == 0, cmp.output
    assert "old ms" in cmp.stdout and "new ms" in cmp.stdout and " us " not in cmp.stdout


@pytest.mark.parametrize("width", [80, 200])
def test_plain_table_fits_the_width(wrong_run, width):
    out, _ = wrong_run
    r = invoke("table", str(out), "--format", "plain", columns=width)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) <= width
    assert "\x1b[" not in r.stdout  # no colour
    # the failures table before the op tables, the ops in sweep order
    fails, copy, relu = (lines.index(t) for t in ("failures and errors (10)", "copy", "relu"))
    assert fails < copy < relu
    assert "kernel launch failed: test double" in " ".join(" ".join(lines[fails:copy]).split())
    assert "33x65-transposed" in "".join(lines[copy:relu])


def test_quiet_is_one_line_and_a_named_table_still_prints(tmp_path):
    r = invoke(*SWEEP, "--out", str(tmp_path / "a"), "-q")
    assert r.exit_code == 1, r.output
    assert r.stdout.splitlines() == [r.stdout.strip()] and r.stdout.startswith("oprt-bench: 20 rows (10 ok")
    assert "numpy" not in r.stdout.replace(str(tmp_path), "")  # no table
    r = invoke(*SWEEP, "--out", str(tmp_path / "b"), "-q", "--table", "none")
    assert r.stdout.count("\n") == 1
    r = invoke(*SWEEP, "--out", str(tmp_path / "c"), "-q", "--table", "csv")
    assert r.stderr.strip().startswith("oprt-bench: 20 rows (10 ok") and r.stderr.count("\n") == 1
    assert len(pd.read_csv(io.StringIO(r.stdout))) == 10


def test_default_off_a_terminal_is_plain_after_the_row_lines(tmp_path):
    """Not a terminal (CliRunner): the per-row lines, then the plain table, then the summary line last."""
    r = invoke(*SWEEP, "--out", str(tmp_path / "run"), columns=80)
    assert r.exit_code == 1, r.output
    lines = r.stdout.splitlines()
    assert lines[-1].startswith("oprt-bench: 20 rows (10 ok, 6 failed, 4 error)")
    last_row = max(i for i, line in enumerate(lines) if line.startswith("[20/20]"))
    table = lines[last_row + 1:-1]
    assert table[0].startswith("median time in ms") and "failures and errors (10)" in table
    assert max(len(line) for line in table) <= 80
    assert "\x1b[" not in r.stdout


def test_test_mode_shows_status_and_error(tmp_path):
    r = invoke(*SWEEP, "--mode", "test", "--out", str(tmp_path / "run"), "--table", "markdown")
    assert r.exit_code == 1, r.output
    head, sep, *body = _op_section(r.stdout, "relu")
    assert head == "| case | dtype | numpy status | numpy max rel err | wrong status | wrong max rel err |"
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in body]
    assert {c[2] for c in cells} == {"ok"} and {c[4] for c in cells} == {"failed"}
    assert all(float(c[5]) > 0.1 for c in cells)  # relu + 1: far off, and the table says how far
    assert " ms " not in r.stdout and "speedup" not in r.stdout and "correctness only" in r.stdout


# -- fitting, on rows made up with every figure filled -----------------------------------------------

def _made_up_rows():
    rows = []
    for op in ("softmax", "reduce_sum"):
        for case in ("4096x4096-axis-1", "65536x128-axis0-keepdims-transposed"):
            for dtype in ("f32", "bf16"):
                for i, backend in enumerate(("torch", "nvidia", "metax")):
                    ms = 0.125 * (i + 1)
                    rows.append({"op": op, "case": case, "dtype": dtype, "backend": backend, "baseline": "torch",
                                 "status": "ok", "mode": "all", "median_ms": ms, "gbps": 3000.0 / (i + 1),
                                 "pct_of_peak": 71.5 / (i + 1), "speedup": 0.125 / ms, "message": ""})
    rows[-4].update(status="error", median_ms=None, gbps=None, pct_of_peak=None, speedup=None,
                    message="worker crashed: killed by SIGSEGV " + "x" * 300)
    return rows


def _rich_text(width: int) -> str:
    buf = io.StringIO()
    con = Console(file=buf, width=width, color_system=None)
    for part in renderables(build_table(_made_up_rows()), con):
        con.print(part)
    return buf.getvalue()


@pytest.mark.parametrize("width", [40, 80, 120, 200])
def test_rich_and_plain_fit_the_width(width):
    for text in (_rich_text(width), render(build_table(_made_up_rows()), "plain", width)):
        assert max(len(line) for line in text.splitlines()) <= width
        if width >= 80:  # narrower, rich folds the names and messages inside their cells
            assert "65536x128-axis0-keepdims-transposed" in text and "worker crashed" in text


def _headers(text: str) -> str:
    """The column-name lines of the op tables (the line above each rule of dashes)."""
    lines = text.splitlines()
    return "\n".join(lines[i - 1] for i, line in enumerate(lines) if line.startswith("---") and "case" in lines[i - 1]
                     and "message" not in lines[i - 1])


def test_narrowing_drops_pct_then_gbps_then_speedup():
    """These op tables are 138 columns wide with every figure, 111 without % of peak, 90 without GB/s too, 70 with
    the times alone."""
    wide, mid, narrow, times = (render(build_table(_made_up_rows()), "plain", w) for w in (140, 120, 100, 80))
    wide_h, mid_h, narrow_h, times_h = map(_headers, (wide, mid, narrow, times))
    assert wide_h.count("case") == 2  # one header per op
    assert "% peak" in wide_h and "GB/s" in wide_h and "speedup" in wide_h
    assert "% peak" not in mid_h and "GB/s" in mid_h and "speedup" in mid_h
    assert "% peak" not in narrow_h and "GB/s" not in narrow_h and "speedup" in narrow_h
    assert times_h.count(" ms") == 3 * 2 and "speedup" not in times_h
    # the message is cut in the terminal views; times stay: 0.125 ms, 0.25 ms, 0.375 ms
    assert "x" * 300 not in wide and "..." in wide
    assert all(t in times for t in ("0.125", "0.25", "0.375"))
    # the baseline has no speedup column of its own: two speedup columns for three backends
    assert wide_h.count("speedup") == 2 * 2  # two op tables


def test_markdown_and_csv_keep_every_column():
    table = build_table(_made_up_rows())
    md = render(table, "markdown")
    assert "| case | dtype | torch ms | torch GB/s | torch % peak | nvidia ms | nvidia GB/s | nvidia % peak | " \
           "nvidia speedup | metax ms |" in md
    frame = pd.read_csv(io.StringIO(render(table, "csv")), keep_default_na=False)
    assert len(frame) == 8 and frame["metax_status"].tolist().count("error") == 1
    assert frame["metax_message"].str.len().max() > 300  # whole, as in results.csv
    # the failing line first in its op (reduce_sum's second case, bf16), the others in their order
    reduce = frame[frame["op"] == "reduce_sum"]
    assert reduce["metax_status"].tolist() == ["error", "ok", "ok", "ok"]
    assert reduce[["case", "dtype"]].values.tolist() == [["65536x128-axis0-keepdims-transposed", "f32"],
                                                        ["4096x4096-axis-1", "f32"], ["4096x4096-axis-1", "bf16"],
                                                        ["65536x128-axis0-keepdims-transposed", "bf16"]]


def test_console_script_with_the_faulty_plugin(tmp_path):
    """The installed console script: the faulty plugin's planned wrong relu row leads, the table fits $COLUMNS."""
    env = isolated_env(OPRT_PLUGINS="numpy,faulty", OPRT_FAULTY_PLAN="relu/33x65-transposed/f16:wrong",
                       COLUMNS="80")
    p = run_script("--no-calibrate", "--backends", "numpy,faulty", "--ops", "relu", "--cases", "smoke",
                   "--time-budget", "0.01", "--table", "plain", "--out", str(tmp_path / "run"), env=env)
    assert p.returncode == 1, p.stderr
    lines = p.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "oprt-bench: 18 rows (17 ok, 1 failed)" in p.stderr
    relu = lines.index("relu")
    rule = next(i for i in range(relu, len(lines)) if lines[i].startswith("---"))
    first = lines[rule + 1].split()
    assert first[:2] == ["33x65-transposed", "f16"] and "failed" in first, lines[relu:relu + 6]
