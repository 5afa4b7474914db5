"""Calibration: the measured peak (device-to-device copy through the backend), the spec peak, the timer floor,
their run.json fields, pct_of_peak / pct_of_spec, and the default baseline -- on fake backends and clocks."""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import time
from pathlib import Path

import numpy as np
import pytest
from bench_helpers import make_registry
from click.testing import CliRunner

from oprt_bench.calibrate import (
    GPU_MIN_BYTES,
    HOST_MAX_BYTES,
    L2_MULTIPLE,
    Calibration,
    TimerCheck,
    calibrate,
    probe_bytes,
    timer_check,
)
from oprt_bench.cli import cli
from oprt_bench.peaks import SpecEntry, spec_peak
from oprt_bench.results import SCHEMA_VERSION
from oprt_bench.sweep import SweepOptions, calibrate_plan, default_baseline, make_plan, run_sweep
from oprt_bench.timing import TimingConfig
from oprt_core import Availability, DeviceInfo, operators
from oprt_core.numpy_backend import NumpyBackend

MiB = 1 << 20
GB = 1e9
H200 = {"name": "NVIDIA H200", "memory_bytes": 141 * 10**9, "l2_bytes": 60 * MiB, "spec_peak_gbps": 4800.0}


class FakeGpu:
    """A backend on a fake clock: a copy of n bytes takes 2n / ``bandwidth``; an empty launch ``launch_us``;
    each event record advances the clock by ``tick_us`` (so back-to-back pairs differ by exactly that)."""

    name = "fakegpu"

    def __init__(self, bandwidth_gbps=4000.0, launch_us=5.0, tick_us=0.1, resolution_ms=0.5e-3, info=None):
        self.bandwidth = bandwidth_gbps * GB
        self.launch_s = launch_us * 1e-6
        self.tick_s = tick_us * 1e-6
        self.resolution_ms = resolution_ms
        self.info = dict(H200 if info is None else info)
        self.now = 0.0
        self.flushes = 0
        self.probed: list[int] = []

    def clock(self) -> float:
        return self.now

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(**self.info)

    def synchronize(self) -> None:
        pass

    def flush_cache(self) -> None:
        self.flushes += 1

    def event(self):
        dev = self

        class Ev:
            def record(self):
                self.t = dev.now
                dev.now += dev.tick_s

            def elapsed_ms(self, end):
                return (end.t - self.t) * 1e3

        return Ev()

    def copy_probe(self, nbytes: int):
        self.probed.append(nbytes)

        def run():
            self.now += 2 * nbytes / self.bandwidth

        return run

    def empty_launch_probe(self):
        def run():
            self.now += self.launch_s

        return run

    def timer_resolution_ms(self):
        return self.resolution_ms


# -- sizes and spec peaks --------------------------------------------------------------------------------------

def test_probe_bytes_is_at_least_8x_l2_and_256_mib_on_a_gpu():
    n = probe_bytes(H200)
    assert n >= L2_MULTIPLE * H200["l2_bytes"] and n >= 256 * MiB and n % MiB == 0
    big_l2 = dict(H200, l2_bytes=96 * MiB)
    assert probe_bytes(big_l2) == 8 * 96 * MiB
    assert probe_bytes(dict(H200, l2_bytes=None)) == GPU_MIN_BYTES
    small = {"name": "small gpu", "memory_bytes": 2 << 30, "l2_bytes": 4 * MiB}  # 512 MiB buffers would be 1/2
    assert probe_bytes(small) == (2 << 30) // 8 and probe_bytes(small) >= 8 * 4 * MiB


def test_probe_bytes_on_a_host_is_8x_llc_capped():
    assert probe_bytes({"name": "cpu", "l2_bytes": 8 * MiB}) == 64 * MiB
    assert probe_bytes({"name": "cpu", "l2_bytes": 48 * MiB}) == HOST_MAX_BYTES == 256 * MiB
    assert probe_bytes({"name": "cpu"}) == 256 * MiB
    assert probe_bytes({"name": "cpu", "l2_bytes": 3 * MiB + 5}) == 25 * MiB  # rounded up to whole MiB


