"""A sweep: options validated into a :class:`Plan`, then run case by case into rows.

Order of work: for each op, case and dtype, fresh host inputs are drawn from a seed derived
from (``--seed``, op, case, dtype) -- so a row does not depend on what else the sweep ran --
and the float64 reference is computed once; then each backend, the baseline first, is checked
and timed on copies of those inputs. See docs/measurement.md.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from oprt_core import DTYPES, OprtError, UnknownNameError, UnsupportedCase, get_dtype
from oprt_core.spec import CASE_SETS, Case, OpSpec, parse_shape

from .calibrate import Calibration, TimerCheck, calibrate, is_host, timer_check
from .errors import UsageError
from .flags import row_flags
from .peaks import Peak, peak_gbps, spec_peak
from .timing import TimingConfig, measure

__all__ = ["MODES", "FORMATS", "SweepOptions", "Plan", "BackendEntry", "make_plan", "default_baseline",
           "default_time_budget", "case_seed", "run_sweep", "split_names", "calibrate_plan"]

MODES = ("test", "bench", "all")
FORMATS = ("csv", "json", "html")


def split_names(text: str | None) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]`` (order kept, duplicates dropped)."""
    out: list[str] = []
    for part in (text or "").split(","):
        part = part.strip()
        if part and part not in out:
            out.append(part)
    return out


def case_seed(seed: int, op: str, case: str, dtype: str) -> int:
    """A 63-bit seed from the run seed and a stable hash of (op, case, dtype), independent of sweep order."""
    digest = hashlib.sha256(f"{seed}\0{op}\0{case}\0{dtype}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def default_time_budget(case_set: str) -> float:
    """Seconds of sampling per case and backend: 0.5, or 0.1 for the ``smoke`` set (which exists to be quick)."""
    return 0.1 if case_set == "smoke" else 0.5


def default_baseline(registry: Any, availability: dict[str, tuple[bool, str, str]] | None = None) -> str:
    """The baseline backend when ``--baseline`` is not given: ``torch`` when it is registered and
    available (the library kernel developers compare with), else ``numpy``."""
    if "torch" in registry.backends:
        known = (availability or {}).get("torch")
        ok = known[0] if known is not None else _availability(registry.get_backend("torch"))[0]
        if ok:
            return "torch"
    return "numpy"


@dataclass
class SweepOptions:
    """The sweep's options as the user gave them (strings, unvalidated)."""

    ops: str = "all"
    backends: str = "all"
    dtypes: str = "all"
    cases: str = "default"
    shapes: Sequence[str] = ()
    mode: str = "all"
    baseline: str | None = None  # None: default_baseline(); "none": no baseline
    cold: bool = True
    time_budget_s: float | None = None  # None: default_time_budget(cases)
    seed: int = 0
    formats: str = "csv,json,html"
    calibrate: bool = True  # measure each backend's peak and timer floor before the first row


@dataclass
class BackendEntry:
    """A swept backend: its device, the peak ``pct_of_peak`` divides by (measured by calibration, none
    without), the spec peak of ``pct_of_spec``, and the calibration and timer check once they ran."""

    name: str
    backend: Any
    device: str
    device_info: dict[str, Any]
    peak: Peak
    spec: Peak = field(default_factory=lambda: Peak(None, "none"))
    calibration: Calibration | None = None
    timer: TimerCheck | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "device_info": self.device_info, "peak": self.peak.to_dict(),
                "spec_peak": self.spec.to_dict(),
                "calibration": self.calibration.to_dict() if self.calibration else None,
                "timer": self.timer.to_dict() if self.timer else None}


@dataclass
class Plan:
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

    def jobs(self) -> Iterator[tuple[OpSpec, Case, str]]:
        for spec in self.specs:
            for case in self.cases[spec.name]:
                for dtype in self.dtypes:
                    yield spec, case, dtype

    @property
    def n_rows(self) -> int:
        return sum(len(c) for c in self.cases.values()) * len(self.dtypes) * len(self.backends)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ops": [s.name for s in self.specs], "dtypes": self.dtypes,
            "cases": {k: [c.name for c in v] for k, v in self.cases.items()},
            "backends": [b.name for b in self.backends], "skipped_backends": self.skipped_backends,
            "baseline": self.baseline, "mode": self.mode, "timing": self.timing.to_dict(), "seed": self.seed,
            "formats": self.formats, "calibrate": self.calibrate,
        }


