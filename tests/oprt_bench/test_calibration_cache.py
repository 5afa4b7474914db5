"""The calibration cache: a quick look reuses a recent calibration of the same device and build."""

from __future__ import annotations

import json
import time

import pytest
from bench_helpers import make_registry, run_script
from click.testing import CliRunner

from oprt_bench.calcache import FILE_NAME, MAX_AGE_S, CalibrationCache, cache_dir, cache_key
from oprt_bench.calibrate import Calibration, TimerCheck
from oprt_bench.cli import cli
from oprt_core import Availability, DeviceInfo
from oprt_core.numpy_backend import NumpyBackend

MiB = 1 << 20


def _complete(peak: float = 3000.0) -> tuple[Calibration, TimerCheck]:
    return (Calibration(peak, 4800.0, "driver", "copy_probe", buffer_bytes=512 * MiB, samples=21, median_ms=0.35),
            TimerCheck(0.004, 0.004, "empty_launch_probe", 0.0005, "documented", launch_bound_below_ms=0.04))


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OPRT_CACHE_DIR", str(tmp_path / "explicit"))
    assert cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("OPRT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "oprt"


def test_round_trip_expiry_and_incomplete_entries(tmp_path):
    cache = CalibrationCache(tmp_path / FILE_NAME)
    cal, timer = _complete()
    now = 1_000_000.0
    assert cache.put("k", cal, timer, now=now)
    again = CalibrationCache(tmp_path / FILE_NAME)  # read back from the file
    found = again.get("k", now=now + 60)
    assert found is not None and found.calibration == cal and found.timer == timer
    assert found.age_s(now + 60) == pytest.approx(60)
    assert again.get("k", now=now + MAX_AGE_S + 1) is None  # expired
    assert again.get("k", now=now - 10) is None  # measured "in the future": a clock went back, not trusted
    assert again.get("other", now=now) is None
    # an incomplete calibration (no measured peak, or no timer floor) is never stored
    assert not cache.put("bad", Calibration(None, 4800.0, "driver", "none", error="probe failed"), timer, now=now)
    assert not cache.put("bad", cal, TimerCheck(None, None, "none", None, "none", error="x"), now=now)
    assert CalibrationCache(tmp_path / FILE_NAME).get("bad", now=now) is None


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"schema": 99, "entries": {}}',
                                     '{"schema": 1, "entries": {"k": {"calibration": 3}}}'])
def test_an_unreadable_file_is_a_miss_and_is_rewritten(tmp_path, content):
    path = tmp_path / FILE_NAME
    path.write_text(content)
    cache = CalibrationCache(path)
    assert cache.get("k") is None
    cal, timer = _complete()
    assert cache.put("k", cal, timer)
    assert CalibrationCache(path).get("k") is not None
    assert json.loads(path.read_text())["schema"] == 1


def test_the_key_changes_with_device_build_and_timing():
    info = {"name": "NVIDIA H200", "driver_version": "580.1", "flavour": "nvcc-13.0 sm_90"}
    base = cache_key("nvidia", info, True, "dirty")
    assert base == cache_key("nvidia", dict(info), True, "dirty")
    assert base != cache_key("torch", info, True, "dirty")
    assert base != cache_key("nvidia", info | {"driver_version": "580.2"}, True, "dirty")
    assert base != cache_key("nvidia", info | {"flavour": "nvcc-13.1 sm_90"}, True, "dirty")
    assert base != cache_key("nvidia", info, True, "clean")
    assert base != cache_key("nvidia", info, False, "dirty")


class CountingGpu(NumpyBackend):
    """A fake device whose copy probe counts how often it is calibrated."""

    name = "countgpu"

    def __init__(self) -> None:
        super().__init__()
        self.probes = 0

    def availability(self) -> Availability:
        return Availability(True, "test double", "Counting GPU")

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(name="Counting GPU", memory_bytes=8 << 30, l2_bytes=MiB, spec_peak_gbps=1000.0)

    def flush_cache(self) -> None:
        pass

    def copy_probe(self, nbytes):
        self.probes += 1
        return lambda: time.sleep(0.001)


def _sweep(gpu: CountingGpu, out, *extra: str):
    args = ["--backends", "countgpu", "--baseline", "none", "--ops", "copy", "--dtypes", "f32", "--cases", "smoke",
            "--time-budget", "0.01", "--isolation", "none", "--out", str(out), *extra]
    r = CliRunner().invoke(cli, args, obj={"registry": make_registry(gpu)})
    assert r.exit_code == 0, r.output
    return r, json.loads((out / "run.json").read_text())


def test_a_second_run_reuses_the_calibration_and_recalibrate_measures_again(tmp_path):
    gpu = CountingGpu()
    _, first = _sweep(gpu, tmp_path / "a")
    assert gpu.probes == 1 and first["backends"]["countgpu"]["calibration_source"] == "measured"
    r, second = _sweep(gpu, tmp_path / "b")
    assert gpu.probes == 1, "the second run calibrated again instead of reusing the cache"
    b = second["backends"]["countgpu"]
    assert b["calibration_source"] == "cache"
    assert b["calibration"] == first["backends"]["countgpu"]["calibration"]
    assert "calibration measured 0 min ago reused" in r.stdout
    # the rows of the second run divide by the cached peak
    rows = json.loads((tmp_path / "b" / "results.json").read_text())["rows"]
    peak = b["calibration"]["measured_peak_gbps"]
    assert rows and all(row["pct_of_peak"] == pytest.approx(100 * row["gbps"] / peak) for row in rows)
    _, third = _sweep(gpu, tmp_path / "c", "--recalibrate")
    assert gpu.probes == 2 and third["backends"]["countgpu"]["calibration_source"] == "measured"


def test_a_failed_calibration_is_not_cached(tmp_path):
    class BrokenProbe(CountingGpu):
        def copy_probe(self, nbytes):
            self.probes += 1
            raise RuntimeError("probe buffer allocation failed")

    gpu = BrokenProbe()
    _, first = _sweep(gpu, tmp_path / "a")
    assert "probe buffer allocation failed" in first["backends"]["countgpu"]["calibration"]["error"]
    _, second = _sweep(gpu, tmp_path / "b")
    assert gpu.probes == 2 and second["backends"]["countgpu"]["calibration_source"] == "measured"
    assert not (cache_dir() / FILE_NAME).exists() or not json.loads((cache_dir() / FILE_NAME).read_text())["entries"]


def test_verbose_reports_where_the_time_goes(tmp_path):
    out = tmp_path / "run"
    proc = run_script("--backends", "numpy", "--baseline", "none", "--ops", "relu", "--cases", "smoke", "--dtypes",
                      "f32", "--time-budget", "0.02", "--verbose", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("time: plan")]
    assert len(lines) == 1, proc.stderr
    for phase in ("plan", "workers", "calibration", "rows", "report"):
        assert f"{phase} " in lines[0]
    phases = json.loads((out / "run.json").read_text())["phases_s"]
    assert set(phases) == {"plan", "workers", "calibration", "rows", "report"}
    assert all(v >= 0 for v in phases.values()) and phases["rows"] > 0
    assert "workers started in parallel: numpy" in proc.stdout + proc.stderr


def test_workers_started_before_a_refused_plan_do_not_hold_the_error_back(tmp_path):
    """The workers of the named backends start before the plan; an option the plan refuses is still a one-line
    error with exit status 2, and nothing is written."""
    out = tmp_path / "run"
    proc = run_script("--backends", "numpy", "--ops", "no_such_op", "--out", str(out))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "no_such_op" in proc.stderr
    assert not out.exists()
