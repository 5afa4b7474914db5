"""Results integrity and plugin misbehaviour: rows flushed as written, --resume, no overwrite,
availability checks that raise or hang, registrations that raise or clash."""

from __future__ import annotations

import csv
import json
import threading

import pytest
from bench_helpers import isolated_env, make_registry, run_script
from click.testing import CliRunner

from oprt_bench.cli import cli
from oprt_bench.results import COLUMNS, RowWriter
from oprt_bench.sweep import SweepOptions, make_plan
from oprt_core import Availability
from oprt_core.numpy_backend import NumpyBackend


def invoke(registry, *args: str):
    return CliRunner().invoke(cli, ["--no-calibrate", *args], obj={"registry": registry})


def _rows(path):
    return list(csv.DictReader((path / "results.csv").open()))


# -- flushing -------------------------------------------------------------------------------------

def test_rows_are_on_disk_as_soon_as_written(tmp_path):
    path = tmp_path / "results.csv"
    w = RowWriter(path)
    w.write({"op": "copy", "case": "1", "status": "ok"})
    # another reader, before close: the header and the row are there
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == 1 and rows[0]["op"] == "copy" and tuple(rows[0]) == COLUMNS
    w.write({"op": "relu", "case": "2", "status": "error", "message": "worker crashed"})
    assert len(list(csv.DictReader(path.open()))) == 2
    w.close()


# -- --resume -------------------------------------------------------------------------------------

SWEEP = ("--ops", "copy,relu", "--dtypes", "f32,f16", "--cases", "smoke", "--time-budget", "0.005", "-q")


def _interrupted_run(registry, tmp_path, keep: int):
    out = tmp_path / "run"
    r = invoke(registry, *SWEEP, "--out", str(out))
    assert r.exit_code == 0, r.output
    full = _rows(out)
    lines = (out / "results.csv").read_text().splitlines(keepends=True)
    # as if killed while writing row keep+1: a half line at the end
    (out / "results.csv").write_text("".join(lines[:1 + keep]) + lines[1 + keep][:17])
    meta = json.loads((out / "run.json").read_text())
    meta.update(status="running", finished_utc=None)
    (out / "run.json").write_text(json.dumps(meta))
    (out / "report.html").unlink()
    return out, full


def test_resume_measures_only_missing_rows(registry, tmp_path):
    out, full = _interrupted_run(registry, tmp_path, keep=3)
    kept = _rows(out)[:3]
    r = invoke(registry, "--resume", str(out))  # options come from the run itself
    assert r.exit_code == 0, r.output
    rows = _rows(out)
    assert len(rows) == len(full) == 10
    assert rows[:3] == kept  # untouched, not re-measured
    keys = [(x["op"], x["case"], x["dtype"], x["backend"]) for x in rows]
    assert len(set(keys)) == 10 and set(keys) == {(x["op"], x["case"], x["dtype"], x["backend"]) for x in full}
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "complete" and meta["counts"] == {"ok": 10}
    assert len(meta["resumed"]) == 1 and meta["resumed"][0]["skipped_rows"] == 3
    assert len(json.loads((out / "results.json").read_text())["rows"]) == 10
    assert (out / "report.html").exists()
    # resuming a complete run measures nothing and changes no row
    r = invoke(registry, "--resume", str(out))
    assert r.exit_code == 0 and _rows(out) == rows and "10 rows (10 ok)" in r.stdout


@pytest.mark.parametrize(("args", "fragment"), [
    (["--seed", "3"], "seed was 0, is now 3"),
    (["--mode", "test"], "mode was 'all', is now 'test'"),
    (["--warm"], "timing cold was True, is now False"),
    (["--time-budget", "0.2"], "timing time_budget_s was 0.005, is now 0.2"),
])
def test_resume_refuses_a_different_provenance(registry, tmp_path, args, fragment):
    out, _ = _interrupted_run(registry, tmp_path, keep=2)
    before = (out / "results.csv").read_bytes()
    r = invoke(registry, "--resume", str(out), *args)
    assert r.exit_code == 2
    line = r.stderr.strip()
    assert "\n" not in line and line.startswith("oprt-bench: error: --resume") and fragment in line, line
    assert "start a new run instead" in line
    assert (out / "results.csv").read_bytes() == before  # nothing written


def test_resume_refuses_another_device_or_version(registry, tmp_path):
    out, _ = _interrupted_run(registry, tmp_path, keep=2)
    meta = json.loads((out / "run.json").read_text())
    meta["backends"]["numpy"]["device_info"]["flavour"] = "numpy-0.1"
    (out / "run.json").write_text(json.dumps(meta))
    r = invoke(registry, "--resume", str(out))
    assert r.exit_code == 2 and "backend numpy flavour was 'numpy-0.1'" in r.stderr
    meta["backends"]["numpy"]["device_info"]["flavour"] = json.loads(
        json.dumps(make_plan(registry, SweepOptions()).backends[0].device_info))["flavour"]
    meta["versions"]["oprt-core"] = "0.0.0"
    (out / "run.json").write_text(json.dumps(meta))
    r = invoke(registry, "--resume", str(out))
    assert r.exit_code == 2 and "oprt-core version was '0.0.0'" in r.stderr


def test_resume_mistakes(registry, tmp_path):
    r = invoke(registry, "--resume", str(tmp_path / "missing"))
    assert r.exit_code == 2 and "is not a run folder" in r.stderr
    out, _ = _interrupted_run(registry, tmp_path, keep=1)
    r = invoke(registry, "--resume", str(out), "--out", str(tmp_path / "other"))
    assert r.exit_code == 2 and "--out and --resume exclude each other" in r.stderr
    (out / "results.csv").unlink()
    r = invoke(registry, "--resume", str(out))
    assert r.exit_code == 2 and "has no results.csv" in r.stderr


