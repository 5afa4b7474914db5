"""Per-run calibration of each backend: the measured peak bandwidth and the timer floor.

Once per run, before the first row, for every swept backend (docs/measurement.md):

- :func:`calibrate`: a device-to-device copy timed **through the backend** with the sweep's own
  timing loop (cold), on two buffers of :func:`probe_bytes` each (at least 8x the device's L2
  on GPUs). Bytes counted are read + written (``2 x buffer``), like cudaMemcpy bandwidth figures.
  The backend's ``copy_probe(nbytes)`` (:class:`oprt_core.backend.CalibrationProbes`) does the
  copy; a backend without it is calibrated with its own ``copy`` op on f32 buffers.
- :func:`timer_check`: the floor of what the backend's timer can tell apart: the median time of
  an empty launch (``empty_launch_probe()``, else an event pair with nothing between) and the
  events' resolution (the documented one, e.g. 0.5 us for CUDA events, else the smallest non-zero
  difference of back-to-back event pairs). Rows whose median is under 10x that floor are
  ``launch-bound`` (:mod:`oprt_bench.flags`).

Both are pure functions of a backend, its device info and a clock, so tests drive them with fake
backends and synthetic timings.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from oprt_core.operators import with_role

from .errors import one_line
from .peaks import Peak, spec_peak
from .timing import TimingConfig, measure

__all__ = ["Calibration", "TimerCheck", "calibrate", "timer_check", "probe_bytes", "calibration_config", "is_host",
           "L2_MULTIPLE", "GPU_MIN_BYTES", "HOST_MAX_BYTES", "LAUNCH_BOUND_FACTOR"]

MiB = 1 << 20
L2_MULTIPLE = 8  # the copy buffers are at least this many times the last-level cache
GPU_MIN_BYTES = 512 * MiB  # and at least this on a GPU (256 MiB is the floor the design asks; HBM is flat above)
HOST_MAX_BYTES = 256 * MiB  # numpy and other host backends: capped, so CI stays fast
HOST_DEFAULT_LLC = 32 * MiB  # when the host does not tell its last-level cache size
LAUNCH_BOUND_FACTOR = 10.0
RESOLUTION_PAIRS = 64


def is_host(device_info: dict[str, Any]) -> bool:
    """A host (CPU) backend: its device reports no memory size (numpy, torch on the CPU)."""
    return not device_info.get("memory_bytes")


def probe_bytes(device_info: dict[str, Any] | None) -> int:
    """Bytes of each of the two copy buffers: 8x L2, at least 512 MiB on a GPU (at most 1/8 of its
    memory), at most 256 MiB on a host; rounded up to whole MiB."""
    info = device_info or {}
    l2 = int(info.get("l2_bytes") or 0)
    if is_host(info):
        nbytes = min(L2_MULTIPLE * (l2 or HOST_DEFAULT_LLC), HOST_MAX_BYTES)
    else:
        nbytes = max(L2_MULTIPLE * l2, GPU_MIN_BYTES)
        memory = int(info.get("memory_bytes") or 0)
        if memory and nbytes > memory // 8:
            nbytes = max(memory // 8, L2_MULTIPLE * l2)
    return -(-nbytes // MiB) * MiB


def calibration_config(device_info: dict[str, Any] | None, flush: str = "dirty") -> TimingConfig:
    """The timing loop's settings for the copy: cold with the rows' flush, 20+ samples on a GPU (5+ on a host)."""
    if is_host(device_info or {}):
        return TimingConfig(cold=True, flush=flush, time_budget_s=0.3, target_rel_ci=0.01, min_samples=5,
                            max_samples=50, warmup_s=0.0, warmup_calls=1)
    return TimingConfig(cold=True, flush=flush, time_budget_s=1.0, target_rel_ci=0.005, min_samples=20,
                        max_samples=200, warmup_s=0.02, warmup_calls=2)


@dataclass
class Calibration:
    """The measured and spec peak of one backend's device, and how the measured one was taken."""

    measured_peak_gbps: float | None
    spec_peak_gbps: float | None
    spec_source: str  # driver | table | table (override) | none
    method: str  # copy_probe | <the bandwidth-probe op> op (f32) | none
    buffer_bytes: int | None = None  # bytes copied per call (each of the two buffers)
    bytes_per_sample: int | None = None  # read + written: 2 x buffer_bytes
    l2_bytes: int | None = None
    samples: int = 0
    median_ms: float | None = None
    p10_ms: float | None = None
    p90_ms: float | None = None
    min_ms: float | None = None
    ci_rel: float | None = None
    stopped_by: str = ""
    timing: str = "cold"
    elapsed_s: float = 0.0
    error: str = ""

    @property
    def peak(self) -> Peak:
        return Peak(self.measured_peak_gbps, "measured" if self.measured_peak_gbps else "none")

    @property
    def spec(self) -> Peak:
        return Peak(self.spec_peak_gbps, self.spec_source)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        spec = (f"spec {self.spec_peak_gbps:.4g} GB/s ({self.spec_source})" if self.spec_peak_gbps
                else "spec peak unknown")
        if self.measured_peak_gbps is None:
            why = self.error or "not measured"
            return f"measured peak unavailable ({why}); {spec}"
        pct = f", {100 * self.measured_peak_gbps / self.spec_peak_gbps:.0f}% of spec" if self.spec_peak_gbps else ""
        return (f"measured peak {self.measured_peak_gbps:.4g} GB/s{pct} (device-to-device copy of "
                f"{_size(self.buffer_bytes)} via {self.method}, read + written, median of {self.samples}); {spec}")


