"""GPU telemetry (oprt_bench.telemetry) against a fake NVML: a ``pynvml`` module injected into sys.modules."""

from __future__ import annotations

import csv
import json
import sys
import types

import pytest
from bench_helpers import make_registry
from click.testing import CliRunner

from oprt_bench import telemetry
from oprt_bench.cli import cli
from oprt_bench.model import Row
from oprt_bench.results import COLUMNS
from oprt_core import DeviceInfo
from oprt_core.numpy_backend import NumpyBackend

GPU_INFO = {"name": "Fake H200", "vendor": "NVIDIA", "memory_bytes": 1 << 30, "extra": {"device_index": 1}}


class NVMLError(Exception):
    pass


class NotSupported(NVMLError):
    pass


def fake_nvml(*, sm=(1980,), mem=(3201,), power_mw=(500_000.0,), reasons=(0,), energy_mj=(1_000_000.0,),
              uuids=("GPU-aaaa-0", "GPU-bbbb-1", "GPU-cccc-2"), init_error: Exception | None = None,
              event_reasons: bool = True) -> types.ModuleType:
    """A pynvml stand-in: each reading takes the next value of its sequence (the last one repeats); an energy
    sequence of None raises NotSupported, as GPUs before Volta do."""
    m = types.ModuleType("pynvml")
    m.NVMLError = NVMLError
    m.calls = []

    def seq(values):
        it = iter(values)
        last = [values[0]]

        def nxt():
            try:
                last[0] = next(it)
            except StopIteration:
                pass
            return last[0]
        return nxt

    nxt_sm, nxt_mem, nxt_power, nxt_reasons = seq(sm), seq(mem), seq(power_mw), seq(reasons)
    nxt_energy = seq(energy_mj) if energy_mj is not None else None

    def init():
        if init_error is not None:
            raise init_error
        m.calls.append("init")

    def handle(index):
        if not 0 <= index < len(uuids):
            raise NVMLError(f"invalid index {index}")
        return ("handle", index)

    def clock(h, kind):
        return {1: nxt_sm, 2: nxt_mem}[kind]()

    def energy(h):
        if nxt_energy is None:
            raise NotSupported("Not Supported")
        return nxt_energy()

    def app_clock(h, kind):
        raise NotSupported("Not Supported")

    m.nvmlInit = init
    m.nvmlDeviceGetCount = lambda: len(uuids)
    m.nvmlDeviceGetHandleByIndex = handle
    m.nvmlDeviceGetUUID = lambda h: uuids[h[1]].encode()
    m.nvmlDeviceGetName = lambda h: b"Fake H200"
    m.nvmlSystemGetDriverVersion = lambda: "580.1"
    m.nvmlDeviceGetClockInfo = clock
    m.nvmlDeviceGetMaxClockInfo = lambda h, kind: {1: 1980, 2: 3201}[kind]
    m.nvmlDeviceGetApplicationsClock = app_clock
    m.nvmlDeviceGetEnforcedPowerLimit = lambda h: 700_000
    m.nvmlDeviceGetPowerUsage = lambda h: nxt_power()
    m.nvmlDeviceGetTotalEnergyConsumption = energy
    if event_reasons:
        m.nvmlDeviceGetCurrentClocksEventReasons = lambda h: nxt_reasons()
    else:
        m.nvmlDeviceGetCurrentClocksThrottleReasons = lambda h: nxt_reasons()
    return m


@pytest.fixture
def use_nvml(monkeypatch):
    """Install a fake pynvml (or none: ``use_nvml(None)``) for this test, with telemetry's cache emptied."""
    def install(module):
        monkeypatch.setattr(telemetry, "_NVML", [])
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        monkeypatch.setitem(sys.modules, "pynvml", module)  # None: `import pynvml` raises ImportError
        return module
    return install


def test_throttle_bits_decode_to_nvml_names_in_bit_order():
    assert telemetry.throttle_names(0) == []
    assert telemetry.throttle_names(0x1 | 0x4 | 0x40) == ["gpu_idle", "sw_power_cap", "hw_thermal_slowdown"]
    assert telemetry.throttle_names(0x80 | 0x400) == ["hw_power_brake_slowdown", "bit_0x400"]
    assert set(telemetry.throttle_names(0x1FF)) == set(telemetry.THROTTLE_REASONS.values())