def _availability(backend: Any) -> tuple[bool, str, str]:
    try:
        a = backend.availability()
        return bool(a.ok), str(a.reason), str(a.device)
    except Exception as exc:  # noqa: BLE001 - availability must never crash the tool
        return False, f"availability() raised {type(exc).__name__}: {exc}", ""


def _device_info(backend: Any) -> dict[str, Any]:
    try:
        return backend.device_info().to_dict()
    except Exception as exc:  # noqa: BLE001 - recorded, not raised
        return {"error": f"{type(exc).__name__}: {exc}"}


def _entry(name: str, backend: Any, device: str) -> BackendEntry:
    info = _device_info(backend)
    return BackendEntry(name, backend, device or str(info.get("name", "")), info, peak_gbps(backend, info),
                        spec_peak(info))


def _pick(kind: str, text: str, choices: Sequence[str]) -> list[str]:
    names = split_names(text)
    if not names:
        raise UsageError(f"--{kind} is empty; valid choices: all, {', '.join(choices)}")
    if "all" in names:
        return list(choices)
    for name in names:
        if name not in choices:
            raise UnknownNameError(kind.rstrip("s"), name, [*choices, "all"])
    return names


def make_plan(registry: Any, opts: SweepOptions) -> Plan:
    """Validate every option; raises UsageError or OprtError (a user mistake) before anything is created."""
    if opts.mode not in MODES:
        raise UnknownNameError("mode", opts.mode, MODES)
    formats = split_names(opts.formats)
    for f in formats:
        if f not in FORMATS:
            raise UnknownNameError("format", f, FORMATS)
    if not formats:
        raise UsageError(f"--format is empty; valid choices: {', '.join(FORMATS)}")
    budget = opts.time_budget_s if opts.time_budget_s is not None else default_time_budget(opts.cases)
    if not (budget > 0 and math.isfinite(budget)):
        raise UsageError(f"--time-budget must be a positive number of seconds, got {budget}")

    op_names = _pick("ops", opts.ops, list(registry.ops))
    specs = [registry.get_op(n) for n in op_names]

    dtypes: list[str] = []
    for name in split_names(opts.dtypes) or ["all"]:
        for dt in (DTYPES if name == "all" else [get_dtype(name).name]):
            if dt not in dtypes:
                dtypes.append(dt)

    if opts.cases not in CASE_SETS:
        raise UnknownNameError("case set", opts.cases, CASE_SETS)
    cases: dict[str, list[Case]] = {}
    if opts.shapes:
        shapes = [parse_shape(s) for s in opts.shapes]
        for spec in specs:
            cases[spec.name] = []
            for text, shape in zip(opts.shapes, shapes):
                try:
                    cases[spec.name].append(spec.custom_case(shape))
                except OprtError as exc:
                    raise UsageError(f"--shape {text} does not fit op {spec.name}: {exc}") from None
    else:
        cases = {s.name: list(s.case_sets.get(opts.cases, ())) for s in specs}

    all_backends = list(registry.backends)
    explicit = "all" not in split_names(opts.backends)
    wanted = _pick("backends", opts.backends, all_backends)
    entries: list[BackendEntry] = []
    skipped: dict[str, str] = {}
    avail: dict[str, tuple[bool, str, str]] = {n: _availability(registry.get_backend(n)) for n in all_backends}
    available = [n for n in all_backends if avail[n][0]]
    for name in wanted:
        ok, reason, device = avail[name]
        if not ok:
            if explicit:
                raise UsageError(f"backend {name!r} is unavailable: {reason}; available backends: "
                                 f"{', '.join(available) or '(none)'}")
            skipped[name] = reason
            continue
        entries.append(_entry(name, registry.get_backend(name), device))

    baseline: str | None = opts.baseline if opts.baseline is not None else default_baseline(registry, avail)
    if baseline == "none":
        baseline = None
    notes: list[str] = []
    if baseline is not None:
        if baseline not in registry.backends:
            if opts.baseline is not None:
                raise UnknownNameError("baseline backend", baseline, [*all_backends, "none"])
            baseline = None
        elif not avail[baseline][0]:
            if opts.baseline is not None:
                raise UsageError(f"baseline backend {baseline!r} is unavailable: {avail[baseline][1]}; "
                                 f"available backends: {', '.join(available) or '(none)'}, or none")
            baseline = None
    if baseline is not None:
        if baseline not in [e.name for e in entries]:
            entries.append(_entry(baseline, registry.get_backend(baseline), avail[baseline][2]))
            notes.append(f"baseline {baseline!r} added to the backends")
        entries.sort(key=lambda e: e.name != baseline)
    if not entries:
        raise UsageError("no backend is available: " + "; ".join(f"{n}: {r}" for n, r in skipped.items()))

    timing = TimingConfig(cold=opts.cold, time_budget_s=float(budget), warmup_s=min(0.05, 0.2 * float(budget)))
    return Plan(specs, cases, dtypes, entries, skipped, baseline, opts.mode, timing, int(opts.seed), formats, notes,
                calibrate=bool(opts.calibrate) and opts.mode != "test")