@dataclass
class TimerCheck:
    """The floor of one backend's timer: rows under ``LAUNCH_BOUND_FACTOR`` x ``floor_ms`` are launch-bound."""

    floor_ms: float | None
    empty_launch_ms: float | None  # median of the empty launch
    empty_launch_method: str  # empty_launch_probe | empty event pair | none
    resolution_ms: float | None  # the one used: documented, else measured
    resolution_source: str  # documented | measured | none
    measured_resolution_ms: float | None = None  # smallest non-zero back-to-back event-pair difference
    documented_resolution_ms: float | None = None
    samples: int = 0
    p10_ms: float | None = None
    p90_ms: float | None = None
    launch_bound_below_ms: float | None = None
    timing: str = "warm"  # the loop the empty launch was timed with: the rows' own (cold on a GPU)
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        if self.floor_ms is None:
            return f"timer floor unknown ({self.error or 'not measured'})"
        res = f"{_us(self.resolution_ms)} ({self.resolution_source})" if self.resolution_ms is not None else "unknown"
        return (f"timer floor {_us(self.floor_ms)} (empty launch {_us(self.empty_launch_ms)} via "
                f"{self.empty_launch_method}, resolution {res}): rows under {_us(self.launch_bound_below_ms)} "
                f"are launch-bound")


def _us(ms: float | None) -> str:
    return "?" if ms is None else f"{ms * 1e3:.3g} us"


def _size(nbytes: int | None) -> str:
    if not nbytes:
        return "?"
    return f"{nbytes / MiB:.0f} MiB" if nbytes >= MiB else f"{nbytes} B"


