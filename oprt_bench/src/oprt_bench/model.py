"""The data a sweep is made of, shared by the CLI, the plan, the sweep, the runners and the worker.

- :class:`SweepOptions`: the options as the user gave them;
- :class:`Plan`: the options validated, with a :class:`BackendEntry` per swept backend;
- :class:`Row`: one (op, case, dtype, backend) result, the columns of ``results.csv``;
- :class:`RowTask`, :class:`CalibrationTask` and :class:`WorkerSource`: what a backend's worker
  process receives (pickled).

Nothing here runs a backend; every other module of the sweep imports this one, and it imports
none of them.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from oprt_core.dtypes import OPT_IN_DTYPES
from oprt_core.spec import Case, OpSpec

from .calibrate import Calibration, TimerCheck
from .peaks import Peak, compute_peak
from .timing import TimingConfig

__all__ = ["MODES", "FORMATS", "ISOLATIONS", "AVAILABILITY_TIMEOUT_S", "SweepOptions", "BackendEntry", "Plan", "Row",
           "RowTask", "CalibrationTask", "WorkerSource", "RemoteBackend"]

MODES = ("test", "bench", "all")
FORMATS = ("csv", "json", "html")
ISOLATIONS = ("process", "none")
AVAILABILITY_TIMEOUT_S = 30.0  # a plugin's availability() / device_info() that takes longer is reported hung


@dataclass
class SweepOptions:
    """The sweep's options as the user gave them (strings, unvalidated)."""

    ops: str = "all"
    backends: str = "all"
    dtypes: str = "all"
    cases: str = "default"
    shapes: Sequence[str] = ()
    shapes_file: str | None = None  # --shapes FILE: the user's own cases (shapes_file.py)
    mode: str = "all"
    baseline: str | None = None  # None: plan.default_baseline(); "none": no baseline
    cold: bool = True
    flush: str = "dirty"  # cold mode's flush: dirty | clean (timing.FLUSHES)
    timer: str = "events"  # --timing: events | graph (timing.TIMERS)
    time_budget_s: float | None = None  # None: plan.default_time_budget(cases)
    target_ci: float = TimingConfig.target_rel_ci  # stop once the median's 95% CI half-width is below this fraction
    min_samples: int = TimingConfig.min_samples  # samples always taken, whatever the budget and the CI
    seed: int = 0
    formats: str = "csv,json,html"
    calibrate: bool = True  # measure each backend's peak and timer floor before the first row
    recalibrate: bool = False  # measure it even where the calibration cache has a recent one (calcache)
    isolation: str = "process"  # process: each backend in a worker process (fault isolation); none: in-process
    case_timeout_s: float | None = None  # None: runners.default_case_timeout(time budget); process isolation only
    availability_timeout_s: float = AVAILABILITY_TIMEOUT_S
    telemetry: bool = True  # NVML clocks, throttle reasons, power per row where available (telemetry.py)


@dataclass
class BackendEntry:
    """A swept backend: its device, the peak ``pct_of_peak`` divides by (measured by calibration, none
    without), the spec peak of ``pct_of_spec``, and the calibration and timer check once they ran. run.json also
    gets its ``compute_peak`` (the datasheet's dense TFLOP/s per dtype, :func:`oprt_bench.peaks.compute_peak`; {}
    for a device the table does not know).

    ``backend`` is the backend object; :meth:`detached` is the entry without it, as a worker receives it
    (the worker has its own backend)."""

    name: str
    backend: Any
    device: str
    device_info: dict[str, Any]
    peak: Peak
    spec: Peak = field(default_factory=lambda: Peak(None, "none"))
    calibration: Calibration | None = None
    timer: TimerCheck | None = None
    telemetry: dict[str, Any] | None = None  # telemetry.describe_device(): the NVML device, or why none

    def detached(self) -> BackendEntry:
        return BackendEntry(self.name, None, self.device, self.device_info, self.peak, self.spec, self.calibration,
                            self.timer, self.telemetry)

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "device_info": self.device_info, "peak": self.peak.to_dict(),
                "spec_peak": self.spec.to_dict(), "compute_peak": compute_peak(self.device_info),
                "calibration": self.calibration.to_dict() if self.calibration else None,
                "timer": self.timer.to_dict() if self.timer else None, "telemetry": self.telemetry}


@dataclass(frozen=True)
class WorkerSource:
    """How a worker process gets its backend: ``entrypoints`` (rebuild the registry in the worker),
    ``pickle`` (a pickled copy of the backend object) or ``class`` (its pickled class, called without
    arguments: a factory; the built-in ops' implementations for it are then handed to it, as a registry does)."""

    backend: str
    kind: str
    payload: bytes | None = None

    def load(self) -> tuple[Any, Any]:
        """(backend, registry the op specs are read from), in the worker."""
        from oprt_core import get_registry, operators
        from oprt_core.plugins import Registry, get_plugin_manager

        if self.kind == "entrypoints":
            registry = get_registry()
            return registry.get_backend(self.backend), registry
        assert self.payload is not None
        obj = pickle.loads(self.payload)
        backend = operators.equip(obj()) if self.kind == "class" else obj
        return backend, Registry(get_plugin_manager(load_entrypoints=False))


@dataclass(frozen=True)
class RemoteBackend:
    """A backend as the workers of a cluster (``--cluster``) see it: available on some worker or not (and why),
    the device and ``device_info`` of the first worker that has it, whether it can flush clean. The plan of a
    cluster run is made from these, not from this machine's backends."""

    available: bool
    reason: str
    device: str = ""
    device_info: dict[str, Any] = field(default_factory=dict)
    clean_flush: bool = False


