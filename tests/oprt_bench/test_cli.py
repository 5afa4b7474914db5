"""The CLI through click's CliRunner, with in-process registries."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from bench_helpers import UnavailableBackend, WrongBackend, make_registry
from click.testing import CliRunner

from oprt_bench.cli import cli
from oprt_bench.results import COLUMNS, SCHEMA_VERSION
from oprt_core import operators


def invoke(registry, *args: str, calibrate: bool = False):
    """The CLI in-process; calibration (a 256 MiB host copy) is off unless asked for: test_calibration covers it."""
    return CliRunner().invoke(cli, ([] if calibrate else ["--no-calibrate"]) + list(args), obj={"registry": registry})


def one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("oprt-bench: error: ")
    assert "Traceback" not in result.output
    return lines[0]


def test_sweep_writes_csv_json_html(registry, tmp_path):
    out = tmp_path / "run"
    r = invoke(registry, "--ops", "copy,softmax", "--dtypes", "f32,bf16", "--cases", "smoke", "--time-budget", "0.01",
               "--out", str(out))
    assert r.exit_code == 0, r.output
    assert "8 rows (8 ok)" in r.stdout and "[8/8] softmax" in r.stdout
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == 8 and tuple(rows[0]) == COLUMNS
    assert {row["schema_version"] for row in rows} == {str(SCHEMA_VERSION)}
    assert {row["status"] for row in rows} == {"ok"}
    assert all(float(row["median_ms"]) > 0 and float(row["speedup"]) == 1.0 for row in rows)
    meta = json.loads((out / "run.json").read_text())
    assert {row["host"] for row in rows} == {meta["host"]["hostname"]}  # numpy: no device to pin, no ":N"
    assert meta["status"] == "complete" and meta["exit_code"] == 0 and meta["counts"] == {"ok": 8}
    assert meta["plan"]["ops"] == ["copy", "softmax"] and "numpy" in meta["backends"]
    doc = json.loads((out / "results.json").read_text())
    assert len(doc["rows"]) == 8
    assert "<svg" in (out / "report.html").read_text()


def test_cross_entropy_rows_keep_the_value_dtype_and_count_the_targets(registry, tmp_path):
    """An op with an index input (cross_entropy's i64 targets): rows of the value dtypes, checked against the
    reference, bytes counting 8 per target, the shape column naming both inputs."""
    out = tmp_path / "run"
    r = invoke(registry, "--ops", "cross_entropy", "--dtypes", "f32,bf16", "--cases", "smoke", "--mode", "test",
               "--format", "csv", "--out", str(out), "-q")
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == 6 and {row["status"] for row in rows} == {"ok"}
    assert {row["dtype"] for row in rows} == {"f32", "bf16"}
    first = next(row for row in rows if row["case"] == "4x64" and row["dtype"] == "bf16")
    assert first["shape"] == "4x64,4" and int(first["bytes"]) == 4 * 64 * 2 + 4 * 8 + 4 * 2
    assert json.loads(next(row for row in rows if row["case"] == "3x1000-mean")["params"])["reduction"] == "mean"


def test_format_subset_and_test_mode(registry, tmp_path):
    out = tmp_path / "run"
    r = invoke(registry, "--ops", "relu", "--dtypes", "f16", "--cases", "smoke", "--mode", "test", "--format", "csv",
               "--out", str(out), "-q")
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == ["results.csv", "run.json"]
    assert r.stdout.count("\n") == 1  # -q: the summary line only
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert all(row["median_ms"] == "" and row["mode"] == "test" for row in rows)


def test_failed_and_error_rows_exit_1(tmp_path):
    reg = make_registry(WrongBackend(wrong="relu", broken="copy"))
    out = tmp_path / "run"
    r = invoke(reg, "--ops", "copy,relu", "--backends", "wrong", "--dtypes", "f32", "--cases", "smoke",
               "--time-budget", "0.01", "--out", str(out))
    assert r.exit_code == 1, r.output
    statuses = {(row["op"], row["backend"], row["status"]) for row in csv.DictReader((out / "results.csv").open())}
    assert ("copy", "wrong", "error") in statuses and ("relu", "wrong", "failed") in statuses
    assert ("relu", "numpy", "ok") in statuses  # baseline added and measured
    html = (out / "report.html").read_text()
    assert "kernel launch failed: test double" in html and "Failures and errors" in html


@pytest.mark.parametrize(("args", "fragment"), [
    (["--ops", "nope"], "unknown op 'nope'; valid choices: " + ", ".join(sorted([*operators.names(), "all"]))),
    (["--backends", "cuda"], "unknown backend 'cuda'; valid choices: all, ghost, numpy"),
    (["--backends", "ghost"], "backend 'ghost' is unavailable: no device: test double without hardware; available"),
    (["--dtypes", "f32,int8"], "unknown dtype 'int8'; valid choices: all, bf16, e4m3, f16, f32"),
    (["--shape", "40964096x"], "malformed shape '40964096x'"),
    (["--mode", "fast"], "'fast' is not one of 'test', 'bench', 'all'"),
    (["--seed", "x"], "'x' is not a valid integer"),
    (["--nope"], "No such option '--nope'"),
    # a backend the project ships but that is not installed: how to install it
    (["--backends", "nvidia"], "unknown backend 'nvidia'; valid choices: all, ghost, numpy; install oprt-nvidia for "
                               "it: pip install ./oprt_nvidia"),
    (["--backends", "numpy,metax"], "unknown backend 'metax'; valid choices: all, ghost, numpy; install oprt-metax "
                                    "for it: pip install ./oprt_metax"),
    (["--baseline", "nvidia"], "unknown baseline backend 'nvidia'; valid choices: ghost, none, numpy; install "
                               "oprt-nvidia for it: pip install ./oprt_nvidia"),
])
def test_user_mistakes_are_one_line_exit_2_and_write_nothing(tmp_path, args, fragment):
    out = tmp_path / "run"
    r = invoke(make_registry(UnavailableBackend()), *args, "--out", str(out))
    assert r.exit_code == 2
    assert fragment in one_error_line(r)
    assert not out.exists()


def test_a_backend_the_project_ships_no_package_for_gets_no_install_hint(tmp_path):
    r = invoke(make_registry(UnavailableBackend()), "--backends", "cuda", "--out", str(tmp_path / "run"))
    assert r.exit_code == 2 and "install" not in one_error_line(r)


def test_unwritable_and_existing_out(registry, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = invoke(registry, "--cases", "smoke", "--out", str(blocker / "run"))
    assert r.exit_code == 2 and "is not writable" in one_error_line(r)
    used = tmp_path / "used"
    used.mkdir()
    (used / "results.csv").write_text("op\n")
    r = invoke(registry, "--cases", "smoke", "--out", str(used))
    assert r.exit_code == 2 and "is not empty (runs are never overwritten)" in one_error_line(r)
    assert (used / "results.csv").read_text() == "op\n"


def test_default_out_is_timestamped_under_results(registry, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        r = invoke(registry, "--ops", "copy", "--dtypes", "f32", "--mode", "test", "--cases", "smoke", "-q")
        assert r.exit_code == 0, r.output
    runs = sorted(Path("results").iterdir())
    assert len(runs) == 2  # the second run never reuses the first one's folder
    assert all(p.name[:8].isdigit() and p.name[8] == "T" and (p / "results.csv").exists() for p in runs)


def test_backends_and_ops_listing(tmp_path):
    reg = make_registry(UnavailableBackend())
    r = invoke(reg, "backends", "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    backends = {b["name"]: b for b in doc["backends"]}
    assert backends["numpy"]["available"] and backends["numpy"]["flavour"].startswith("numpy-")
    assert not backends["ghost"]["available"] and "no device" in backends["ghost"]["reason"]
    assert {p["name"] for p in doc["plugins"]} >= {"numpy", "testdoubles", "core"}
    r = invoke(reg, "backends")
    assert r.exit_code == 0 and "ghost" in r.stdout and "no device" in r.stdout
    r = invoke(reg, "ops", "--json")
    ops = {o["name"]: o for o in json.loads(r.stdout)["ops"]}
    assert ops["softmax"]["params"][0]["name"] == "axis"
    assert ops["copy"]["case_sets"]["smoke"]["count"] == 2 and ops["copy"]["dtypes"] == ["f32", "f16", "bf16"]
    assert ops["matmul"]["inputs"] == ["a", "b", "c"] and ops["matmul"]["optional_inputs"] == ["c"]
    assert ops["copy"]["optional_inputs"] == []
    r = invoke(reg, "ops")
    assert r.exit_code == 0 and "reduce_sum" in r.stdout and "keepdims" in r.stdout
    assert "c=None" in r.stdout  # matmul's optional c


def test_backends_shows_plugin_load_errors():
    from oprt_core.errors import PluginLoadError
    from oprt_core.plugins import PluginInfo

    reg = make_registry()
    reg.pm.plugin_info["broken"] = PluginInfo("broken", "oprt-broken", "1.0",
                                              error=PluginLoadError("broken", "oprt-broken", ImportError("no libcuda")))
    r = invoke(reg, "backends", "--json")
    assert r.exit_code == 0
    broken = [p for p in json.loads(r.stdout)["plugins"] if p["name"] == "broken"][0]
    assert "ImportError: no libcuda" in broken["error"]


def test_report_merges_runs(registry, tmp_path):
    runs = []
    for i in range(2):
        out = tmp_path / f"run{i}"
        assert invoke(registry, "--ops", "copy", "--dtypes", "f32", "--cases", "smoke", "--time-budget", "0.01",
                      "--out", str(out), "-q").exit_code == 0
        runs.append(str(out))
    merged = tmp_path / "merged"
    r = invoke(registry, "report", *runs, "--out", str(merged))
    assert r.exit_code == 0, r.output
    html = (merged / "report.html").read_text()
    assert html.count("<svg") == 1 and "numpy@" in html
    r = invoke(registry, "report", str(tmp_path / "missing"))
    assert r.exit_code == 2 and "is not a run" in one_error_line(r)


def test_signal_during_timing_interrupts_instead_of_becoming_an_error_row(tmp_path):
    import os
    import signal

    from oprt_core.numpy_backend import NumpyBackend

    class SelfInterrupting(NumpyBackend):
        name = "selfint"
        prepared = 0

        def prepare(self, *args, **kwargs):
            type(self).prepared += 1
            return super().prepare(*args, **kwargs)

        def flush_cache(self) -> None:
            if type(self).prepared == 3:  # inside the timing loop of the third row
                os.kill(os.getpid(), signal.SIGINT)

    out = tmp_path / "run"
    # the handler in place before the run (Python's default_int_handler, or SIG_IGN where this process was started
    # in the background by a shell without job control): the run must put back whichever it found
    before = signal.getsignal(signal.SIGINT)
    r = invoke(make_registry(SelfInterrupting()), "--ops", "copy,relu", "--backends", "selfint", "--baseline", "none",
               "--cases", "smoke", "--time-budget", "0.01", "--out", str(out))
    assert r.exit_code == 130, r.output
    assert "interrupted by SIGINT" in r.stderr
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == 2 and all(row["status"] == "ok" for row in rows)
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted (SIGINT)"
    assert (out / "report.html").exists() and (out / "results.json").exists()
    assert signal.getsignal(signal.SIGINT) is before  # handlers restored


def test_cli_import_does_not_load_pandas():
    """`oprt-bench --help` and usage errors stay quick: pandas (~0.4 s) loads only where rows are built."""
    import subprocess
    import sys

    code = "import sys, oprt_bench.cli; sys.exit('pandas' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0


def test_row_fields_are_the_csv_columns_in_order():
    from oprt_bench.model import Row

    row = Row(op="copy", case="1000", shape="1000", dtype="f32", status="ok", median_ms=0.5)
    assert tuple(row) == COLUMNS and tuple(row.to_dict()) == COLUMNS
    assert row["status"] == "ok" and row.get("median_ms") == 0.5 and row.get("kernel") is None
    assert row.get("no such column") is None and "median_ms" in row


def test_report_rebuilds_a_run_from_its_csv_and_run_json(registry, tmp_path):
    """A committed run keeps results.csv and run.json only: `report RUN_DIR` writes the report the sweep wrote."""
    import re

    out = tmp_path / "run"
    assert invoke(registry, "--ops", "copy,softmax", "--dtypes", "f32,bf16", "--cases", "smoke", "--time-budget",
                  "0.01", "--out", str(out), "-q").exit_code == 0
    written = (out / "report.html").read_text()
    (out / "report.html").unlink()
    (out / "results.json").unlink()
    r = invoke(registry, "report", str(out))
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == str(out / "report.html")
    rebuilt = (out / "report.html").read_text()
    stamp = re.compile(r"generated \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
    assert stamp.sub("", rebuilt) == stamp.sub("", written)
    assert rebuilt.count("<svg") == 3 and "8 row(s)" in rebuilt and "data-op='softmax'" in rebuilt
    # --out FILE: the report there; --out FOLDER: report.html in it
    r = invoke(registry, "report", str(out), "--out", str(tmp_path / "elsewhere" / "copy.html"))
    assert r.exit_code == 0, r.output
    assert stamp.sub("", (tmp_path / "elsewhere" / "copy.html").read_text()) == stamp.sub("", written)
    r = invoke(registry, "report", str(out), "--out", str(tmp_path / "folder"))
    assert r.exit_code == 0 and (tmp_path / "folder" / "report.html").is_file()


def test_compare_and_resume_read_a_run_without_results_json(registry, tmp_path):
    out = tmp_path / "run"
    assert invoke(registry, "--ops", "copy", "--dtypes", "f32", "--cases", "smoke", "--time-budget", "0.01",
                  "--out", str(out), "-q").exit_code == 0
    (out / "results.json").unlink()
    (out / "report.html").unlink()
    n = len(list(csv.DictReader((out / "results.csv").open())))
    # a run against itself: every row same, or too noisy to judge at 5% (numpy timings on a busy host)
    r = invoke(registry, "compare", str(out), str(out), "--json", "--fail-on-regression", "--allow-noisy")
    assert r.exit_code == 0, r.output
    counts = json.loads(r.stdout)["counts"]
    assert set(counts) <= {"same", "noisy"} and sum(counts.values()) == n, counts
    r = invoke(registry, "--resume", str(out), "-q")  # every row kept, nothing measured again
    assert r.exit_code == 0 and f"{n} rows ({n} ok)" in r.stdout, r.output
    assert len(list(csv.DictReader((out / "results.csv").open()))) == n and (out / "report.html").is_file()


def test_summary_line_gives_the_whole_sweeps_wall_time(registry, tmp_path, monkeypatch):
    """The seconds of the summary line cover every phase of run.json's phases_s (the plan and the report too), not
    only the rows."""
    import re
    import time

    import oprt_bench.run as run_module

    real = run_module.write_report

    def slow_report(*args, **kw):
        time.sleep(1.0)
        return real(*args, **kw)

    monkeypatch.setattr(run_module, "write_report", slow_report)
    out = tmp_path / "run"
    t0 = time.monotonic()
    r = invoke(registry, "--ops", "copy", "--dtypes", "f32", "--cases", "smoke", "--time-budget", "0.005",
               "--out", str(out), "-q")
    wall = time.monotonic() - t0
    assert r.exit_code == 0, r.output
    seconds = float(re.fullmatch(rf"oprt-bench: 2 rows \(2 ok\) in (\d+\.\d) s -> {re.escape(str(out))}",
                                 r.stdout.strip()).group(1))
    phases = json.loads((out / "run.json").read_text())["phases_s"]
    assert phases["report"] >= 1.0
    assert sum(phases.values()) - 0.05 <= seconds <= wall + 0.05, (seconds, phases, wall)