def test_spec_peak_driver_table_override_none():
    assert spec_peak(H200).to_dict() == {"gbps": 4800.0, "source": "driver"}
    assert spec_peak({"name": "NVIDIA  h200"}).to_dict() == {"gbps": 4800.0, "source": "table"}
    table = {"nvidia h200": SpecEntry(4900.0, "test: the driver is wrong", override=True)}
    assert spec_peak(dict(H200, spec_peak_gbps=4000.0), table).to_dict() == {"gbps": 4900.0,
                                                                               "source": "table (override)"}
    assert spec_peak({"name": "some cpu"}).to_dict() == {"gbps": None, "source": "none"}
    assert spec_peak(None).gbps is None


# -- the measured peak --------------------------------------------------------------------------------------------

def test_calibration_counts_bytes_read_and_written_through_the_timing_loop():
    dev = FakeGpu(bandwidth_gbps=4000.0, tick_us=0.0)
    cal = calibrate(dev, H200, clock=dev.clock)
    assert isinstance(cal, Calibration) and cal.error == ""
    assert dev.probed == [cal.buffer_bytes] and cal.buffer_bytes >= 8 * H200["l2_bytes"]
    assert cal.bytes_per_sample == 2 * cal.buffer_bytes
    # one sample = 2 x buffer / 4000 GB/s: the measured peak is the copy's read + written bandwidth
    assert cal.median_ms == pytest.approx(2 * cal.buffer_bytes / (4000 * GB) * 1e3)
    assert cal.measured_peak_gbps == pytest.approx(4000.0)
    assert cal.measured_peak_gbps == pytest.approx(cal.bytes_per_sample / (cal.median_ms * 1e6))
    assert cal.spec_peak_gbps == 4800.0 and cal.spec_source == "driver" and cal.method == "copy_probe"
    assert cal.timing == "cold" and dev.flushes >= cal.samples >= 20  # the same loop, cold: a flush per sample
    assert cal.peak.to_dict() == {"gbps": cal.measured_peak_gbps, "source": "measured"}
    d = cal.to_dict()
    for key in ("measured_peak_gbps", "spec_peak_gbps", "method", "buffer_bytes", "bytes_per_sample", "samples",
                "median_ms", "l2_bytes", "stopped_by"):
        assert key in d
    assert "4000 GB/s" in cal.describe() and "83% of spec" in cal.describe()


def test_calibration_with_an_explicit_size_and_config():
    dev = FakeGpu(bandwidth_gbps=100.0, tick_us=0.0)
    cal = calibrate(dev, H200, nbytes=MiB, config=TimingConfig(cold=False, min_samples=7, warmup_s=0),
                    clock=dev.clock)
    assert cal.buffer_bytes == MiB and cal.timing == "warm" and dev.flushes == 0
    assert cal.measured_peak_gbps == pytest.approx(100.0)


class NoProbeNumpy(NumpyBackend):
    """A backend without copy_probe: calibrated with its own copy op."""

    name = "noprobe"
    copy_probe = None


class NoCopyAtAll(NoProbeNumpy):
    name = "nocopy"

    def supports(self, op, dtype, case=None):
        from oprt_core import Support

        return Support(op != "copy", "no copy here")


class BrokenProbe(NumpyBackend):
    name = "broken"

    def copy_probe(self, nbytes):
        raise MemoryError("out of device memory (test double)")


def test_fallback_to_the_copy_op_when_there_is_no_probe():
    cal = calibrate(operators.equip(NoProbeNumpy()), {"name": "cpu", "l2_bytes": MiB}, nbytes=2 * MiB)
    assert cal.method == "copy op (f32)" and cal.buffer_bytes == 2 * MiB and cal.measured_peak_gbps > 0


def test_no_way_to_copy_and_a_failing_probe_are_recorded_not_raised():
    cal = calibrate(NoCopyAtAll(), {"name": "cpu"}, nbytes=MiB)
    assert cal.measured_peak_gbps is None and cal.method == "none" and "no copy_probe" in cal.error
    assert cal.peak.gbps is None and "unavailable" in cal.describe()
    cal = calibrate(BrokenProbe(), {"name": "cpu"}, nbytes=MiB)
    assert cal.measured_peak_gbps is None and cal.error.startswith("MemoryError: out of device memory")


