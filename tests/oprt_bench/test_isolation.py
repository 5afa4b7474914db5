"""Fault isolation: a backend that segfaults, aborts, hangs or raises costs one error row, never the sweep.

Backend ``faulty`` comes from tests/plugins/oprt-faultyplugin (installed into the bench test env):
numpy, except where OPRT_FAULTY_PLAN says to crash. Timeouts here are short so nothing waits long.
"""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import time

import numpy as np
import pytest
from bench_helpers import SCRIPT, builtin_smoke_cases, isolated_env, make_registry, run_script
from click.testing import CliRunner

from oprt_bench.cli import cli
from oprt_bench.model import CalibrationTask
from oprt_bench.sweep import SweepOptions, make_plan, run_sweep
from oprt_bench.worker import BackendWorker, WorkerFailure, WorkerSource, describe_exit, worker_source
from oprt_core.numpy_backend import NumpyBackend

faulty = pytest.importorskip("oprt_faultyplugin", reason="pip install ./tests/plugins/oprt-faultyplugin")

PLAN = "copy/1000:segv,relu/1000:hang,softmax/64x1000-axis-1:raise"
EXPECTED = {
    ("copy", "1000"): "killed by SIGSEGV",
    ("relu", "1000"): "timed out after ",
    ("softmax", "64x1000-axis-1"): "RuntimeError: faulty: planned failure at softmax/64x1000-axis-1",
}


def _check_rows(rows: list[dict], dtypes: tuple[str, ...] = ("f32",)) -> None:
    assert len(rows) == builtin_smoke_cases() * 2 * len(dtypes)  # every built-in op's smoke cases x (faulty, numpy)
    bad = {(r["op"], r["case"], r["dtype"]): r for r in rows if r["status"] != "ok"}
    assert set(bad) == {(op, case, dt) for (op, case) in EXPECTED for dt in dtypes}, bad
    for (op, case, _dt), row in bad.items():
        assert row["backend"] == "faulty" and row["status"] == "error"
        assert EXPECTED[(op, case)] in row["message"], row["message"]
    # the rows after each fault ran in a replacement worker and are fine
    assert all(r["status"] == "ok" for r in rows if r["backend"] == "numpy")


def test_faults_become_error_rows_in_process_registry(tmp_path, monkeypatch):
    """In-process test registry (the backend reaches its worker pickled): CLI, exit 1, report written."""
    monkeypatch.setenv("OPRT_FAULTY_PLAN", PLAN)
    out = tmp_path / "run"
    started = time.monotonic()
    r = CliRunner().invoke(cli, ["--no-calibrate", "--backends", "faulty,numpy", "--cases", "smoke", "--dtypes",
                                 "f32", "--time-budget", "0.005", "--case-timeout", "10", "--out", str(out)],
                           obj={"registry": make_registry(faulty.FaultyBackend())})
    assert r.exit_code == 1, r.output
    assert time.monotonic() - started < 300  # the hang was cut by its timeout (margins for a busy host)
    rows = list(csv.DictReader((out / "results.csv").open()))
    _check_rows(rows)
    n = 2 * builtin_smoke_cases()
    assert f"{n} rows ({n - 3} ok, 3 error)" in r.stdout
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "complete" and meta["exit_code"] == 1 and meta["counts"] == {"ok": n - 3, "error": 3}
    assert meta["plan"]["isolation"] == "process" and meta["plan"]["case_timeout_s"] == 10.0
    assert meta["plan"]["in_process"] == []
    html = (out / "report.html").read_text()
    assert "killed by SIGSEGV" in html and "timed out after 10 s" in html


def test_faults_from_the_installed_plugin_console_script(tmp_path):
    """The real thing: entry points rebuilt in each worker, every dtype, the console script's exit code."""
    out = tmp_path / "run"
    env = isolated_env(OPRT_PLUGINS="numpy,faulty", OPRT_FAULTY_PLAN=PLAN)
    p = run_script("--no-calibrate", "--backends", "faulty,numpy", "--cases", "smoke", "--dtypes", "f32,bf16",
                   "--time-budget", "0.005", "--case-timeout", "15", "--out", str(out), env=env)
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr
    rows = list(csv.DictReader((out / "results.csv").open()))
    _check_rows(rows, ("f32", "bf16"))
    n = 4 * builtin_smoke_cases()
    assert f"{n} rows ({n - 6} ok, 6 error)" in p.stdout and "timed out after 15 s running the case" in p.stdout
    assert (out / "report.html").exists() and json.loads((out / "run.json").read_text())["exit_code"] == 1


