"""Helpers of the oprt-bench tests: in-process registries with test-double backends, isolated subprocesses.

A module with a unique name (not ``conftest``): tests import it, and ``conftest`` (one per test folder,
so ambiguous when tests/oprt_core is collected in the same run) only re-exports its fixtures.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from oprt_core import Availability, DeviceInfo, hookimpl
from oprt_core.numpy_backend import NumpyBackend
from oprt_core.plugins import Registry, get_plugin_manager

SCRIPT = Path(sys.executable).with_name("oprt-bench")


def builtin_ops() -> tuple:
    """The specs of every built-in op: the core, model and compute ops."""
    from oprt_core import operators

    return operators.specs()


def builtin_smoke_cases() -> int:
    """The smoke cases of every built-in op: the rows of one backend and dtype."""
    return sum(len(spec.cases("smoke")) for spec in builtin_ops())


class UnavailableBackend(NumpyBackend):
    """Registered but unable to run: what a GPU backend looks like on a machine without a GPU."""

    name = "ghost"

    def availability(self) -> Availability:
        return Availability(False, "no device: test double without hardware")

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(name="none", flavour="ghost-test")


def _broken(inputs, out, params) -> None:
    raise RuntimeError("kernel launch failed: test double")


class WrongBackend(NumpyBackend):
    """Computes op ``wrong`` wrong (numpy's result plus 1) and raises in op ``broken``: failed and error rows."""

    name = "wrong"

    def __init__(self, wrong: str, broken: str) -> None:
        self.wrong, self.broken = wrong, broken
        super().__init__()

    def add_op(self, spec, impl) -> None:
        if spec.name == self.wrong:
            good = impl

            def impl(inputs, out, params) -> None:
                good(inputs, out, params)
                np.copyto(out, (out.astype(np.float32) + 1).astype(out.dtype))

        super().add_op(spec, _broken if spec.name == self.broken else impl)

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(name="wrong-device", flavour="wrong-test", spec_peak_gbps=100.0)


class FlakyBackend(NumpyBackend):
    """Op ``op`` right on the first call, wrong after: only the re-check after timing catches it."""

    name = "flaky"

    def __init__(self, op: str) -> None:
        self.op = op
        super().__init__()
        self.calls = 0

    def add_op(self, spec, impl) -> None:
        if spec.name == self.op:
            good = impl

            def impl(inputs, out, params) -> None:
                self.calls += 1
                good(inputs, out, params)
                if self.calls > 1:
                    out[...] = 0

        super().add_op(spec, impl)


class SlowBackend(NumpyBackend):
    """numpy with every op run four times per launch: an A/B against numpy must call it slower."""

    name = "slow"

    def add_op(self, spec, impl) -> None:
        def run(inputs, out, params) -> None:
            for _ in range(4):
                impl(inputs, out, params)

        super().add_op(spec, run)


class _Plugin:
    def __init__(self, *backends):
        self.backends = backends

    @hookimpl
    def oprt_register_backends(self, register) -> None:
        for b in self.backends:
            register(b)


def make_registry(*extra) -> Registry:
    """numpy plus ``extra`` backends, registered in-process (installed entry points are not loaded)."""
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(_Plugin(NumpyBackend()), "numpy", "oprt-core")
    if extra:
        pm.register_plugin(_Plugin(*extra), "testdoubles", "oprt-bench-tests")
    return Registry(pm)


@pytest.fixture
def registry() -> Registry:
    return make_registry()


def isolated_env(**extra: str) -> dict[str, str]:
    """Subprocess environment that loads only the numpy entry point (other installed plugins stay out)."""
    env = dict(os.environ)
    env.update(OPRT_DISABLE_PLUGIN_AUTOLOAD="1", OPRT_PLUGINS="numpy", PYTHONUNBUFFERED="1", COLUMNS="200")
    env.update(extra)
    return env


def run_script(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
               timeout: float = 120) -> subprocess.CompletedProcess:
    if not SCRIPT.exists():
        pytest.skip(f"console script {SCRIPT} is not installed (pip install -e ./oprt_bench)")
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=env or isolated_env(), cwd=cwd,
                          timeout=timeout)


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> Path:
    """One real end-to-end sweep of the console script: numpy, smoke cases. Several tests read it back."""
    out = tmp_path_factory.mktemp("smoke") / "run"
    proc = run_script("--backends", "numpy", "--cases", "smoke", "--time-budget", "0.02", "--seed", "7",
                      "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    (out.parent / "stdout.txt").write_text(proc.stdout)
    return out
