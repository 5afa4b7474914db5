"""Device faults of backend ``faultygpu`` (tests/plugins/oprt-faultyplugin): CuPy kernels that trap, write out of
bounds or spin on the planned cases. On a CUDA GPU with cupy, a sweep loses exactly the planned rows, each naming
its fault, and every other row is ok (the worker replaced after each sticky error); here, without one, the
backend is registered and unavailable with a reason, and scripts/check_faults.py is held to the CPU faults."""

from __future__ import annotations

import csv
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from bench_helpers import isolated_env, make_registry, run_script

from oprt_bench.sweep import Runners, SweepOptions, make_plan, run_sweep
from oprt_core.plugins import Registry, get_plugin_manager

faulty = pytest.importorskip("oprt_faultyplugin", reason="pip install ./tests/plugins/oprt-faultyplugin")
CHECK = Path(__file__).parents[2] / "scripts" / "check_faults.py"
CPU_PLAN = "copy/1000:segv,relu/1000:hang,softmax/64x1000-axis-1:raise"
GPU_PLAN = "relu/1000:trap,copy/33x65-transposed:oob,reduce_sum/64x1000-axis0:gpuhang"


def _check_module():
    spec = importlib.util.spec_from_file_location("check_faults", CHECK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _installed_faulty() -> Registry:
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(faulty, "faulty", "oprt-faultyplugin")
    return Registry(pm)


def test_the_plan_takes_the_gpu_actions_and_refuses_others():
    assert faulty.parse_plan("relu/1000:trap, copy/1000/f16:oob,softmax/64x1000-axis-1:gpuhang") == {
        "relu/1000": "trap", "copy/1000/f16": "oob", "softmax/64x1000-axis-1": "gpuhang"}
    with pytest.raises(ValueError, match="trap|oob|gpuhang"):
        faulty.parse_plan("relu/1000:explode")


def test_faultygpu_is_registered_and_says_why_it_cannot_run():
    gpu = pytest.importorskip("oprt_faultyplugin.gpu")
    backend = _installed_faulty().get_backend("faultygpu")
    assert isinstance(backend, gpu.FaultyGpuBackend)
    avail = backend.availability()
    if avail.ok:  # a CUDA host with cupy: the GPU test below runs instead
        assert "planned device faults" in avail.reason
    else:
        assert "cupy" in avail.reason and avail.reason.strip()


def test_cpu_faulty_ignores_the_gpu_actions(monkeypatch):
    """The CPU backend's behaviour is unchanged: a plan of GPU faults costs it nothing."""
    monkeypatch.setenv("OPRT_FAULTY_PLAN", GPU_PLAN)
    plan = make_plan(make_registry(faulty.FaultyBackend()), SweepOptions(
        ops="copy,relu,reduce_sum", backends="faulty", baseline="none", dtypes="f32", cases="smoke", mode="test",
        case_timeout_s=10))
    rows: list[dict] = []
    run_sweep(plan, rows.append)
    assert len(rows) == 8 and {r["status"] for r in rows} == {"ok"}


def test_check_faults_passes_a_run_that_lost_only_the_planned_rows_and_fails_others(tmp_path):
    out = tmp_path / "run"
    env = isolated_env(OPRT_PLUGINS="numpy,faulty", OPRT_FAULTY_PLAN=CPU_PLAN)
    p = run_script("--no-calibrate", "--backends", "faulty,numpy", "--cases", "smoke", "--dtypes", "f32",
                   "--time-budget", "0.005", "--case-timeout", "15", "--out", str(out), env=env)
    assert p.returncode == 1, p.stderr

    def check(plan: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(CHECK), str(out), "--plan", plan, "--backend", "faulty"],
                              capture_output=True, text=True, timeout=60)

    good = check(CPU_PLAN)
    assert good.returncode == 0 and good.stdout.rstrip().endswith("PASS"), good.stdout
    assert good.stdout.count("\nok    faulty ") + good.stdout.startswith("ok    faulty ") == 3, good.stdout
    # a plan that does not name the raise: its error row is unplanned, and the check says so
    partial = check("copy/1000:segv,relu/1000:hang")
    assert partial.returncode == 1 and "FAIL faulty softmax/64x1000-axis-1/f32: error" in partial.stdout
    # a planned case the run did not lose, and a fault named wrongly
    wrong = check(CPU_PLAN.replace("relu/1000:hang", "relu/1000:trap") + ",vector_add/1000:raise")
    assert wrong.returncode == 1
    assert "relu/1000/f32 [trap]: the message does not name the fault (launch failure" in wrong.stdout
    assert "vector_add/1000/f32 [raise]: ok, expected error" in wrong.stdout
    assert check("copy:segv").returncode == 2