def test_abort_and_wrong_result_and_no_plan(tmp_path, monkeypatch):
    reg = make_registry(faulty.FaultyBackend())
    monkeypatch.setenv("OPRT_FAULTY_PLAN", "copy/1000/f16:abort,relu/1000:wrong")
    rows: list[dict] = []
    opts = SweepOptions(ops="copy,relu", backends="faulty", baseline="none", dtypes="f32,f16", cases="smoke",
                        mode="test", case_timeout_s=5)
    run_sweep(make_plan(reg, opts), rows.append)
    by = {(r["op"], r["case"], r["dtype"]): r for r in rows}
    assert by[("copy", "1000", "f16")]["status"] == "error"
    assert "killed by SIGABRT" in by[("copy", "1000", "f16")]["message"]
    assert by[("copy", "1000", "f32")]["status"] == "ok"  # only the planned dtype
    assert {by[("relu", "1000", d)]["status"] for d in ("f32", "f16")} == {"failed"}
    # with no plan the plugin is a correct backend: installing it hurts no other run
    monkeypatch.delenv("OPRT_FAULTY_PLAN")
    rows.clear()
    run_sweep(make_plan(reg, opts), rows.append)
    assert {r["status"] for r in rows} == {"ok"}


def test_crash_during_calibration_is_recorded_and_the_sweep_goes_on(tmp_path, monkeypatch):
    monkeypatch.setenv("OPRT_FAULTY_PLAN", "calibration:segv")
    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["--backends", "faulty", "--baseline", "none", "--ops", "copy", "--dtypes", "f32",
                                 "--cases", "smoke", "--time-budget", "0.005", "--case-timeout", "5",
                                 "--out", str(out)],
                           obj={"registry": make_registry(faulty.FaultyBackend())})
    assert r.exit_code == 0, r.output
    assert "measured peak unavailable (worker crashed calibrating: killed by SIGSEGV" in r.stdout
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == 2 and {row["status"] for row in rows} == {"ok"}
    assert all(row["pct_of_peak"] == "" for row in rows)


def test_isolation_none_runs_in_process_and_unpicklable_backends_fall_back(monkeypatch):
    from oprt_core.numpy_backend import NumpyBackend

    class Local(NumpyBackend):  # a local class: neither picklable nor importable by name
        name = "local"

        def add_op(self, spec, impl):
            super().add_op(spec, (lambda i, o, p: o.__setitem__(..., i[0])) if spec.name == "copy" else impl)

    reg = make_registry(Local())
    plan = make_plan(reg, SweepOptions(ops="copy", backends="local", dtypes="f32", cases="smoke", mode="test"))
    assert set(plan.sources) == {"numpy"}
    assert any("backend 'local' runs in-process (no fault isolation)" in n for n in plan.notes)
    rows: list[dict] = []
    run_sweep(plan, rows.append)
    assert {r["status"] for r in rows} == {"ok"} and len(rows) == 4
    plan = make_plan(reg, SweepOptions(ops="copy", backends="local", isolation="none"))
    assert plan.sources == {} and plan.case_timeout_s is None and not plan.notes[1:]
    with pytest.raises(Exception, match="unknown isolation 'thread'"):
        make_plan(reg, SweepOptions(isolation="thread"))
    with pytest.raises(Exception, match="--case-timeout must be a positive number"):
        make_plan(reg, SweepOptions(case_timeout_s=-1.0))


def test_default_case_timeout_is_120_s_plus_the_budget(registry):
    plan = make_plan(registry, SweepOptions(time_budget_s=0.5))
    assert plan.case_timeout_s == 120.5 and plan.to_dict()["case_timeout_s"] == 120.5


def test_worker_handle_replaces_a_dead_worker(registry, monkeypatch):
    monkeypatch.setenv("OPRT_FAULTY_PLAN", "")
    source = worker_source(make_registry(faulty.FaultyBackend()), "faulty", ["copy"])
    assert source.kind == "class"  # NumpyBackend holds lambdas of the specs: its class is the factory
    w = BackendWorker(source)
    try:
        w.call("calibrate", CalibrationTask({}, cold=False), 60)
        first = w.proc.pid
        w.proc.kill()
        w.proc.join(5)
        cal, timer = w.call("calibrate", CalibrationTask({}, cold=False), 60)  # a new worker
        assert w.proc.pid != first and w.starts == 2 and cal.measured_peak_gbps and timer.floor_ms
        with pytest.raises(WorkerFailure, match="worker error: AttributeError"):
            w.call("calibrate", None, 60)  # a bug in a command is reported, the worker stays
        assert w.alive and w.starts == 2
    finally:
        w.close()
    assert not w.alive


def test_a_worker_that_cannot_load_its_backend_is_an_error_not_a_hang(registry):
    from oprt_bench.worker import WorkerSource

    w = BackendWorker(WorkerSource("nope", "pickle", b"not a pickle"))
    with pytest.raises(WorkerFailure, match="could not load backend 'nope'"):
        w.call("calibrate", CalibrationTask({}, cold=False), 10)
    with pytest.raises(WorkerFailure, match="could not load"):  # not retried for every row
        w.call("calibrate", CalibrationTask({}, cold=False), 10)
    w.close()