def test_real_probes_of_numpy_copy_their_bytes():
    be = NumpyBackend()
    run = be.copy_probe(MiB)
    run()
    assert be.empty_launch_probe()() is None
    assert 0 < be.timer_resolution_ms() < 1e-3
    cal = calibrate(be, be.device_info().to_dict(), nbytes=4 * MiB)
    assert cal.method == "copy_probe" and cal.measured_peak_gbps > 0 and cal.samples >= 5


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_torch_cpu_probes():
    from oprt_bench.baselines import TorchBackend

    be = TorchBackend(device="cpu")
    if not be.availability().ok:
        pytest.skip(be.availability().reason)
    be.copy_probe(MiB)()
    be.empty_launch_probe()()
    assert be.timer_resolution_ms() > 0
    cal = calibrate(be, be.device_info().to_dict(), nbytes=4 * MiB)
    assert cal.method == "copy_probe" and cal.measured_peak_gbps > 0
    timer = timer_check(be)
    assert timer.empty_launch_method == "empty_launch_probe" and timer.floor_ms > 0


def _host_compiled_backend(tmp_path: Path):
    """CompiledBackend over the host (CPU) implementation of oprt.h that tests/oprt_core builds."""
    path = Path(__file__).resolve().parents[1] / "oprt_core" / "conftest.py"
    spec = importlib.util.spec_from_file_location("_oprt_core_test_helpers", path)
    helpers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helpers)
    pytest.importorskip("cffi")
    from oprt_core.compiled import CompiledBackend

    lib = helpers.build_host_library(tmp_path)  # skips without a C compiler
    return CompiledBackend("host", helpers.host_loader(lib), vendor="host")


def test_compiled_backend_probes_on_the_host_library(tmp_path):
    be = _host_compiled_backend(tmp_path)
    assert be.availability().ok
    assert be.timer_resolution_ms() is None  # not a CUDA-like backend: no documented resolution
    cal = calibrate(be, be.device_info().to_dict(), nbytes=4 * MiB)
    assert cal.method == "copy_probe" and cal.buffer_bytes == 4 * MiB and cal.measured_peak_gbps > 0, cal.error
    timer = timer_check(be)
    assert timer.error == "" and timer.empty_launch_method == "empty_launch_probe" and timer.floor_ms > 0
    with pytest.raises(Exception, match="positive"):
        be.copy_probe(0)


# -- the timer floor -----------------------------------------------------------------------------------------------

def test_timer_floor_is_the_empty_launch_or_the_resolution():
    dev = FakeGpu(launch_us=5.0, tick_us=0.1, resolution_ms=0.5e-3)
    t = timer_check(dev, clock=dev.clock)
    assert isinstance(t, TimerCheck) and t.error == ""
    assert t.measured_resolution_ms == pytest.approx(0.1e-3)  # back-to-back pairs differ by one tick
    assert t.resolution_ms == 0.5e-3 and t.resolution_source == "documented"
    assert t.empty_launch_method == "empty_launch_probe"
    assert t.empty_launch_ms == pytest.approx(5.1e-3)  # the launch plus the end event's tick
    assert t.floor_ms == pytest.approx(5.1e-3) and t.launch_bound_below_ms == pytest.approx(10 * t.floor_ms)
    assert t.samples >= 30 and "launch-bound" in t.describe()
    # an empty launch faster than the events can resolve: the resolution is the floor
    dev = FakeGpu(launch_us=0.1, tick_us=0.0, resolution_ms=0.5e-3)
    t = timer_check(dev, clock=dev.clock)
    assert t.measured_resolution_ms is None and t.floor_ms == 0.5e-3


def test_timer_floor_without_probes_uses_an_empty_event_pair_and_the_measured_resolution():
    class Bare(FakeGpu):
        empty_launch_probe = None
        timer_resolution_ms = None

    dev = Bare(tick_us=2.0)
    t = timer_check(dev, clock=dev.clock)
    assert t.empty_launch_method == "empty event pair" and t.resolution_source == "measured"
    assert t.floor_ms == pytest.approx(2e-3) and t.documented_resolution_ms is None