@dataclass
class Plan:
    """A validated sweep: which ops, cases, dtypes and backends, and how to time and isolate them."""

    specs: list[OpSpec]
    cases: dict[str, list[Case]]
    dtypes: list[str]
    backends: list[BackendEntry]  # the baseline first
    skipped_backends: dict[str, str]  # name -> why it is not in the sweep
    baseline: str | None
    mode: str
    timing: TimingConfig
    seed: int
    formats: list[str]
    notes: list[str] = field(default_factory=list)
    calibrate: bool = True
    isolation: str = "none"
    case_timeout_s: float | None = None
    sources: dict[str, WorkerSource] = field(default_factory=dict)  # process isolation: backend name -> source

    def jobs(self) -> Iterator[tuple[OpSpec, Case, str]]:
        for spec in self.specs:
            for case in self.cases[spec.name]:
                for dtype in self.op_dtypes(spec):
                    yield spec, case, dtype

    def op_dtypes(self, spec: OpSpec) -> list[str]:
        """The sweep's dtypes that give ``spec`` rows: an opt-in one (e4m3) only where the op declares it."""
        return [d for d in self.dtypes if d in spec.dtypes or d not in OPT_IN_DTYPES]

    @property
    def n_rows(self) -> int:
        return sum(len(self.cases[s.name]) * len(self.op_dtypes(s)) for s in self.specs) * len(self.backends)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ops": [s.name for s in self.specs], "dtypes": self.dtypes,
            "cases": {k: [c.name for c in v] for k, v in self.cases.items()},
            "backends": [b.name for b in self.backends], "skipped_backends": self.skipped_backends,
            "baseline": self.baseline, "mode": self.mode, "timing": self.timing.to_dict(), "seed": self.seed,
            "formats": self.formats, "calibrate": self.calibrate, "isolation": self.isolation,
            "case_timeout_s": self.case_timeout_s,
            "in_process": [b.name for b in self.backends if self.isolation == "process" and b.name not in self.sources],
        }


@dataclass(kw_only=True)
class Row(Mapping[str, Any]):
    """One (op, case, dtype, backend) result. The fields are the columns of ``results.csv`` in their order
    (:data:`oprt_bench.results.COLUMNS`, documented in docs/results-schema.md); None is an empty cell.

    Read-only as a mapping too (``row["status"]``, ``row.get("median_ms")``): the progress lines, the writer
    and callers of :func:`oprt_bench.sweep.run_sweep` read it by column name."""

    op: str
    case: str
    shape: str
    dtype: str
    params: str = ""
    backend: str = ""
    status: str = ""  # ok | unsupported | failed | error, once the row is done
    message: str | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    median_ms: float | None = None
    p10_ms: float | None = None
    p90_ms: float | None = None
    min_ms: float | None = None
    samples: int | None = None
    bytes: int | None = None
    gbps: float | None = None
    pct_of_peak: float | None = None
    pct_of_spec: float | None = None
    baseline: str = ""
    speedup: float | None = None
    flops: int | None = None
    tflops: float | None = None
    mode: str = ""
    timing: str = ""
    stopped_by: str | None = None
    ci_rel: float | None = None
    seed: int = 0
    device: str = ""
    flavour: str = ""
    flags: str = ""
    schema_version: int | None = None  # set by the writer
    kernel: str | None = None
    compile_s: float | None = None  # the launcher's compile time (torch-compile), seconds
    # GPU telemetry while the row was timed (telemetry.py)
    sm_mhz_start: int | None = None
    sm_mhz_end: int | None = None
    sm_mhz_min: int | None = None
    mem_mhz_start: int | None = None
    mem_mhz_end: int | None = None
    throttle_reasons: str | None = None
    power_w: float | None = None
    energy_j: float | None = None
    energy_source: str | None = None
    clock_drop: int | None = None
    # Nsight Compute figures of a profiled row (--profile ncu, profile_ncu.py)
    ncu_time_ms: float | None = None
    ncu_dram_bytes: int | None = None
    ncu_dram_pct: float | None = None
    ncu_report: str | None = None
    timer: str = ""  # events | graph: what bracketed each sample (empty for an untimed row)
    timer_note: str = ""  # graph timing: the buffer rotation, or why the row fell back to events
    event_median_ms: float | None = None  # graph rows under the events' launch-bound threshold: the events median
    host: str = ""  # where the row ran (placement.host_label): the host name, ``:N`` the pinned device
    pct_of_compute: float | None = None  # rows that compute: tflops as a % of the spec dense peak of the row's dtype

    def __getitem__(self, key: str) -> Any:
        if key not in _ROW_FIELDS:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(_ROW_FIELDS)

    def __len__(self) -> int:
        return len(_ROW_FIELDS)

    def to_dict(self) -> dict[str, Any]:
        """The row as a plain dict, in column order."""
        return {k: getattr(self, k) for k in _ROW_FIELDS}


_ROW_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Row))


@dataclass
class RowTask:
    """One row for a backend's worker: the entry (detached), the case and the timing settings of the plan."""

    entry: BackendEntry
    op: str
    case: Case
    dtype: str
    row: Row
    mode: str
    timing: TimingConfig
    shared: Any = None  # a shared_case.SharedPrepared: the case drawn once by the parent; None: draw it here


@dataclass(frozen=True)
class CalibrationTask:
    """One calibration for a backend's worker: the device's info, and how the rows will be timed."""

    device_info: dict[str, Any]
    cold: bool
    flush: str = "dirty"