def test_resume_refuses_a_run_another_process_writes(registry, tmp_path):
    """A run's results.csv is locked while a process writes it: a second process's --resume of the folder is
    refused before it writes anything (both would append the same rows), and goes ahead once the lock is gone (the
    system drops it when the writer ends, killed or not)."""
    pytest.importorskip("fcntl")
    from oprt_bench.results import open_rows_file

    out, _ = _interrupted_run(registry, tmp_path, keep=2)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    held = open_rows_file(out / "results.csv")  # as the running sweep's writer holds it
    try:
        r = invoke(registry, "--resume", str(out))
        assert r.exit_code == 2, r.output
        line = r.stderr.strip()
        assert "\n" not in line and "is being written by another oprt-bench process" in line, line
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    finally:
        held.close()
    r = invoke(registry, "--resume", str(out))
    assert r.exit_code == 0, r.output
    assert len(_rows(out)) == 10


def test_resume_refuses_a_merged_run(registry, tmp_path):
    """A merged folder has no sweep of its own (its run.json holds its sources, not their options): refused."""
    a, b, merged = tmp_path / "a", tmp_path / "b", tmp_path / "merged"
    for out in (a, b):
        assert invoke(registry, *SWEEP, "--out", str(out)).exit_code == 0
    assert invoke(registry, "merge", str(a), str(b), "--on-duplicate", "rename", "--out", str(merged)).exit_code == 0
    before = {p.name: p.read_bytes() for p in merged.iterdir()}
    r = invoke(registry, "--resume", str(merged))
    assert r.exit_code == 2 and "is a merged run" in r.stderr, r.output
    assert {p.name: p.read_bytes() for p in merged.iterdir()} == before


def test_a_run_folder_is_never_overwritten(registry, tmp_path):
    from oprt_bench.errors import UsageError
    from oprt_bench.results import create_run_dir

    out = tmp_path / "run"
    assert invoke(registry, *SWEEP, "--out", str(out)).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    r = invoke(registry, *SWEEP, "--out", str(out))
    assert r.exit_code == 2 and "never overwritten" in r.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    with pytest.raises(UsageError, match="never overwritten"):  # a folder filled between check and create
        create_run_dir(out)


# -- plugin misbehaviour ------------------------------------------------------------------------------

class _Release:
    """Lets hung availability threads finish at the end of the test."""

    event = threading.Event()


class HangingAvailability(NumpyBackend):
    name = "hangs"

    def availability(self) -> Availability:
        _Release.event.wait(60)
        return Availability(True)


class RaisingAvailability(NumpyBackend):
    name = "raises"

    def availability(self) -> Availability:
        raise RuntimeError("driver library mismatch")


@pytest.fixture
def misbehaving():
    _Release.event.clear()
    yield make_registry(HangingAvailability(), RaisingAvailability())
    _Release.event.set()


def test_backends_lists_hanging_and_raising_availability(misbehaving):
    r = CliRunner().invoke(cli, ["backends", "--json", "--availability-timeout", "0.3"], obj={"registry": misbehaving})
    assert r.exit_code == 0, r.output
    rows = {b["name"]: b for b in json.loads(r.stdout)["backends"]}
    assert rows["hangs"]["available"] is False
    assert rows["hangs"]["reason"] == "availability check timed out after 0.3 s"
    assert rows["raises"]["available"] is False
    assert rows["raises"]["reason"] == "availability check raised RuntimeError: driver library mismatch"
    assert rows["numpy"]["available"] is True


def test_sweep_skips_misbehaving_backends_and_runs_the_others(misbehaving, tmp_path):
    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["--no-calibrate", "--availability-timeout", "0.3", "--ops", "copy", "--dtypes", "f32",
                                 "--cases", "smoke", "--mode", "test", "--out", str(out)],
                           obj={"registry": misbehaving})
    assert r.exit_code == 0, r.output
    assert "backend 'hangs' skipped: availability check timed out after 0.3 s" in r.stdout
    assert "backend 'raises' skipped: availability check raised RuntimeError" in r.stdout
    assert {row["backend"] for row in _rows(out)} == {"numpy"}
    r = CliRunner().invoke(cli, ["--no-calibrate", "--availability-timeout", "0.3", "--backends", "hangs",
                                 "--out", str(tmp_path / "x")], obj={"registry": misbehaving})
    assert r.exit_code == 2 and "backend 'hangs' is unavailable: availability check timed out" in r.stderr


def test_registration_that_raises_or_clashes_is_reported_and_the_others_run(tmp_path):
    """The installed oprt-testplugin: testraises' hook raises, testduplicate registers a second 'numpy'."""
    env = isolated_env(OPRT_PLUGINS="numpy,testbackend,testraises,testduplicate")
    p = run_script("backends", "--json", env=env)
    if p.returncode == 0 and "testraises" not in p.stdout:
        pytest.skip("oprt-testplugin is not installed")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    plugins = {x["name"]: x for x in doc["plugins"]}
    assert "RuntimeError: oprt_testplugin.raising_hook: deliberate failure" in plugins["testraises"]["error"]
    assert "backend name 'numpy' is already registered by plugin 'numpy'" in plugins["testduplicate"]["error"]
    assert {b["name"] for b in doc["backends"]} == {"numpy", "testbackend"}
    out = tmp_path / "run"
    p = run_script("--no-calibrate", "--ops", "copy", "--dtypes", "f32", "--cases", "smoke", "--mode", "test",
                   "--out", str(out), env=env)
    assert p.returncode == 0, p.stderr
    assert {row["backend"] for row in _rows(out)} == {"numpy", "testbackend"}
    assert {row["status"] for row in _rows(out)} == {"ok"}