def test_timer_check_never_raises():
    class Broken(FakeGpu):
        def event(self):
            raise RuntimeError("no events (test double)")

    t = timer_check(Broken())
    assert t.floor_ms is None and "no events" in t.error and "unknown" in t.describe()


# -- through the sweep: pct_of_peak, pct_of_spec, run.json -----------------------------------------------------------

class SleepyGpu(NumpyBackend):
    """Computes on numpy but presents a GPU (memory, 1 MiB L2, spec 1000 GB/s); its copy probe sleeps 1 ms."""

    name = "fakegpu"

    def __init__(self) -> None:
        super().__init__()
        self.probed: list[int] = []

    def availability(self) -> Availability:
        return Availability(True, "test double", "Fake GPU")

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(name="Fake GPU", memory_bytes=8 << 30, l2_bytes=MiB, spec_peak_gbps=1000.0)

    def flush_cache(self) -> None:
        pass

    def copy_probe(self, nbytes):
        self.probed.append(nbytes)
        return lambda: time.sleep(0.001)


def test_sweep_and_run_json_record_calibration(tmp_path):
    gpu = SleepyGpu()
    out = tmp_path / "run"
    # in-process: the test reads what the backend object saw (a worker has its own copy)
    r = CliRunner().invoke(cli, ["--backends", "fakegpu", "--baseline", "none", "--ops", "copy", "--dtypes", "f32",
                                 "--cases", "smoke", "--time-budget", "0.01", "--out", str(out), "--isolation", "none"],
                           obj={"registry": make_registry(gpu)})
    assert r.exit_code == 0, r.output
    assert "calibrating fakegpu" in r.stdout and "fakegpu: measured peak" in r.stdout
    assert "fakegpu: timer floor" in r.stdout
    meta = json.loads((out / "run.json").read_text())
    b = meta["backends"]["fakegpu"]
    cal, timer = b["calibration"], b["timer"]
    assert gpu.probed == [cal["buffer_bytes"]] and cal["buffer_bytes"] == GPU_MIN_BYTES >= 8 * MiB
    assert cal["bytes_per_sample"] == 2 * cal["buffer_bytes"] and cal["samples"] >= 20
    assert cal["measured_peak_gbps"] == pytest.approx(cal["bytes_per_sample"] / (cal["median_ms"] * 1e6))
    assert cal["spec_peak_gbps"] == 1000.0 and cal["spec_source"] == "driver" and cal["method"] == "copy_probe"
    assert b["peak"] == {"gbps": cal["measured_peak_gbps"], "source": "measured"}
    assert b["spec_peak"] == {"gbps": 1000.0, "source": "driver"}
    assert timer["floor_ms"] > 0 and timer["empty_launch_method"] == "empty_launch_probe"
    assert meta["plan"]["calibrate"] is True
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert rows and all(row["status"] == "ok" for row in rows)
    for row in rows:
        gbps = float(row["gbps"])
        assert float(row["pct_of_peak"]) == pytest.approx(100 * gbps / cal["measured_peak_gbps"])
        assert float(row["pct_of_spec"]) == pytest.approx(100 * gbps / 1000.0)
        assert row["schema_version"] == str(SCHEMA_VERSION)


def test_no_calibrate_leaves_pct_of_peak_empty_but_keeps_pct_of_spec(tmp_path):
    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["--no-calibrate", "--backends", "fakegpu", "--baseline", "none", "--ops", "relu",
                                 "--dtypes", "f32", "--cases", "smoke", "--time-budget", "0.01", "--out", str(out)],
                           obj={"registry": make_registry(SleepyGpu())})
    assert r.exit_code == 0, r.output
    assert "calibrating" not in r.stdout
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert {row["pct_of_peak"] for row in rows} == {""}
    assert all(float(row["pct_of_spec"]) == pytest.approx(float(row["gbps"]) / 10) for row in rows)
    meta = json.loads((out / "run.json").read_text())
    assert meta["backends"]["fakegpu"]["calibration"] is None and meta["plan"]["calibrate"] is False


def test_test_mode_does_not_calibrate():
    gpu = SleepyGpu()
    plan = make_plan(make_registry(gpu), SweepOptions(backends="fakegpu", mode="test"))
    assert plan.calibrate is False