def test_describe_exit():
    assert describe_exit(-11) == "killed by SIGSEGV (signal 11)"
    assert describe_exit(-6) == "killed by SIGABRT (signal 6)"
    assert describe_exit(3) == "exited with status 3"


def test_sigterm_while_a_worker_hangs_keeps_rows_and_report(tmp_path):
    """SIGTERM (what a batch scheduler sends) during a hung case: the run stops at once, the report is written."""
    out = tmp_path / "run"
    env = isolated_env(OPRT_PLUGINS="numpy,faulty", OPRT_FAULTY_PLAN="copy/33x65-transposed:hang")
    proc = subprocess.Popen([str(SCRIPT), "--no-calibrate", "--ops", "copy", "--backends", "faulty,numpy",
                             "--dtypes", "f32", "--cases", "smoke", "--time-budget", "0.005", "--case-timeout", "120",
                             "--out", str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    csv_path = out / "results.csv"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        if csv_path.exists() and len(csv_path.read_text().splitlines()) >= 4:  # header + 3 rows, then the hang
            break
        time.sleep(0.05)
    time.sleep(0.3)
    assert proc.poll() is None
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=100)
    assert time.monotonic() - t0 < 60  # not the 120 s of the hung case's timeout (margins for a busy host)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "interrupted by SIGTERM" in stderr and "Traceback" not in stderr
    rows = list(csv.DictReader(csv_path.open()))
    assert len(rows) == 3 and {r["status"] for r in rows} == {"ok"}
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "interrupted (SIGTERM)" and meta["exit_code"] == 143
    assert (out / "report.html").exists() and (out / "results.json").exists()


def test_a_sticky_device_error_replaces_the_worker(monkeypatch):
    """A kernel fault on a GPU often leaves the context broken (cudaErrorIllegalAddress is sticky) rather than
    killing the process: the row is an error and the next row gets a fresh worker."""
    from oprt_bench.sweep import Runners

    reg = make_registry(StickyBackend())
    plan = make_plan(reg, SweepOptions(ops="copy", backends="sticky", baseline="none", dtypes="f32,f16",
                                       cases="smoke", mode="test", case_timeout_s=10))
    rows: list[dict] = []
    with Runners(plan) as runners:
        run_sweep(plan, rows.append, runners=runners)
        worker = runners.workers["sticky"]
        assert worker.restarts_after_device_error == 1 and worker.starts == 2
    assert [r["status"] for r in rows] == ["error", "ok", "ok", "ok"]
    assert rows[0]["message"].startswith("illegal memory access (sticky device error; worker replaced): "
                                         "DeviceFaultError: sticky [OPRT_STATUS_DEVICE_FAULT]: ")


class StickyBackend(NumpyBackend):
    """prepare of copy/1000/f32 raises the exception class of OPRT_STATUS_DEVICE_FAULT."""

    name = "sticky"

    def prepare(self, op, inputs, output, params):
        from oprt_core.errors import DeviceFaultError

        if output.shape == (1000,) and output.dtype == np.float32:
            raise DeviceFaultError("sticky", 13, "an illegal memory access was encountered",
                                   "OPRT_STATUS_DEVICE_FAULT")
        return super().prepare(op, inputs, output, params)


def test_closing_prestarted_workers_mid_start_leaves_no_process_behind():
    """A run refused by its plan closes the workers it started before the plan while they are still starting:
    close() returns once each start's thread has closed its killed process (multiprocessing's exit handler would
    otherwise find one half-closed and print a traceback after the run's one-line error)."""
    import multiprocessing

    from oprt_bench.runners import Prestarted

    pre = Prestarted({n: WorkerSource("numpy", "entrypoints") for n in ("a", "b")}, None)
    started = list(pre.workers.values())
    pre.close()
    assert all(f.done() for f in pre.futures.values())
    assert all(w.proc is None for w in started)
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("oprt-bench worker")]


def test_a_cancelled_worker_never_starts_and_a_started_one_is_killed():
    """Prestarted.close() cancels workers still starting (a refused run exits at once): none may start after
    the cancel, and one already running is killed, not left to die mid-handshake with its parent."""
    w = BackendWorker(WorkerSource("numpy", "entrypoints"))
    w.cancel()
    w.start()
    assert w.proc is None and w.starts == 0 and not w.alive
    running = BackendWorker(WorkerSource("numpy", "entrypoints"))
    running.start()
    proc = running.proc
    assert running.alive
    running.cancel()
    proc.join(10)
    assert not proc.is_alive() and proc.exitcode == -signal.SIGKILL