# -- calibration ------------------------------------------------------------------------------

def calibrate_plan(plan: Plan, note: Callable[[str], None] | None = None,
                   on_start: Callable[[str], None] | None = None) -> None:
    """Calibrate every backend of ``plan`` once (measured peak, spec peak, timer floor), in place.

    ``entry.peak`` becomes the measured peak (``pct_of_peak``), ``entry.timer`` the floor of the
    ``launch-bound`` flag. Progress goes to ``note``. A backend that cannot be calibrated keeps
    ``peak`` none and says why; the sweep goes on.
    """
    for entry in plan.backends:
        if on_start is not None:
            on_start(f"calibrating {entry.name}")
        if note is not None:
            note(f"calibrating {entry.name} ({entry.device}): device-to-device copy, timer floor...")
        entry.calibration = calibrate(entry.backend, entry.device_info)
        entry.peak = entry.calibration.peak
        entry.spec = entry.calibration.spec
        # the empty launch timed like the rows: cold on a device when the run is cold (a synchronous host
        # backend gains nothing from a flush but time)
        entry.timer = timer_check(entry.backend, cold=plan.timing.cold and not is_host(entry.device_info))
        if note is not None:
            note(f"  {entry.name}: {entry.calibration.describe()}")
            note(f"  {entry.name}: {entry.timer.describe()}")


# -- running -----------------------------------------------------------------------------------

def _params_text(case: Case) -> str:
    return json.dumps(case.param_dict, sort_keys=True) if case.params else ""