def test_check_faults_rows_of_every_dtype():
    mod = _check_module()
    rows = [dict(backend="faultygpu", op="relu", case="1000", dtype=dt, status="error",
                 message="launch failure (a trap or another kernel exception) (sticky device error; worker "
                         "replaced): CUDARuntimeError: cudaErrorLaunchFailure: unspecified launch failure")
            for dt in ("f32", "f16")]
    rows.append(dict(backend="faultygpu", op="softmax", case="64x1000-axis-1", dtype="f16", status="error",
                     message="launch failure (sticky device error): CUDARuntimeError: cudaErrorLaunchFailure"))
    assert mod.check(rows[:2], mod.parse_plan("relu/1000:trap"), "faultygpu") == []
    problems = mod.check(rows, mod.parse_plan("relu/1000:trap"), "faultygpu")
    assert problems == ["faultygpu softmax/64x1000-axis-1/f16: error (launch failure (sticky device error): "
                        "CUDARuntimeError: cudaErrorLaunchFailure), expected ok"]


def _gpu_backend():
    gpu = pytest.importorskip("oprt_faultyplugin.gpu")
    backend = gpu.FaultyGpuBackend()
    avail = backend.availability()
    if not avail.ok:
        pytest.skip(f"faultygpu unavailable: {avail.reason}")
    return backend


def test_device_faults_cost_their_rows_only(monkeypatch):
    """GPU: trap, out-of-bounds store and a spinning kernel; every other row (softmax last: CuPy's own kernels,
    after every fault) is ok."""
    backend = _gpu_backend()
    monkeypatch.setenv("OPRT_FAULTY_PLAN", GPU_PLAN)
    plan = make_plan(make_registry(backend), SweepOptions(
        ops="copy,relu,reduce_sum,softmax", backends="faultygpu", baseline="none", dtypes="f32,f16", cases="smoke",
        mode="test", case_timeout_s=10))
    rows: list[dict] = []
    with Runners(plan) as runners:
        run_sweep(plan, rows.append, runners=runners)
        restarts = runners.workers["faultygpu"].restarts_after_device_error
    mod = _check_module()
    assert mod.check(rows, mod.parse_plan(GPU_PLAN), "faultygpu") == []
    assert restarts == 4  # trap and oob, f32 and f16; the hangs are killed on timeout
    assert [r["status"] for r in rows if r["op"] == "softmax"] == ["ok"] * 4


def test_faultygpu_beside_the_installed_backends_through_the_console_script(tmp_path):
    """GPU: the installed entry point (workers rebuild it), as the GPU suite's isolation phase runs it."""
    _gpu_backend()
    out = tmp_path / "run"
    env = isolated_env(OPRT_PLUGINS="numpy,faulty", OPRT_FAULTY_PLAN=GPU_PLAN)
    p = run_script("--no-calibrate", "--backends", "faultygpu,numpy", "--cases", "smoke", "--dtypes", "f32",
                   "--time-budget", "0.005", "--case-timeout", "10", "--out", str(out), env=env, timeout=300)
    assert p.returncode == 1, p.stderr
    rows = list(csv.DictReader((out / "results.csv").open()))
    mod = _check_module()
    assert mod.check(rows, mod.parse_plan(GPU_PLAN), "faultygpu") == []