def _probe_launcher(backend: Any, nbytes: int) -> tuple[Callable[[], Any] | None, str, int]:
    """(launcher, method, bytes copied per call) of the bandwidth probe: the backend's copy_probe, else its op of
    role ``bandwidth-probe`` (oprt_core.operators.with_role) on f32 buffers; launcher None when impossible."""
    probe = getattr(backend, "copy_probe", None)
    if callable(probe):
        return probe(nbytes), "copy_probe", nbytes
    spec, params = with_role("bandwidth-probe")
    if not backend.supports(spec.name, "f32"):
        return None, "none", 0
    n = max(1, nbytes // 4)
    x = backend.to_device(np.ones(n, np.float32))
    out = backend.empty((n,), "f32")
    return backend.prepare(spec.name, [x], out, params), f"{spec.name} op (f32)", n * 4


def calibrate(backend: Any, device_info: dict[str, Any] | None, *, nbytes: int | None = None,
              config: TimingConfig | None = None, clock: Callable[[], float] = time.perf_counter,
              flush: str = "dirty") -> Calibration:
    """Measure ``backend``'s device-to-device copy bandwidth (GB/s, read + written) once; never raises.

    ``flush``: the cold flush of the rows (the copy is timed under the same one), unless ``config`` is given."""
    info = device_info or {}
    spec = spec_peak(info)
    nbytes = int(nbytes or probe_bytes(info))
    cal = Calibration(None, spec.gbps, spec.source, "none", l2_bytes=info.get("l2_bytes"))
    t0 = clock()
    launch = None
    try:
        launch, method, copied = _probe_launcher(backend, nbytes)
        cal.method = method
        if launch is None:
            cal.error = f"the backend has no copy_probe and no f32 {with_role('bandwidth-probe')[0].name} op"
            return cal
        cal.buffer_bytes, cal.bytes_per_sample = copied, 2 * copied
        config = config or calibration_config(info, flush)
        cal.timing = config.label
        m = measure(backend, launch, config, clock=clock)
        s = m.summary
        cal.samples, cal.median_ms, cal.p10_ms, cal.p90_ms = s.samples, s.median_ms, s.p10_ms, s.p90_ms
        cal.min_ms, cal.ci_rel, cal.stopped_by = s.min_ms, s.ci_rel, m.stopped_by
        if s.median_ms > 0:
            cal.measured_peak_gbps = cal.bytes_per_sample / (s.median_ms * 1e6)
        else:
            cal.error = f"the copy's median time is {s.median_ms} ms"
    except Exception as exc:  # noqa: BLE001 - a failed calibration is recorded; the sweep goes on
        cal.error = one_line(exc)
    finally:
        del launch  # the probe's buffers go now, not at the end of the run
        try:
            backend.synchronize()
        except Exception:  # noqa: BLE001
            pass
        cal.elapsed_s = clock() - t0
    return cal


def _measured_resolution(backend: Any, pairs: int) -> float | None:
    """The smallest non-zero difference of ``pairs`` back-to-back event pairs (None if all are zero)."""
    diffs = []
    for _ in range(pairs):
        start, end = backend.event(), backend.event()
        start.record()
        end.record()
        backend.synchronize()
        diffs.append(float(start.elapsed_ms(end)))
    positive = [d for d in diffs if d > 0]
    return min(positive) if positive else None


def timer_check(backend: Any, *, cold: bool = False, config: TimingConfig | None = None,
                pairs: int = RESOLUTION_PAIRS, clock: Callable[[], float] = time.perf_counter,
                flush: str = "dirty") -> TimerCheck:
    """Measure ``backend``'s timer floor (ms) once; never raises.

    ``cold``: time the empty launch as cold rows are timed (a flush before each sample). On a GPU the
    flush keeps the device busy while the host enqueues the launch, so the launch's host overhead is
    hidden exactly as in a cold row; timed warm, the floor would include it.
    """
    check = TimerCheck(None, None, "none", None, "none")
    try:
        documented = getattr(backend, "timer_resolution_ms", None)
        check.documented_resolution_ms = documented() if callable(documented) else None
        check.measured_resolution_ms = _measured_resolution(backend, pairs)
        if check.documented_resolution_ms is not None:
            check.resolution_ms, check.resolution_source = check.documented_resolution_ms, "documented"
        elif check.measured_resolution_ms is not None:
            check.resolution_ms, check.resolution_source = check.measured_resolution_ms, "measured"
        probe = getattr(backend, "empty_launch_probe", None)
        if callable(probe):
            launch, check.empty_launch_method = probe(), "empty_launch_probe"
        else:
            launch, check.empty_launch_method = (lambda: None), "empty event pair"
        cfg = config or TimingConfig(cold=cold, flush=flush, time_budget_s=0.2, target_rel_ci=0.02, min_samples=30,
                                     max_samples=1000, warmup_s=0.01, warmup_calls=3)
        check.timing = cfg.label
        m = measure(backend, launch, cfg, clock=clock)
        s = m.summary
        check.empty_launch_ms, check.samples, check.p10_ms, check.p90_ms = s.median_ms, s.samples, s.p10_ms, s.p90_ms
        check.floor_ms = max(s.median_ms, check.resolution_ms or 0.0)
        check.launch_bound_below_ms = LAUNCH_BOUND_FACTOR * check.floor_ms
    except Exception as exc:  # noqa: BLE001 - recorded; rows then get no launch-bound flag
        check.error = one_line(exc)
    return check