def test_cuda_visible_devices_maps_the_backend_ordinal_to_the_nvml_index(use_nvml):
    nvml = use_nvml(fake_nvml())
    assert telemetry.nvml_index(nvml, 1, {})[0] == 1
    assert telemetry.nvml_index(nvml, 1, {"CUDA_VISIBLE_DEVICES": "2,0"})[0] == 0
    index, how = telemetry.nvml_index(nvml, 0, {"CUDA_VISIBLE_DEVICES": "GPU-cccc"})  # a UUID prefix, as CUDA takes
    assert index == 2 and "GPU-cccc-2" in how
    with pytest.raises(ValueError, match="not among CUDA_VISIBLE_DEVICES"):
        telemetry.nvml_index(nvml, 1, {"CUDA_VISIBLE_DEVICES": "0"})
    with pytest.raises(ValueError, match="no NVML device has the UUID"):
        telemetry.nvml_index(nvml, 0, {"CUDA_VISIBLE_DEVICES": "GPU-zzzz"})


def test_describe_device_records_the_limits_of_the_mapped_device(use_nvml):
    use_nvml(fake_nvml())
    d = telemetry.describe_device(GPU_INFO, environ={"CUDA_VISIBLE_DEVICES": "2,1"})
    assert d["available"] and d["index"] == 1 and d["uuid"] == "GPU-bbbb-1" and d["name"] == "Fake H200"
    assert d["limits"] == {"max_sm_mhz": 1980, "max_mem_mhz": 3201, "applications_sm_mhz": None,
                           "applications_mem_mhz": None, "power_limit_w": 700.0}
    json.dumps(d)  # goes into run.json as it is


@pytest.mark.parametrize(("info", "enabled", "reason"), [
    ({"vendor": "x86_64"}, True, "no GPU"),
    ({**GPU_INFO, "vendor": "MetaX"}, True, "not available on MetaX devices"),
    ({**GPU_INFO, "vendor": "AMD"}, True, "not available for vendor 'AMD'"),
    (GPU_INFO, False, "--no-telemetry"),
])
def test_devices_without_nvml_say_why(use_nvml, info, enabled, reason):
    use_nvml(fake_nvml())
    d = telemetry.describe_device(info, enabled)
    assert d["available"] is False and reason in d["reason"]


def test_absent_library_or_driver_is_a_reason_never_an_error(use_nvml):
    use_nvml(None)
    d = telemetry.describe_device(GPU_INFO)
    assert d == {"available": False, "reason": "nvidia-ml-py is not installed (pip install 'oprt-bench[telemetry]')"}
    use_nvml(fake_nvml(init_error=NVMLError("Driver Not Loaded")))
    d = telemetry.describe_device(GPU_INFO)
    assert not d["available"] and "NVML could not start: NVMLError: Driver Not Loaded" in d["reason"]
    row = Row(op="copy", case="c", shape="4", dtype="f32")
    with telemetry.RowTelemetry(d) as t:
        pass
    t.fill(row)
    assert t.columns() == {} and all(row[c] is None for c in telemetry.COLUMNS)


def test_summarize_energy_from_the_counter_and_from_power():
    start = telemetry.Sample(1980, 3201, 400_000.0, 0x1)
    end = telemetry.Sample(1965, 3201, 600_000.0, 0)
    by_counter = telemetry.summarize(start, end, [telemetry.Sample(1970, 3201, 500_000.0, 0)], 2.0,
                                     (10_000.0, 11_250.0))
    assert by_counter["energy_j"] == pytest.approx(1.25) and by_counter["energy_source"] == "counter"
    assert by_counter["power_w"] == pytest.approx(500.0)
    by_power = telemetry.summarize(start, end, [], 2.0, (None, None))
    assert by_power["energy_j"] == pytest.approx(1000.0) and by_power["energy_source"] == "power"
    assert by_power["sm_mhz_start"] == 1980 and by_power["sm_mhz_end"] == 1965 and by_power["sm_mhz_min"] == 1965
    assert by_power["throttle_reasons"] == "gpu_idle" and by_power["clock_drop"] == 0


@pytest.mark.parametrize(("sm", "reasons", "drop", "names"), [
    ((1980, 1900, 1970), (0, 0, 0), 0, ""),  # 96% of the start clock: no drop
    ((1980, 1700, 1970), (0, 0, 0), 1, ""),  # below 90%
    ((1980, 1980, 1980), (0, 0x4, 0), 1, "sw_power_cap"),  # a power cap seen, clock held
    ((1980, 1980, 1980), (0x1, 0x10, 0), 0, "gpu_idle;sync_boost"),  # not slowdowns
    ((1980, 1980, 1980), (0, 0x40, 0x20), 1, "sw_thermal_slowdown;hw_thermal_slowdown"),
])
def test_clock_drop_flag(sm, reasons, drop, names):
    s = [telemetry.Sample(c, 3201, 1.0, r) for c, r in zip(sm, reasons)]
    got = telemetry.summarize(s[0], s[-1], s[1:-1], 1.0)
    assert got["clock_drop"] == drop and got["throttle_reasons"] == names


