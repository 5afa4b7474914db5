"""``--cluster`` and ``oprt-bench worker`` (oprt_bench.fleet) on real Dask clusters of this host: the numpy backend
and the test plugin's ``testbackend``; smoke cases, a few ops, warm timing, so the file stays quick."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench_helpers import SCRIPT, isolated_env, run_script

pytest.importorskip("distributed", reason="the fleet extra (dask, distributed) is not installed")

from oprt_bench.fleet import ClusterOptions, _Pairing, local_layout, visible_devices  # noqa: E402
from oprt_bench.model import Row, SweepOptions  # noqa: E402
from oprt_bench.placement import host_label, visible_env  # noqa: E402
from oprt_bench.results import COLUMNS  # noqa: E402

FAST = ("--cases", "smoke", "--dtypes", "f32", "--warm", "--time-budget", "0.02")
KEY = ("op", "case", "dtype", "backend")


def _env() -> dict[str, str]:
    return isolated_env(OPRT_PLUGINS="numpy,testbackend", DASK_DISTRIBUTED__WORKER__DAEMON="False",
                        DASK_LOGGING__DISTRIBUTED="error")


def _rows(run: Path) -> list[dict[str, str]]:
    with (run / "results.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def _keys(rows: list[dict[str, str]]) -> list[tuple[str, ...]]:
    return sorted(tuple(r[k] for k in KEY) for r in rows)


@pytest.fixture(scope="module")
def single_and_cluster(tmp_path_factory) -> tuple[Path, Path, str]:
    """The same smoke sweep on numpy in one process and on a local cluster of two worker processes."""
    tmp = tmp_path_factory.mktemp("fleet")
    args = ("--backends", "numpy", "--ops", "copy,relu,softmax", *FAST, "--no-calibrate")
    one = run_script(*args, "--out", str(tmp / "one"), env=_env())
    assert one.returncode == 0, one.stderr
    two = run_script(*args, "--cluster", "local", "--workers", "2", "--out", str(tmp / "two"), env=_env())
    assert two.returncode == 0, two.stderr + two.stdout
    return tmp / "one", tmp / "two", two.stdout


def test_local_cluster_gives_the_case_set_of_a_single_process_run(single_and_cluster):
    one, two, stdout = single_and_cluster
    a, b = _rows(one), _rows(two)
    assert len(b) >= 5 and _keys(a) == _keys(b)
    assert {r["status"] for r in b} == {"ok"} and all(float(r["median_ms"]) > 0 for r in b)
    assert tuple(b[0]) == COLUMNS and {r["host"] for r in b} == {host_label({})}
    assert {r["seed"] for r in a} == {r["seed"] for r in b}  # the same inputs
    meta = json.loads((two / "run.json").read_text())
    assert len(meta["cluster"]["workers"]) == 2 and meta["status"] == "complete"
    assert {p.name for p in two.iterdir()} >= {"results.csv", "results.json", "report.html"}
    assert "[1/" in stdout and f"[{len(b)}/{len(b)}]" in stdout  # progress as rows arrive


def test_resume_a_run_on_a_local_cluster(single_and_cluster, tmp_path):
    one = single_and_cluster[0]
    run = tmp_path / "run"
    shutil.copytree(one, run)
    lines = (run / "results.csv").read_text().splitlines(keepends=True)
    (run / "results.csv").write_text("".join(lines[:3]))  # the header and two rows kept
    again = run_script("--resume", str(run), "--cluster", "local", "--workers", "1", env=_env())
    assert again.returncode == 0, again.stderr
    assert "2 rows already measured are kept" in again.stdout
    assert _keys(_rows(run)) == _keys(_rows(one))


def _start(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(cmd, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(5)


@pytest.fixture
def scheduler(tmp_path):
    """A Dask scheduler on this host (its address file), stopped afterwards with every worker started here."""
    if not SCRIPT.exists():
        pytest.skip(f"console script {SCRIPT} is not installed")
    file = tmp_path / "scheduler.json"
    procs = [_start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                     "--no-dashboard", "--scheduler-file", str(file)], _env(), tmp_path / "scheduler.log")]
    deadline = time.monotonic() + 30
    while not file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert file.exists(), (tmp_path / "scheduler.log").read_text()
    yield file, procs
    _stop(procs)


def _worker(file: Path, procs: list, tmp_path: Path, backends: str, name: str) -> subprocess.Popen:
    p = _start([str(SCRIPT), "worker", "--scheduler-file", str(file), "--backends", backends, "--name", name],
               _env(), tmp_path / f"{name}.log")
    procs.append(p)
    return p


def _wait_workers(file: Path, n: int) -> None:
    from distributed import Client

    with Client(scheduler_file=str(file), timeout="20s") as client:
        client.wait_for_workers(n, timeout=40)


def test_two_hosts_with_different_backends_give_one_run_and_report(scheduler, tmp_path):
    file, procs = scheduler
    _worker(file, procs, tmp_path, "numpy", "host-a")
    _worker(file, procs, tmp_path, "testbackend", "host-b")
    _wait_workers(file, 2)
    out = tmp_path / "run"
    proc = run_script("--backends", "numpy,testbackend", "--ops", "copy,negate", *FAST, "--scheduler-file", str(file),
                      "--out", str(out), env=_env())
    assert proc.returncode == 0, proc.stderr + proc.stdout
    rows = _rows(out)
    by_backend = {b: [r for r in rows if r["backend"] == b] for b in ("numpy", "testbackend")}
    assert all(by_backend.values()) and len(rows) == sum(map(len, by_backend.values()))
    # negate is the plugin's op: testbackend runs it, numpy says unsupported; both halves in one folder
    assert {r["status"] for r in by_backend["testbackend"]} == {"ok"}
    assert {r["status"] for r in by_backend["numpy"] if r["op"] == "negate"} == {"unsupported"}
    ok_tb = [r for r in by_backend["testbackend"] if r["op"] == "copy"]
    assert ok_tb and all(float(r["speedup"]) > 0 for r in ok_tb)  # against numpy's rows from the other worker
    meta = json.loads((out / "run.json").read_text())
    names = {w["name"]: sorted(w["backends"]) for w in meta["cluster"]["workers"].values()}
    assert names == {"host-a": ["numpy"], "host-b": ["testbackend"]}
    for b in ("numpy", "testbackend"):  # calibration per device, measured on the worker that ran the rows
        devices = meta["backends"][b]["devices"]
        assert devices and all(d["calibration"]["measured_peak_gbps"] > 0 for d in devices.values())
    html = (out / "report.html").read_text()
    assert "testbackend" in html and "negate" in html


def test_a_worker_killed_mid_run_loses_no_row(scheduler, tmp_path):
    file, procs = scheduler
    victim = _worker(file, procs, tmp_path, "numpy", "victim")
    _worker(file, procs, tmp_path, "numpy", "survivor")
    _wait_workers(file, 2)
    out = tmp_path / "run"
    args = [str(SCRIPT), "--backends", "numpy", "--ops", "copy,relu,softmax,reduce_sum", "--cases", "smoke",
            "--dtypes", "f32,f16", "--warm", "--time-budget", "0.15", "--no-calibrate", "--target-ci", "0",
            "--scheduler-file", str(file), "--out", str(out), "--table", "none"]
    run = subprocess.Popen(args, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline and (not (out / "results.csv").exists() or len(_rows(out)) < 2):
        time.sleep(0.05)
    os.killpg(victim.pid, signal.SIGKILL)  # the worker and the backend worker it runs rows in
    stdout, stderr = run.communicate(timeout=60)
    assert victim.poll() is not None
    assert run.returncode in (0, 1), stderr
    rows = _rows(out)
    planned = json.loads((out / "run.json").read_text())["plan"]
    n = sum(len(c) for c in planned["cases"].values()) * len(planned["dtypes"])
    assert len(rows) == n and len(set(_keys(rows))) == n, stdout  # every row once, none lost
    lost = [r for r in rows if r["status"] != "ok"]
    assert all(r["status"] == "error" and "cluster" in r["message"] for r in lost)
    assert len(lost) < n


def _invoke(*args: str):
    from bench_helpers import make_registry
    from click.testing import CliRunner

    from oprt_bench.cli import cli

    return CliRunner().invoke(cli, list(args), obj={"registry": make_registry()})


@pytest.mark.parametrize("args, message", [
    (("--cluster", "local", "--scheduler-file", "x.json"), "exclude each other"),
    (("--workers", "3"), "--workers applies to --cluster local"),
    (("--cluster", "local", "--workers", "0"), "--workers must be at least 1"),
    (("--cluster", "nowhere"), "give local, or a scheduler address"),
    (("--scheduler-file", "missing.json"), "does not exist"),
])
def test_cluster_option_mistakes_are_one_line_errors(tmp_path, args, message):
    r = _invoke("--backends", "numpy", *args, "--out", str(tmp_path / "run"))
    assert r.exit_code == 2 and message in r.output and len(r.output.strip().splitlines()) == 1, r.output
    assert not (tmp_path / "run").exists()


def test_without_dask_the_option_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails as where it is not installed
    for args in (("--backends", "numpy", "--cluster", "local", "--out", str(tmp_path / "run")),
                 ("worker", "tcp://127.0.0.1:1")):
        r = _invoke(*args)
        assert r.exit_code == 2 and "pip install ./oprt_bench[fleet]" in r.output, r.output
        assert len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_worker_refuses_an_unknown_backend_or_a_missing_scheduler():
    r = _invoke("worker", "tcp://127.0.0.1:1", "--backends", "nosuch")
    assert r.exit_code == 2 and "unknown backend 'nosuch'" in r.output
    r = _invoke("worker")
    assert r.exit_code == 2 and "give the scheduler's address" in r.output


def test_local_layout_pins_one_worker_per_visible_gpu():
    from oprt_core import Availability, DeviceInfo
    from oprt_core.numpy_backend import NumpyBackend

    class Gpu(NumpyBackend):
        name = "nvidia"

        def availability(self):
            return Availability(True, "1 device", "NVIDIA H200")

        def device_info(self):
            return DeviceInfo(name="NVIDIA H200", vendor="NVIDIA", memory_bytes=1 << 37, flavour="nvcc-13.0 sm_90")

    from bench_helpers import make_registry

    registry = make_registry(Gpu())
    workers, notes = local_layout(registry, SweepOptions(backends="nvidia", baseline="numpy"),
                                  environ={"CUDA_VISIBLE_DEVICES": "2,5"})
    assert [(w.env, w.backends) for w in workers] == [({"CUDA_VISIBLE_DEVICES": "2"}, ("nvidia", "numpy")),
                                                       ({"CUDA_VISIBLE_DEVICES": "5"}, ("nvidia", "numpy"))]
    assert "2 worker(s) for nvidia" in notes[0]
    cpu, _ = local_layout(registry, SweepOptions(backends="numpy", baseline="none"), cpu_workers=3)
    assert [w.backends for w in cpu] == [("numpy",)] * 3 and all(not w.env for w in cpu)


def test_visible_devices_and_host_labels():
    nvidia = {"vendor": "NVIDIA", "memory_bytes": 1, "flavour": "nvcc-13.0 sm_90"}
    shim = {"vendor": "MetaX", "memory_bytes": 1, "flavour": "nvcc-shim"}
    maca = {"vendor": "MetaX", "memory_bytes": 1, "flavour": "mxcc"}
    assert [visible_env(i) for i in (nvidia, shim, maca, {"vendor": "x86_64"})] == [
        "CUDA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "MACA_VISIBLE_DEVICES", None]
    assert visible_devices("MACA_VISIBLE_DEVICES", {"MACA_VISIBLE_DEVICES": "0, 3"}) == ["0", "3"]
    assert host_label(maca, {"MACA_VISIBLE_DEVICES": "3"}).endswith(":3")
    assert ":" not in host_label({"vendor": "x86_64"}, {"CUDA_VISIBLE_DEVICES": "1"})


def test_rows_wait_for_their_baseline_for_the_speedup():
    out: list[Row] = []
    pairing = _Pairing("numpy", out.append)

    def row(backend: str, median: float) -> Row:
        return Row(op="copy", case="1000", shape="1000", dtype="f32", backend=backend, status="ok", median_ms=median)

    pairing.add(row("testbackend", 2.0))
    assert out == []  # its baseline is not done yet
    pairing.add(row("numpy", 4.0))
    assert [(r.backend, r.speedup) for r in out] == [("numpy", 1.0), ("testbackend", 2.0)]
    pairing.add(Row(op="relu", case="1000", shape="1000", dtype="f32", backend="testbackend", status="ok",
                    median_ms=1.0))
    pairing.flush()  # an interrupted run: written without a speedup, not lost
    assert out[-1].op == "relu" and out[-1].speedup is None


def test_cluster_options_check():
    ClusterOptions("tcp://10.0.0.1:8786").check()
    ClusterOptions("local", workers=4).check()


SLURM_CONFIG = Path(__file__).resolve().parents[2] / "docs" / "fleet" / "slurm-jobqueue.yaml"


def _slurm_config() -> dict:
    import yaml

    return yaml.safe_load(SLURM_CONFIG.read_text())["jobqueue"]["slurm"]


def test_the_slurm_example_advertises_oprt_backends_one_thread_per_gpu():
    slurm = _slurm_config()
    args = slurm["worker_extra_args"]
    resources = dict(pair.split("=") for pair in args[args.index("--resources") + 1].split())
    assert resources and all(k.startswith("oprt-backend-") and v == "1" for k, v in resources.items())
    assert slurm["cores"] == 1 and slurm["processes"] == 1 and "--gres=gpu:1" in slurm["job_extra_directives"]
    assert "export DASK_DISTRIBUTED__WORKER__DAEMON=False" in slurm["job_script_prologue"]


def test_the_slurm_example_makes_a_job_script(tmp_path, monkeypatch):
    pytest.importorskip("dask_jobqueue", reason="dask-jobqueue is not installed (pip install dask-jobqueue)")
    import dask
    monkeypatch.chdir(tmp_path)  # the cluster makes the example's log_directory in the working directory
    from dask_jobqueue import SLURMCluster

    # the example's keys over dask-jobqueue's defaults, as ~/.config/dask/jobqueue.yaml would be
    with dask.config.set({f"jobqueue.slurm.{k}": v for k, v in _slurm_config().items()}):
        cluster = SLURMCluster(scheduler_options={"host": "127.0.0.1", "dashboard_address": None})
        try:
            script = cluster.job_script()  # built, never submitted
        finally:
            cluster.close()
    assert "#SBATCH --gres=gpu:1" in script and "#SBATCH --cpus-per-task=4" in script
    assert "--nthreads 1" in script and "oprt-backend-nvidia=1" in script
    assert "DASK_DISTRIBUTED__WORKER__DAEMON=False" in script
