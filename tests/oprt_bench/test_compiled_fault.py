"""A compiled backend's sticky C status (OPRT_STATUS_DEVICE_FAULT) in a sweep: the faulting row names the fault,
the worker is replaced, every other row is ok. The compiled backend is the host C library of the core tests
(tests/oprt_core/host_lib), faulting on every relu launch (OPRT_HOST_FAULT_OPS=relu) and staying faulted
afterwards, as a CUDA context does after an illegal address."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from bench_helpers import make_registry

from oprt_bench.sweep import Runners, SweepOptions, make_plan, run_sweep
from oprt_core.compiled import CompiledBackend

pytest.importorskip("cffi")
LIB_ENV = "OPRT_TEST_HOST_LIB"


def _host_conftest():
    spec = importlib.util.spec_from_file_location(
        "oprt_core_host_conftest", Path(__file__).parents[1] / "oprt_core" / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class HostLibBackend(CompiledBackend):
    """The host library at $OPRT_TEST_HOST_LIB; built again from its class in the worker (it cannot be pickled)."""

    def __init__(self) -> None:
        super().__init__("hostlib", _host_conftest().host_loader(os.environ[LIB_ENV]), vendor="host")


@pytest.fixture(scope="module")
def host_lib(tmp_path_factory) -> Path:
    return _host_conftest().build_host_library(tmp_path_factory.mktemp("host_lib"))


def test_a_device_fault_status_replaces_the_worker(host_lib, monkeypatch):
    monkeypatch.setenv(LIB_ENV, str(host_lib))
    monkeypatch.setenv("OPRT_HOST_FAULT_OPS", "relu")
    backend = HostLibBackend()
    assert backend.availability().ok
    plan = make_plan(make_registry(backend), SweepOptions(
        ops="copy,relu,softmax", backends="hostlib", baseline="none", dtypes="f32", cases="smoke", mode="test",
        case_timeout_s=20))
    rows: list[dict] = []
    with Runners(plan) as runners:
        run_sweep(plan, rows.append, runners=runners)
        worker = runners.workers["hostlib"]
        restarts, starts = worker.restarts_after_device_error, worker.starts
    relu = [r for r in rows if r["op"] == "relu"]
    others = [r for r in rows if r["op"] != "relu"]
    assert len(relu) == 3 and len(others) == 4
    for r in relu:
        assert r["status"] == "error"
        assert r["message"].startswith("illegal memory access (sticky device error; worker replaced): "
                                       "DeviceFaultError: hostlib [OPRT_STATUS_DEVICE_FAULT]: oprt_relu: "), r
    # without the replacement, the rows after the first relu would fail with the sticky fault too
    assert all(r["status"] == "ok" for r in others), [(r["op"], r["case"], r["message"]) for r in others]
    assert restarts == 3 and starts == 4
