"""The installed console script as a real subprocess: end to end on numpy, user mistakes, plugins, SIGINT."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import textwrap
import time

import pandas as pd
import pytest
from bench_helpers import SCRIPT, builtin_ops, builtin_smoke_cases, isolated_env, run_script

from oprt_bench.results import COLUMNS


def test_smoke_sweep_end_to_end(smoke_run):
    rows = pd.read_csv(smoke_run / "results.csv", keep_default_na=False)
    assert tuple(rows.columns) == COLUMNS
    assert set(rows["backend"]) == {"numpy"} and set(rows["status"]) == {"ok"}
    assert set(rows["op"]) == {spec.name for spec in builtin_ops()}
    assert set(rows["dtype"]) == {"f32", "f16", "bf16"}
    assert len(rows) == 3 * builtin_smoke_cases()  # every built-in op's smoke cases, 3 dtypes
    timed = rows.astype({"median_ms": float, "p10_ms": float, "p90_ms": float, "min_ms": float, "gbps": float})
    assert ((timed["min_ms"] <= timed["p10_ms"]) & (timed["p10_ms"] <= timed["median_ms"])
            & (timed["median_ms"] <= timed["p90_ms"])).all()
    assert (timed["samples"] >= 5).all() and (timed["gbps"] > 0).all()
    assert set(rows["timing"]) == {"cold"} and set(rows["baseline"]) == {"numpy"}
    # calibrated: % of the measured host copy bandwidth; no spec peak known for a CPU: empty, not made up
    assert (timed["pct_of_peak"].astype(float) > 0).all()
    assert set(rows["pct_of_spec"]) == {""}

    meta = json.loads((smoke_run / "run.json").read_text())
    assert meta["status"] == "complete" and meta["seed"] == 7 and meta["exit_code"] == 0
    assert meta["argv"][1:3] == ["--backends", "numpy"]
    assert meta["versions"]["oprt-bench"] and meta["versions"]["oprt-core"] and meta["host"]["hostname"]
    assert meta["backends"]["numpy"]["device_info"]["flavour"].startswith("numpy-")
    assert meta["started_utc"] <= meta["finished_utc"]
    shown = (smoke_run.parent / "stdout.txt").read_text()
    assert "calibrating numpy" in shown and "numpy: measured peak" in shown and "numpy: timer floor" in shown
    cal = meta["backends"]["numpy"]["calibration"]
    assert cal["method"] == "copy_probe" and cal["measured_peak_gbps"] > 0 and cal["samples"] >= 5
    assert cal["bytes_per_sample"] == 2 * cal["buffer_bytes"] and cal["timing"] == "cold"
    assert meta["backends"]["numpy"]["peak"] == {"gbps": cal["measured_peak_gbps"], "source": "measured"}
    timer = meta["backends"]["numpy"]["timer"]
    assert timer["floor_ms"] > 0 and timer["launch_bound_below_ms"] == 10 * timer["floor_ms"]
    doc = json.loads((smoke_run / "results.json").read_text())
    assert len(doc["rows"]) == len(rows) and doc["run"]["status"] == "complete"

    html = (smoke_run / "report.html").read_text()
    n_ops = len(builtin_ops())
    assert html.count("<table class='op sortable'") == n_ops and html.count("<svg") == n_ops + 1  # GB/s each, roofline
    # nothing to fetch: no external src/href/url(), one inline script, no stylesheets links, no @import
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)|url\(\s*["']?(https?:|//)|@import""", html)
    assert html.count("<script") == 1 and "<script>" in html and "<link" not in html and "<img" not in html


def test_user_mistakes_subprocess(tmp_path):
    cases = [
        (["--ops", "copy,nope"], "unknown op 'nope'; valid choices: add_rms_norm, all, copy"),
        (["--backends", "nvidia"], "unknown backend 'nvidia'; valid choices: all, numpy"),
        (["--dtypes", "fp64"], "unknown dtype 'fp64'"),
        (["--shape", "4x4x"], "malformed shape '4x4x'"),
        (["--out", str(tmp_path / "f" / "run")], "is not writable"),
    ]
    (tmp_path / "f").write_text("a file, not a folder")
    for args, fragment in cases:
        p = run_script(*args, "--cases", "smoke")
        assert p.returncode == 2, (args, p.stderr)
        assert p.stderr.count("\n") == 1 and p.stderr.startswith("oprt-bench: error: ") and fragment in p.stderr, args
        assert p.stdout == ""
    assert not (tmp_path / "results").exists()


def _fake_plugin_dist(site) -> None:
    """An installed distribution (dist-info on PYTHONPATH) whose entry point registers an unavailable backend."""
    site.mkdir()
    (site / "oprt_fake_gpu.py").write_text(textwrap.dedent("""
        from oprt_core import Availability, hookimpl
        from oprt_core.numpy_backend import NumpyBackend

        class FakeGpu(NumpyBackend):
            name = "fakegpu"

            def availability(self):
                return Availability(False, "no CUDA driver found (test double)")

        @hookimpl
        def oprt_register_backends(register):
            register(FakeGpu())
    """))
    info = site / "oprt_fake_gpu-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: oprt-fake-gpu\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[oprt]\nfakegpu = oprt_fake_gpu\n")