def test_calibrate_plan_notes_and_entries():
    gpu = SleepyGpu()
    plan = make_plan(make_registry(gpu), SweepOptions(backends="fakegpu", baseline="none", ops="copy"))
    notes: list[str] = []
    calibrate_plan(plan, notes.append)
    entry = plan.backends[0]
    assert entry.peak.source == "measured" and entry.peak.gbps == entry.calibration.measured_peak_gbps
    assert entry.spec.gbps == 1000.0 and entry.timer.floor_ms > 0
    assert notes[0].startswith("calibrating fakegpu (Fake GPU)") and len(notes) == 3
    assert entry.timer.timing == "cold"  # a device, a cold run: the empty launch is timed like the rows
    plan = make_plan(make_registry(gpu), SweepOptions(backends="fakegpu,numpy", baseline="none", ops="copy",
                                                      cold=False))
    calibrate_plan(plan)
    assert [e.timer.timing for e in plan.backends] == ["warm", "warm"]
    plan = make_plan(make_registry(), SweepOptions(backends="numpy", baseline="none", ops="copy"))
    plan.backends[0].backend.copy_probe = lambda nbytes: (lambda: None)  # no 256 MiB host copy here
    calibrate_plan(plan)
    assert plan.backends[0].timer.timing == "warm"  # a synchronous host: a flush would only cost time


def test_cold_timer_check_flushes_before_each_empty_launch():
    dev = FakeGpu()
    t = timer_check(dev, cold=True, clock=dev.clock)
    assert t.timing == "cold" and dev.flushes == t.samples
    dev = FakeGpu()
    assert timer_check(dev, clock=dev.clock).timing == "warm" and dev.flushes == 0


# -- the default baseline and speedup -------------------------------------------------------------------------------

class FakeTorch(NumpyBackend):
    """A backend registered under the name ``torch`` (the real one needs a GPU)."""

    name = "torch"

    def __init__(self, ok: bool = True) -> None:
        super().__init__()
        self.ok = ok

    def availability(self) -> Availability:
        return Availability(self.ok, "test double" if self.ok else "torch sees no CUDA device (test double)")


def test_default_baseline_is_torch_when_available_else_numpy():
    assert default_baseline(make_registry()) == "numpy"
    assert default_baseline(make_registry(FakeTorch())) == "torch"
    assert default_baseline(make_registry(FakeTorch(ok=False))) == "numpy"
    plan = make_plan(make_registry(FakeTorch()), SweepOptions(backends="numpy", cases="smoke"))
    assert plan.baseline == "torch" and [b.name for b in plan.backends] == ["torch", "numpy"]
    assert "baseline 'torch' added to the backends" in plan.notes
    plan = make_plan(make_registry(FakeTorch(ok=False)), SweepOptions(backends="numpy", cases="smoke"))
    assert plan.baseline == "numpy" and [b.name for b in plan.backends] == ["numpy"]
    plan = make_plan(make_registry(FakeTorch()), SweepOptions(baseline="numpy"))
    assert plan.baseline == "numpy"


def test_speedup_is_baseline_median_over_row_median():
    plan = make_plan(make_registry(FakeTorch()), SweepOptions(backends="numpy", ops="relu", dtypes="f32",
                                                              cases="smoke", mode="bench", time_budget_s=0.005,
                                                              calibrate=False))
    rows: list[dict] = []
    run_sweep(plan, rows.append)
    by = {r["backend"]: r for r in rows}
    assert by["torch"]["speedup"] == 1.0 and by["numpy"]["baseline"] == "torch"
    assert by["numpy"]["speedup"] == pytest.approx(by["torch"]["median_ms"] / by["numpy"]["median_ms"])


def test_help_names_the_new_defaults():
    r = CliRunner().invoke(cli, ["--help"], obj={"registry": make_registry()})
    text = " ".join(r.stdout.split())
    assert "default: torch when available, else numpy" in text and "--no-calibrate" in text


def test_calibration_dict_is_json_clean():
    dev = FakeGpu(tick_us=0.0)
    d = calibrate(dev, H200, clock=dev.clock).to_dict()
    json.dumps(d, allow_nan=False)
    assert all(not (isinstance(v, float) and math.isnan(v)) for v in d.values())
    assert np.isfinite(d["measured_peak_gbps"])
