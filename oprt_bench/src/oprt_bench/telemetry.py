"""GPU telemetry per row: clocks, throttle reasons, power and energy while the row is timed (NVML).

The parent finds each backend's NVML device once (:func:`describe_device`: the backend's CUDA ordinal
mapped through ``CUDA_VISIBLE_DEVICES``) and records it with the device's clock and power limits in
run.json (``backends.<name>.telemetry``); the process that times the row (worker or parent) wraps the
timing loop in :class:`RowTelemetry`, which reads the clocks, power and energy counter at the start and
the end and samples them in a background thread every :data:`SAMPLE_INTERVAL_S` in between.

NVML comes from nvidia-ml-py (``pip install 'oprt-bench[telemetry]'``, imported as ``pynvml``). Without
it, without an NVIDIA GPU, on MetaX devices (no MACA equivalent is wired) or with ``--no-telemetry`` the
columns stay empty and run.json says why; telemetry never fails a row. See docs/measurement.md.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["COLUMNS", "THROTTLE_REASONS", "SLOWDOWN_REASONS", "CLOCK_DROP_FRACTION", "SAMPLE_INTERVAL_S",
           "throttle_names", "load_nvml", "describe_device", "nvml_index", "Sample", "summarize", "RowTelemetry"]

# the row columns this module fills (results.csv, docs/results-schema.md)
COLUMNS = ("sm_mhz_start", "sm_mhz_end", "sm_mhz_min", "mem_mhz_start", "mem_mhz_end", "throttle_reasons",
           "power_w", "energy_j", "energy_source", "clock_drop")

SAMPLE_INTERVAL_S = 0.01
CLOCK_DROP_FRACTION = 0.9  # an SM clock below 90% of the row's start clock is a drop

# nvmlClocksEventReasons / nvmlClocksThrottleReasons bits (nvml.h), in bit order
THROTTLE_REASONS: dict[int, str] = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
# the reasons that mean the clock was held down by power or heat (gpu_idle, sync boost, settings do not)
SLOWDOWN_REASONS = 0x4 | 0x8 | 0x20 | 0x40 | 0x80

_CLOCK_SM, _CLOCK_MEM = 1, 2  # nvmlClockType_t
_NVML: list[Any] = []  # the initialised pynvml module of this process, once loaded


def throttle_names(bits: int) -> list[str]:
    """The names of the set bits of a throttle-reason mask, in bit order; an unknown bit as ``bit_0x...``."""
    names = []
    for i in range(bits.bit_length()):
        bit = 1 << i
        if bits & bit:
            names.append(THROTTLE_REASONS.get(bit, f"bit_{bit:#x}"))
    return names


def load_nvml() -> tuple[Any, str]:
    """(initialised pynvml module, "") or (None, why not): never raises."""
    if _NVML:
        return _NVML[0], ""
    try:
        import pynvml
    except ImportError:
        return None, "nvidia-ml-py is not installed (pip install 'oprt-bench[telemetry]')"
    except Exception as exc:  # noqa: BLE001 - a broken install is a reason, not an error
        return None, f"importing pynvml failed: {type(exc).__name__}: {exc}"
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - NVMLError_LibraryNotFound, DriverNotLoaded, ...
        return None, f"NVML could not start: {type(exc).__name__}: {exc}"
    _NVML.append(pynvml)
    return pynvml, ""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _query(fn: Callable[[], Any]) -> Any:
    """``fn()``, or None where NVML says no (not supported, no permission)."""
    try:
        return fn()
    except Exception:  # noqa: BLE001 - pynvml.NVMLError and its subclasses: the value is unknown
        return None


def nvml_index(nvml: Any, ordinal: int, environ: Mapping[str, str] | None = None) -> tuple[int, str]:
    """The NVML index of the backend's CUDA device ``ordinal``, and how it was found.

    CUDA numbers the devices of ``CUDA_VISIBLE_DEVICES`` from 0; an entry there is an NVML index or a
    (prefix of a) ``GPU-``/``MIG-`` UUID. Without the variable the ordinal is the NVML index (both count in
    PCI bus order when ``CUDA_DEVICE_ORDER=PCI_BUS_ID``, and on hosts of identical GPUs). ValueError when
    the ordinal names no device."""
    env = os.environ if environ is None else environ
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return ordinal, f"CUDA device {ordinal} = NVML device {ordinal}"
    items = [s.strip() for s in visible.split(",") if s.strip()]
    if ordinal >= len(items):
        raise ValueError(f"CUDA device {ordinal} is not among CUDA_VISIBLE_DEVICES={visible!r}")
    item = items[ordinal]
    if item.isdigit():
        return int(item), f"CUDA device {ordinal} = CUDA_VISIBLE_DEVICES[{ordinal}] = NVML device {item}"
    for index in range(int(nvml.nvmlDeviceGetCount())):
        uuid = _text(nvml.nvmlDeviceGetUUID(nvml.nvmlDeviceGetHandleByIndex(index)))
        if uuid.startswith(item):
            return index, f"CUDA device {ordinal} = CUDA_VISIBLE_DEVICES[{ordinal}] = {uuid} = NVML device {index}"
    raise ValueError(f"no NVML device has the UUID {item!r} of CUDA_VISIBLE_DEVICES")


def _not_available(reason: str) -> dict[str, Any]:
    return {"available": False, "reason": reason}


def describe_device(device_info: Mapping[str, Any], enabled: bool = True,
                    environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """run.json's ``backends.<name>.telemetry``: where the rows' telemetry comes from and the device's limits,
    or ``{"available": false, "reason": ...}``. The workers read ``index``. Never raises."""
    if not enabled:
        return _not_available("turned off (--no-telemetry)")
    vendor = str(device_info.get("vendor") or "")
    if "error" in device_info or not device_info.get("memory_bytes"):
        return _not_available("no GPU: the backend runs on the host or its device did not answer")
    if "metax" in vendor.lower():
        return _not_available("not available on MetaX devices: no MACA equivalent of NVML is wired")
    if "nvidia" not in vendor.lower():
        return _not_available(f"not available for vendor {vendor!r}: telemetry reads NVIDIA's NVML")
    nvml, reason = load_nvml()
    if nvml is None:
        return _not_available(reason)
    ordinal = (device_info.get("extra") or {}).get("device_index", 0)
    try:
        index, how = nvml_index(nvml, int(ordinal), environ)
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
    except Exception as exc:  # noqa: BLE001 - ValueError above, or NVMLError for an index NVML lacks
        return _not_available(f"no NVML device for the backend's device: {type(exc).__name__}: {exc}")
    limits = {
        "max_sm_mhz": _query(lambda: nvml.nvmlDeviceGetMaxClockInfo(handle, _CLOCK_SM)),
        "max_mem_mhz": _query(lambda: nvml.nvmlDeviceGetMaxClockInfo(handle, _CLOCK_MEM)),
        "applications_sm_mhz": _query(lambda: nvml.nvmlDeviceGetApplicationsClock(handle, _CLOCK_SM)),
        "applications_mem_mhz": _query(lambda: nvml.nvmlDeviceGetApplicationsClock(handle, _CLOCK_MEM)),
        "power_limit_w": _watts(_query(lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(handle))),
    }
    return {"available": True, "source": "nvml", "index": index, "mapping": how,
            "name": _query(lambda: _text(nvml.nvmlDeviceGetName(handle))),
            "uuid": _query(lambda: _text(nvml.nvmlDeviceGetUUID(handle))),
            "driver_version": _query(lambda: _text(nvml.nvmlSystemGetDriverVersion())),
            "sample_interval_s": SAMPLE_INTERVAL_S, "limits": limits}


def _watts(milliwatts: Any) -> float | None:
    return None if milliwatts is None else float(milliwatts) / 1000.0


@dataclass(frozen=True)
class Sample:
    """One reading of the device: clocks (MHz), power (mW), throttle-reason bits; None where unknown."""

    sm_mhz: int | None
    mem_mhz: int | None
    power_mw: float | None
    reasons: int | None


def summarize(start: Sample, end: Sample, between: list[Sample], elapsed_s: float,
              energy_mj: tuple[float | None, float | None] = (None, None)) -> dict[str, Any]:
    """The row's telemetry columns from the start and end readings, the samples between and the energy
    counter (mJ) at the start and the end (None where unsupported: energy is then mean power x time)."""
    every = [start, *between, end]
    sm = [s.sm_mhz for s in every if s.sm_mhz is not None]
    powers = [s.power_mw for s in every if s.power_mw is not None]
    bits = 0
    for s in every:
        bits |= s.reasons or 0
    power_w = sum(powers) / len(powers) / 1000.0 if powers else None
    e0, e1 = energy_mj
    if e0 is not None and e1 is not None and e1 >= e0:
        energy_j, source = (e1 - e0) / 1000.0, "counter"
    elif power_w is not None:
        energy_j, source = power_w * elapsed_s, "power"
    else:
        energy_j, source = None, ""
    sm_min = min(sm) if sm else None
    dropped = None
    if start.sm_mhz is not None and sm_min is not None:
        dropped = sm_min < CLOCK_DROP_FRACTION * start.sm_mhz or bool(bits & SLOWDOWN_REASONS)
    elif any(s.reasons is not None for s in every):
        dropped = bool(bits & SLOWDOWN_REASONS)
    return {
        "sm_mhz_start": start.sm_mhz, "sm_mhz_end": end.sm_mhz, "sm_mhz_min": sm_min,
        "mem_mhz_start": start.mem_mhz, "mem_mhz_end": end.mem_mhz,
        "throttle_reasons": ";".join(throttle_names(bits)) if any(s.reasons is not None for s in every) else None,
        "power_w": power_w, "energy_j": energy_j, "energy_source": source or None,
        "clock_drop": None if dropped is None else int(dropped),
    }


def _reasons_fn(nvml: Any) -> Callable[[Any], int] | None:
    # renamed "clocks event reasons" in NVML 12.x; the throttle name stays as an alias
    for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
        fn = getattr(nvml, name, None)
        if fn is not None:
            return fn
    return None


class RowTelemetry:
    """A context manager around a row's timing loop: readings at entry and exit, a sampling thread between.

    ``target`` is run.json's ``backends.<name>.telemetry`` (:func:`describe_device`); without an available
    one nothing is read and :meth:`columns` is empty. Any NVML failure leaves the columns empty."""

    def __init__(self, target: Mapping[str, Any] | None, interval_s: float = SAMPLE_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic):
        self.interval_s = interval_s
        self.clock = clock
        self._nvml: Any = None
        self._handle: Any = None
        self._between: list[Sample] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._result: dict[str, Any] = {}
        self._start: tuple[Sample, float | None, float] | None = None
        self._reasons: Callable[[Any], int] | None = None
        if target and target.get("available"):
            nvml, _ = load_nvml()
            if nvml is not None:
                try:
                    self._handle = nvml.nvmlDeviceGetHandleByIndex(int(target["index"]))
                    self._nvml = nvml
                    self._reasons = _reasons_fn(nvml)
                except Exception:  # noqa: BLE001 - no handle: no telemetry for the row
                    self._nvml = None

    def _read(self) -> Sample:
        nvml, h = self._nvml, self._handle
        reasons = self._reasons
        return Sample(_query(lambda: int(nvml.nvmlDeviceGetClockInfo(h, _CLOCK_SM))),
                      _query(lambda: int(nvml.nvmlDeviceGetClockInfo(h, _CLOCK_MEM))),
                      _query(lambda: float(nvml.nvmlDeviceGetPowerUsage(h))),
                      _query(lambda: int(reasons(h))) if reasons is not None else None)

    def _energy(self) -> float | None:
        return _query(lambda: float(self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle)))

    def _sample(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._between.append(self._read())

    def __enter__(self) -> RowTelemetry:
        if self._nvml is not None:
            self._start = (self._read(), self._energy(), self.clock())
            self._thread = threading.Thread(target=self._sample, name="oprt-telemetry", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._thread is None or self._start is None:
            return
        end, energy, t_end = self._read(), self._energy(), self.clock()
        self._stop.set()
        self._thread.join()
        start, e0, t0 = self._start
        self._result = summarize(start, end, self._between, t_end - t0, (e0, energy))

    def columns(self) -> dict[str, Any]:
        """The row's telemetry columns (:data:`COLUMNS`), empty when nothing was read."""
        return dict(self._result)

    def fill(self, row: Any) -> None:
        """Set the telemetry columns on ``row`` (a :class:`~oprt_bench.model.Row`)."""
        for key, value in self._result.items():
            setattr(row, key, value)