def test_named_unavailable_backend_from_an_installed_plugin(tmp_path):
    site = tmp_path / "site"
    _fake_plugin_dist(site)
    env = isolated_env(OPRT_PLUGINS="numpy,fakegpu", PYTHONPATH=str(site))
    p = run_script("backends", "--json", env=env)
    assert p.returncode == 0, p.stderr
    backends = {b["name"]: b for b in json.loads(p.stdout)["backends"]}
    assert backends["fakegpu"]["available"] is False and "no CUDA driver" in backends["fakegpu"]["reason"]
    out = tmp_path / "run"
    p = run_script("--backends", "fakegpu", "--cases", "smoke", "--out", str(out), env=env)
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert "backend 'fakegpu' is unavailable: no CUDA driver found (test double); available backends: numpy" in p.stderr
    assert not out.exists()
    # 'all' skips it with a note instead
    p = run_script("--ops", "copy", "--dtypes", "f32", "--cases", "smoke", "--mode", "test", "--out", str(out),
                   env=env)
    assert p.returncode == 0, p.stderr
    assert "backend 'fakegpu' skipped: no CUDA driver found" in p.stdout


def test_sigint_keeps_rows_and_writes_the_report(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen([str(SCRIPT), "--no-calibrate", "--ops", "softmax,copy", "--backends", "numpy",
                             "--cases", "default", "--time-budget", "0.3", "--out", str(out)], env=isolated_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    csv_path = out / "results.csv"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        if csv_path.exists() and len(csv_path.read_text().splitlines()) >= 3:  # header + 2 rows
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted by SIGINT" in stderr and "Traceback" not in stderr
    rows = list(csv.DictReader(csv_path.open()))
    assert 2 <= len(rows) < 2 * 6 * 3
    assert all(r["status"] == "ok" for r in rows)
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "interrupted (SIGINT)" and meta["exit_code"] == 130
    html = (out / "report.html").read_text()
    assert "<table class='op sortable'" in html and rows[0]["case"] in html


def _sweep_args(out):
    return [str(SCRIPT), "--backends", "numpy", "--ops", "relu,softmax", "--cases", "smoke", "--no-calibrate",
            "--time-budget", "0.01", "--out", str(out)]


def test_a_reader_that_leaves_the_progress_lines_does_not_stop_the_sweep(tmp_path):
    """``oprt-bench ... | head -1``: the progress lines' reader goes away after the first; the sweep still runs every
    row and completes its run (click ends the command quietly, exit 1, when the table finds the pipe gone)."""
    if not SCRIPT.exists():
        pytest.skip(f"console script {SCRIPT} is not installed")
    out = tmp_path / "run"
    proc = subprocess.Popen(_sweep_args(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=isolated_env())
    first = proc.stdout.readline()
    proc.stdout.close()  # as head does after its line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) in (0, 1) and first.startswith(b"[1/")
    assert "Traceback" not in err and err.strip() == "", err
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == 15 and {r["status"] for r in rows} == {"ok"}
    assert json.loads((out / "run.json").read_text())["status"] == "complete"


def test_a_closed_stdout_is_written_to_nowhere(tmp_path):
    """stdout closed by the caller (``>&-``, a cron job's): the sweep and the table command run as usual."""
    out = tmp_path / "run"
    proc = subprocess.run(_sweep_args(out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=isolated_env(),
                          timeout=120, preexec_fn=lambda: os.close(1))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    assert len(list(csv.DictReader((out / "results.csv").open()))) == 15
    table = subprocess.run([str(SCRIPT), "table", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           env=isolated_env(), timeout=60, preexec_fn=lambda: os.close(1))
    assert table.returncode == 0 and table.stderr == b""


def test_an_unwritable_report_path_is_one_line_and_leaves_nothing_behind(smoke_run, tmp_path):
    """An OS error (a path through a file, a full disk) is the error's one line and exit 1, no traceback."""
    (tmp_path / "afile").write_text("")
    proc = run_script("report", str(smoke_run), "--out", str(tmp_path / "afile" / "x.html"))
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("oprt-bench: error: [Errno 20] Not a directory")


def test_an_atomic_write_that_fails_keeps_the_old_file_and_no_temporary(tmp_path):
    from oprt_bench.results import write_text_atomic

    target = tmp_path / "run.json"
    target.write_text("old")
    write_text_atomic(target, "new")
    assert target.read_text() == "new"
    (tmp_path / "report.html").mkdir()  # the rename over a folder fails, as a full disk's write would
    (tmp_path / "report.html" / "x").write_text("")
    with pytest.raises(OSError):
        write_text_atomic(tmp_path / "report.html", "text")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "run.json"]