def _message(exc: BaseException) -> str:
    text = str(exc).strip().replace("\n", " ")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _run_backend(entry: BackendEntry, spec: OpSpec, case: Case, dtype: str, inputs: list[np.ndarray],
                 ref: np.ndarray, plan: Plan, row: dict[str, Any]) -> None:
    """Check and time one backend on one (case, dtype); fills ``row`` in place."""
    backend = entry.backend
    params = case.param_dict
    arrays: list[Any] = []
    try:
        support = backend.supports(spec.name, dtype, case)
        if not support:
            row.update(status="unsupported", message=support.reason or "unsupported by the backend")
            return
        arrays = [backend.to_device(x) for x in inputs]
        out = backend.empty(spec.output_shape([x.shape for x in inputs], params), dtype)
        arrays.append(out)
        backend.fill_nan(out)
        launch = backend.prepare(spec.name, arrays[:-1], out, params)
        launch()
        backend.synchronize()
        first = backend.to_host(out)
        check = spec.check(first, inputs, dtype, params, ref)
        row.update(max_abs_err=check.max_abs_err, max_rel_err=check.max_rel_err)
        if not check.ok:
            row.update(status="failed", message=check.message)
            return
        if plan.mode == "test":
            row.update(status="ok")
            return
        m = measure(backend, launch, plan.timing)
        s = m.summary
        row.update(status="ok", median_ms=s.median_ms, p10_ms=s.p10_ms, p90_ms=s.p90_ms, min_ms=s.min_ms,
                   samples=s.samples, ci_rel=s.ci_rel, stopped_by=m.stopped_by)
        if s.median_ms > 0:
            row["gbps"] = row["bytes"] / (s.median_ms * 1e6)
            row["tflops"] = row["flops"] / (s.median_ms * 1e9) if row["flops"] else None
            if entry.peak.gbps:
                row["pct_of_peak"] = 100.0 * row["gbps"] / entry.peak.gbps
            if entry.spec.gbps:
                row["pct_of_spec"] = 100.0 * row["gbps"] / entry.spec.gbps
        row["flags"] = ";".join(row_flags(
            row, floor_ms=entry.timer.floor_ms if entry.timer else None,
            l2_bytes=entry.device_info.get("l2_bytes"), measured_peak_gbps=entry.peak.gbps, cold=plan.timing.cold))
        if plan.mode == "all":
            again = backend.to_host(out)
            # a bit-identical output needs no second check; a different one (atomics, races) gets one
            if not np.array_equal(again, first, equal_nan=True):
                recheck = spec.check(again, inputs, dtype, params, ref)
                row.update(max_abs_err=max(check.max_abs_err, recheck.max_abs_err),
                           max_rel_err=max(check.max_rel_err, recheck.max_rel_err))
                if not recheck.ok:
                    row.update(status="failed", message="after timing: " + recheck.message)
    except UnsupportedCase as exc:
        row.update(status="unsupported", message=_message(exc))
    except Exception as exc:  # noqa: BLE001 - one broken case is a row, the sweep goes on
        row.update(status="error", message=_message(exc))
    finally:
        arrays.clear()


def run_sweep(plan: Plan, emit: Callable[[dict[str, Any]], None],
              on_start: Callable[[str], None] | None = None) -> None:
    """Run every (op, case, dtype, backend) of ``plan``, calling ``emit(row)`` as each row is done."""
    for spec, case, dtype in plan.jobs():
        seed = case_seed(plan.seed, spec.name, case.name, dtype)
        base = {
            "op": spec.name, "case": case.name, "shape": case.shape_str, "dtype": dtype,
            "params": _params_text(case), "mode": plan.mode, "seed": seed, "baseline": plan.baseline or "",
            "timing": "" if plan.mode == "test" else ("cold" if plan.timing.cold else "warm"), "flags": "",
        }
        inputs: list[np.ndarray] | None = None
        ref: np.ndarray | None = None
        setup_error = ""
        try:
            base["bytes"] = spec.bytes_moved(case, dtype)
            base["flops"] = spec.flops(case)
            if dtype in spec.dtypes:
                inputs = spec.make_inputs(case, dtype, np.random.default_rng(seed))
                ref = spec.reference(inputs, case.param_dict)
        except Exception as exc:  # noqa: BLE001 - the case itself is broken: every backend's row says so
            setup_error = "setting up the case: " + _message(exc)
        baseline_median: float | None = None
        for entry in plan.backends:
            if on_start is not None:
                on_start(f"{spec.name} {case.name} {dtype} {entry.name}")
            row = dict(base, backend=entry.name, device=entry.device, flavour=entry.device_info.get("flavour", ""))
            if setup_error:
                row.update(status="error", message=setup_error)
            elif dtype not in spec.dtypes:
                row.update(status="unsupported", message=f"op {spec.name} does not define dtype {dtype}")
            else:
                _run_backend(entry, spec, case, dtype, inputs, ref, plan, row)
            median = row.get("median_ms")
            if entry.name == plan.baseline and row.get("status") == "ok" and median:
                baseline_median = median
            if baseline_median and row.get("status") == "ok" and median:
                row["speedup"] = baseline_median / median
            emit(row)