@pytest.mark.parametrize("event_reasons", [True, False])
def test_row_telemetry_samples_in_a_thread_between_start_and_end(use_nvml, event_reasons):
    import time

    use_nvml(fake_nvml(sm=(1980,) + (1600,) * 3 + (1950,) * 1000, reasons=(0, 0x8, 0), energy_mj=(5000.0, 5900.0),
                       event_reasons=event_reasons))
    target = telemetry.describe_device(GPU_INFO)
    row = Row(op="copy", case="c", shape="4", dtype="f32")
    with telemetry.RowTelemetry(target, interval_s=0.002) as t:
        time.sleep(0.05)
    t.fill(row)
    assert row.sm_mhz_start == 1980 and row.sm_mhz_min == 1600 and row.sm_mhz_end == 1950
    assert row.mem_mhz_start == 3201 == row.mem_mhz_end
    assert row.throttle_reasons == "hw_slowdown" and row.clock_drop == 1
    assert row.energy_j == pytest.approx(0.9) and row.energy_source == "counter" and row.power_w == 500.0


def test_row_telemetry_without_energy_counter_uses_power_times_time(use_nvml):
    use_nvml(fake_nvml(energy_mj=None, power_mw=(300_000.0,)))
    ticks = iter([10.0, 10.5])
    with telemetry.RowTelemetry(telemetry.describe_device(GPU_INFO), interval_s=5.0, clock=lambda: next(ticks)) as t:
        pass
    cols = t.columns()
    assert cols["energy_source"] == "power" and cols["energy_j"] == pytest.approx(150.0)
    assert cols["clock_drop"] == 0 and set(cols) == set(telemetry.COLUMNS)


class FakeGPU(NumpyBackend):
    """numpy computing, reporting an NVIDIA device: the fake NVML's rows."""

    name = "fakegpu"

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(name="Fake H200", vendor="NVIDIA", memory_bytes=1 << 30, extra={"device_index": 1})


def test_sweep_fills_the_columns_and_run_json(use_nvml, tmp_path):
    use_nvml(fake_nvml(sm=(1980, 1500, 1980)))
    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["--no-calibrate", "--isolation", "none", "--backends", "numpy,fakegpu", "--ops",
                                 "copy", "--cases", "smoke", "--dtypes", "f32", "--time-budget", "0.02", "--out",
                                 str(out)], obj={"registry": make_registry(FakeGPU())})
    assert r.exit_code == 0, r.output
    assert set(telemetry.COLUMNS) <= set(COLUMNS)
    rows = list(csv.DictReader((out / "results.csv").open()))
    gpu = [x for x in rows if x["backend"] == "fakegpu"]
    host = [x for x in rows if x["backend"] == "numpy"]
    assert gpu and host
    assert all(x["sm_mhz_start"] and x["mem_mhz_end"] == "3201" and x["energy_source"] == "counter" for x in gpu)
    assert any(x["clock_drop"] == "1" for x in gpu)  # the 1500 MHz reading fell into the first row
    assert all(x[c] == "" for x in host for c in telemetry.COLUMNS)
    meta = json.loads((out / "run.json").read_text())
    assert meta["backends"]["fakegpu"]["telemetry"]["limits"]["power_limit_w"] == 700.0
    assert "no GPU" in meta["backends"]["numpy"]["telemetry"]["reason"]
    doc = json.loads((out / "results.json").read_text())
    assert {x["backend"]: x["mem_mhz_start"] for x in doc["rows"]} == {"numpy": None, "fakegpu": 3201}
    off = tmp_path / "off"
    r = CliRunner().invoke(cli, ["--no-calibrate", "--isolation", "none", "--backends", "fakegpu", "--ops", "copy",
                                 "--cases", "smoke", "--dtypes", "f32", "--time-budget", "0.02", "--no-telemetry",
                                 "--out", str(off)], obj={"registry": make_registry(FakeGPU())})
    assert r.exit_code == 0, r.output
    assert all(x["sm_mhz_start"] == "" for x in csv.DictReader((off / "results.csv").open()))


def test_schema_4_columns_come_after_schema_3s():
    from oprt_bench.results import SCHEMA_VERSION

    new = (*telemetry.COLUMNS, "ncu_time_ms", "ncu_dram_bytes", "ncu_dram_pct", "ncu_report")
    # schema 4 after schema 3's kernel: compile_s, the telemetry and ncu columns, the timer columns, host
    start = COLUMNS.index("compile_s") + 1
    assert SCHEMA_VERSION == 4 and COLUMNS[start:start + len(new)] == new


def test_schema_doc_names_every_column():
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "results-schema.md").read_text()
    documented = {name.strip().strip("`") for line in text.splitlines() if line.startswith("| `")
                  for name in line.split("|")[1].split(",")}
    missing = [c for c in (*telemetry.COLUMNS, "ncu_time_ms", "ncu_dram_bytes", "ncu_dram_pct", "ncu_report")
               if c not in documented]
    assert not missing
