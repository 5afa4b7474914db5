"""``--flush clean``: the cold flush that also has the flush's own dirty lines written back before a sample."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from bench_helpers import make_registry
from click.testing import CliRunner

from oprt_bench.calibrate import calibrate, timer_check
from oprt_bench.cli import cli
from oprt_bench.errors import UsageError
from oprt_bench.resume import provenance_key
from oprt_bench.sweep import SweepOptions, make_plan
from oprt_bench.timing import TimingConfig, flush_supports_clean, measure
from oprt_core.numpy_backend import NumpyBackend


class Recorder:
    """A device on a fake clock that records each flush's ``clean`` argument (None: called without it)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.flushes: list[bool | None] = []

    def clock(self) -> float:
        return self.now

    def launch(self) -> None:
        self.now += 1e-3

    def synchronize(self) -> None:
        pass

    def flush_cache(self, clean: bool | None = None) -> None:
        self.flushes.append(clean)

    def event(self):
        dev = self

        class Ev:
            def record(self):
                self.t = dev.now

            def elapsed_ms(self, end):
                return (end.t - self.t) * 1e3

        return Ev()


class DirtyOnly(NumpyBackend):
    """A third-party backend written before the ``clean`` argument: its flush takes none."""

    name = "dirtyonly"

    def flush_cache(self) -> None:
        super().flush_cache()


def test_measure_passes_clean_only_with_the_clean_flush():
    dev = Recorder()
    m = measure(dev, dev.launch, TimingConfig(flush="clean", warmup_s=0, time_budget_s=1), clock=dev.clock)
    assert dev.flushes == [True] * m.summary.samples
    dev = Recorder()
    m = measure(dev, dev.launch, TimingConfig(warmup_s=0, time_budget_s=1), clock=dev.clock)
    assert dev.flushes == [None] * m.summary.samples  # the default flush: called as before, without the argument
    dev = Recorder()
    measure(dev, dev.launch, TimingConfig(cold=False, flush="clean", warmup_s=0, time_budget_s=1), clock=dev.clock)
    assert dev.flushes == []


def test_timing_config_flush_names_and_labels():
    assert TimingConfig().label == "cold"
    assert TimingConfig(flush="clean").label == "cold-clean"
    assert TimingConfig(cold=False, flush="clean").label == "warm"
    assert TimingConfig(flush="clean").to_dict()["flush"] == "clean"
    with pytest.raises(ValueError, match="flush must be one of dirty, clean"):
        TimingConfig(flush="wet")


def test_flush_supports_clean_reads_the_signature():
    assert flush_supports_clean(NumpyBackend())
    assert not flush_supports_clean(DirtyOnly())

    class Kwargs:
        def flush_cache(self, **kw):
            pass

    assert flush_supports_clean(Kwargs())
    assert not flush_supports_clean(object())


def test_calibration_and_timer_floor_use_the_rows_flush():
    dev = Recorder()
    dev.copy_probe = lambda nbytes: dev.launch
    cal = calibrate(dev, {"name": "fake", "sm_count": 132, "l2_bytes": 60 << 20}, clock=dev.clock, flush="clean")
    assert not cal.error and cal.timing == "cold-clean"
    assert set(dev.flushes) == {True}
    dev = Recorder()
    t = timer_check(dev, cold=True, clock=dev.clock, flush="clean")
    assert t.timing == "cold-clean" and set(dev.flushes) == {True}


def test_plan_refuses_clean_for_a_backend_without_it_and_with_warm():
    reg = make_registry(DirtyOnly())
    with pytest.raises(UsageError, match="backend 'dirtyonly' cannot flush clean"):
        make_plan(reg, SweepOptions(backends="dirtyonly", baseline="none", flush="clean"))
    plan = make_plan(reg, SweepOptions(backends="dirtyonly", baseline="none"))  # the default flush: fine
    assert plan.timing.flush == "dirty"
    with pytest.raises(UsageError, match="applies to cold timing"):
        make_plan(make_registry(), SweepOptions(backends="numpy", baseline="none", cold=False, flush="clean"))


class SmallHost(NumpyBackend):
    """numpy with a small flush buffer and calibration copy, so that a calibrated CLI run stays quick."""

    name = "smallhost"

    def __init__(self) -> None:
        super().__init__()
        self._flush_buffer = np.zeros(1 << 20, np.uint8)
        self.cleans = 0

    def flush_cache(self, clean: bool = False) -> None:
        self.cleans += clean
        super().flush_cache(clean)

    def copy_probe(self, nbytes: int):
        return super().copy_probe(1 << 20)


def test_cli_clean_flush_run_records_it(tmp_path):
    out = tmp_path / "run"
    host = SmallHost()
    r = CliRunner().invoke(cli, ["--backends", "smallhost", "--baseline", "none", "--ops", "copy,reduce_sum",
                                 "--cases", "smoke", "--time-budget", "0.01", "--flush", "clean", "--isolation",
                                 "none", "--out", str(out)], obj={"registry": make_registry(host)})
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert rows and {row["timing"] for row in rows} == {"cold-clean"}
    assert host.cleans >= 5 * len(rows)  # every sample of every row, and the calibration
    meta = json.loads((out / "run.json").read_text())
    assert meta["plan"]["timing"]["flush"] == "clean"
    assert meta["backends"]["smallhost"]["calibration"]["timing"] == "cold-clean"
    assert provenance_key(meta)["timing flush"] == "clean"


def test_cli_clean_flush_user_mistakes_are_one_line(tmp_path):
    reg = make_registry(DirtyOnly())
    for args, fragment in [(["--flush", "clean", "--warm"], "--flush clean applies to cold timing"),
                           (["--flush", "clean", "--backends", "dirtyonly"], "cannot flush clean"),
                           (["--flush", "wet"], "'wet' is not one of 'dirty', 'clean'")]:
        out = tmp_path / "x"
        r = CliRunner().invoke(cli, ["--baseline", "none", "--cases", "smoke", "--out", str(out), *args],
                               obj={"registry": reg})
        assert r.exit_code == 2, r.output
        assert fragment in r.output and "Traceback" not in r.output
        assert not out.exists()


def test_resume_key_of_a_run_from_before_the_option_is_the_dirty_flush():
    old = {"plan": {"mode": "all", "timing": {"cold": True, "time_budget_s": 0.5}}}
    assert provenance_key(old)["timing flush"] == "dirty"
