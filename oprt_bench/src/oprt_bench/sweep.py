"""A sweep: options validated into a :class:`Plan`, then run case by case into rows.

Order of work: for each op, case and dtype, fresh host inputs are drawn from a seed derived
from (``--seed``, op, case, dtype) -- so a row does not depend on what else the sweep ran --
and the float64 reference is computed once; then each backend, the baseline first, is checked
and timed on copies of those inputs. Under process isolation (the default) each backend's rows run
in its own worker process (:mod:`oprt_bench.worker`, :class:`~oprt_bench.runners.Runners`), which
draws the same inputs from the same seed. See docs/measurement.md and docs/reliability.md.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from oprt_core import DTYPES, OprtError, UnknownNameError, get_dtype
from oprt_core.spec import CASE_SETS, Case, OpSpec, parse_shape

from .calibrate import Calibration, TimerCheck, is_host
from .errors import UsageError
from .peaks import Peak, spec_peak
from .runners import Runners, _CasePreparer, _message, calibration_timeout, default_case_timeout, run_row_here
from .timing import FLUSHES, TimingConfig, flush_supports_clean
from .worker import ISOLATIONS, worker_source

__all__ = ["MODES", "FORMATS", "SweepOptions", "Plan", "BackendEntry", "make_plan", "default_baseline",
           "default_time_budget", "case_seed", "run_sweep", "split_names", "calibrate_plan",
           "Runners", "run_row_here", "reusable_calibrations", "default_case_timeout", "call_with_timeout",
           "ISOLATIONS", "check_seconds", "calibration_timeout"]

MODES = ("test", "bench", "all")
AVAILABILITY_TIMEOUT_S = 30.0  # a plugin's availability() / device_info() that takes longer is reported hung
FORMATS = ("csv", "json", "html")


MAX_SHAPE_BYTES = 2**48  # a --shape whose float64 copy would exceed this (256 TiB) is a mistake
MAX_WAIT_S = 3600.0  # one wait's slice: a huge (finite) timeout is waited for in slices the OS accepts


def check_seconds(option: str, value: float) -> float:
    """``value`` when it is a finite positive number of seconds; UsageError naming ``option`` otherwise."""
    if not (value > 0 and math.isfinite(value)):
        raise UsageError(f"{option} must be a positive number of seconds (finite), got {value}")
    return value


def _check_target_ci(value: float) -> float:
    """``--target-ci``: a fraction in [0, 1); 0 never converges (every row samples its whole budget)."""
    if not (math.isfinite(value) and 0 <= value < 1):
        raise UsageError(f"--target-ci must be a fraction of the median in [0, 1) (0: sample the whole budget), "
                         f"got {value}")
    return float(value)


def _check_min_samples(value: int) -> int:
    """``--min-samples``: 1 to the measurement's sample cap."""
    cap = TimingConfig.max_samples
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= cap:
        raise UsageError(f"--min-samples must be a whole number from 1 to {cap}, got {value}")
    return value


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
    flush: str = "dirty"  # cold mode's flush: dirty | clean (timing.FLUSHES)
    time_budget_s: float | None = None  # None: default_time_budget(cases)
    target_ci: float = TimingConfig.target_rel_ci  # stop once the median's 95% CI half-width is below this fraction
    min_samples: int = TimingConfig.min_samples  # samples always taken, whatever the budget and the CI
    seed: int = 0
    formats: str = "csv,json,html"
    calibrate: bool = True  # measure each backend's peak and timer floor before the first row
    isolation: str = "process"  # process: each backend in a worker process (fault isolation); none: in-process
    case_timeout_s: float | None = None  # None: default_case_timeout(time budget); process isolation only
    availability_timeout_s: float = AVAILABILITY_TIMEOUT_S


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
    isolation: str = "none"
    case_timeout_s: float | None = None
    sources: dict[str, Any] = field(default_factory=dict)  # name -> WorkerSource (process isolation)

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
            "formats": self.formats, "calibrate": self.calibrate, "isolation": self.isolation,
            "case_timeout_s": self.case_timeout_s,
            "in_process": [b.name for b in self.backends if self.isolation == "process" and b.name not in self.sources],
        }


def call_with_timeout(fn: Callable[[], Any], timeout_s: float) -> Any:
    """``fn()`` in a daemon thread; TimeoutError when it does not return within ``timeout_s`` (the thread is
    abandoned), its exception re-raised otherwise. Guards plugin code the parent must call (availability)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True, name="oprt-bench availability")
    t.start()
    deadline = time.monotonic() + timeout_s
    while t.is_alive():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        t.join(min(left, MAX_WAIT_S, threading.TIMEOUT_MAX))
    if t.is_alive():
        raise TimeoutError(f"timed out after {timeout_s:g} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _availability(backend: Any, timeout_s: float | None = None) -> tuple[bool, str, str]:
    timeout_s = AVAILABILITY_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        a = call_with_timeout(backend.availability, timeout_s)
        return bool(a.ok), str(a.reason), str(a.device)
    except TimeoutError:
        return False, f"availability check timed out after {timeout_s:g} s", ""
    except Exception as exc:  # noqa: BLE001 - availability must never crash the tool
        return False, f"availability check raised {type(exc).__name__}: {exc}", ""


def _device_info(backend: Any, timeout_s: float | None = None) -> dict[str, Any]:
    timeout_s = AVAILABILITY_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        return call_with_timeout(lambda: backend.device_info().to_dict(), timeout_s)
    except TimeoutError:
        return {"error": f"device_info() timed out after {timeout_s:g} s"}
    except Exception as exc:  # noqa: BLE001 - recorded, not raised
        return {"error": f"{type(exc).__name__}: {exc}"}


def _entry(name: str, backend: Any, device: str, timeout_s: float | None = None) -> BackendEntry:
    info = _device_info(backend, timeout_s)
    # the measured peak is unknown until calibration (--no-calibrate leaves pct_of_peak empty)
    return BackendEntry(name, backend, device or str(info.get("name", "")), info, Peak(None, "none"),
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
    check_seconds("--time-budget", budget)
    target_ci = _check_target_ci(opts.target_ci)
    min_samples = _check_min_samples(opts.min_samples)
    check_seconds("--availability-timeout", opts.availability_timeout_s)

    op_names = _pick("ops", opts.ops, list(registry.ops))
    specs = [registry.get_op(n) for n in op_names]

    dtypes: list[str] = []
    dtype_names = split_names(opts.dtypes)
    if not dtype_names:
        raise UsageError(f"--dtypes is empty; valid choices: all, {', '.join(DTYPES)}")
    for name in dtype_names:
        if name != "all":
            try:
                get_dtype(name)
            except UnknownNameError:
                raise UnknownNameError("dtype", name, [*DTYPES, "all"]) from None
        for dt in (DTYPES if name == "all" else [get_dtype(name).name]):
            if dt not in dtypes:
                dtypes.append(dt)

    if opts.cases not in CASE_SETS:
        raise UnknownNameError("case set", opts.cases, CASE_SETS)
    cases: dict[str, list[Case]] = {}
    if opts.shapes:
        shapes = [parse_shape(s) for s in opts.shapes]
        for text, shape in zip(opts.shapes, shapes):
            if math.prod(shape) * 8 > MAX_SHAPE_BYTES or any(d >= 2**63 for d in shape):
                raise UsageError(f"--shape {text} is too large: {math.prod(shape)} elements (at most "
                                 f"{MAX_SHAPE_BYTES // 8} float64 elements, each extent below 2**63)")
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
    if opts.isolation not in ISOLATIONS:
        raise UnknownNameError("isolation", opts.isolation, ISOLATIONS)
    if opts.case_timeout_s is not None:
        check_seconds("--case-timeout", opts.case_timeout_s)
    # only the backends this run may use are probed: a hung plugin the run never touches costs nothing
    avail: dict[str, tuple[bool, str, str]] = {}

    def probe(name: str) -> tuple[bool, str, str]:
        if name not in avail:
            avail[name] = _availability(registry.get_backend(name), opts.availability_timeout_s)
        return avail[name]

    def available() -> list[str]:  # for an error message: every backend, probed then
        return [n for n in all_backends if probe(n)[0]]

    for name in wanted:
        probe(name)
    if opts.baseline is None and "torch" in registry.backends:
        probe("torch")  # the default baseline, when available
    elif opts.baseline not in (None, "none") and opts.baseline in registry.backends:
        probe(opts.baseline)
    for name in wanted:
        ok, reason, device = avail[name]
        if not ok:
            if explicit:
                raise UsageError(f"backend {name!r} is unavailable: {reason}; available backends: "
                                 f"{', '.join(available()) or '(none)'}")
            skipped[name] = reason
            continue
        entries.append(_entry(name, registry.get_backend(name), device, opts.availability_timeout_s))

    baseline: str | None = opts.baseline if opts.baseline is not None else default_baseline(registry, avail)
    if baseline == "none":
        baseline = None
    notes: list[str] = []
    if baseline is not None:
        if baseline not in registry.backends:
            if opts.baseline is not None:
                raise UnknownNameError("baseline backend", baseline, [*all_backends, "none"])
            baseline = None
        elif not probe(baseline)[0]:
            if opts.baseline is not None:
                raise UsageError(f"baseline backend {baseline!r} is unavailable: {avail[baseline][1]}; "
                                 f"available backends: {', '.join(available()) or '(none)'}, or none")
            baseline = None
    if baseline is not None:
        if baseline not in [e.name for e in entries]:
            entries.append(_entry(baseline, registry.get_backend(baseline), avail[baseline][2],
                                  opts.availability_timeout_s))
            notes.append(f"baseline {baseline!r} added to the backends")
        entries.sort(key=lambda e: e.name != baseline)
    if not entries:
        raise UsageError("no backend is available: " + "; ".join(f"{n}: {r}" for n, r in skipped.items()))

    if opts.flush not in FLUSHES:
        raise UsageError(f"unknown flush {opts.flush!r}; choose {' or '.join(FLUSHES)}")
    if opts.flush == "clean":
        if not opts.cold:
            raise UsageError("--flush clean applies to cold timing; drop --warm or --flush")
        unable = [e.name for e in entries if not flush_supports_clean(e.backend)]
        if unable:
            raise UsageError(f"--flush clean: backend {unable[0]!r} cannot flush clean (its flush_cache() takes "
                             "no 'clean' argument); leave it out or use the default flush")
    timing = TimingConfig(cold=opts.cold, flush=opts.flush, time_budget_s=float(budget), target_rel_ci=target_ci,
                          min_samples=min_samples, warmup_s=min(0.05, 0.2 * float(budget)))
    sources: dict[str, Any] = {}
    case_timeout: float | None = None
    if opts.isolation == "process":
        case_timeout = float(opts.case_timeout_s or default_case_timeout(timing.time_budget_s))
        for e in entries:
            source = worker_source(registry, e.name, op_names)
            if isinstance(source, str):
                notes.append(f"backend {e.name!r} runs in-process (no fault isolation): {source}")
            else:
                sources[e.name] = source
    return Plan(specs, cases, dtypes, entries, skipped, baseline, opts.mode, timing, int(opts.seed), formats, notes,
                calibrate=bool(opts.calibrate) and opts.mode != "test", isolation=opts.isolation,
                case_timeout_s=case_timeout, sources=sources)


# -- calibration ------------------------------------------------------------------------------

def reusable_calibrations(backends: dict[str, Any] | None) -> dict[str, tuple[Calibration, TimerCheck]]:
    """The calibration and timer check of each backend of a run.json ``backends`` that has both (``--resume``
    reuses them: the kept rows' ``pct_of_peak`` and flags were computed with them)."""
    out: dict[str, tuple[Calibration, TimerCheck]] = {}
    for name, b in (backends or {}).items():
        cal, timer = (b or {}).get("calibration"), (b or {}).get("timer")
        if not isinstance(cal, dict) or not isinstance(timer, dict):
            continue
        try:
            out[name] = (Calibration(**{k: v for k, v in cal.items() if k in Calibration.__dataclass_fields__}),
                         TimerCheck(**{k: v for k, v in timer.items() if k in TimerCheck.__dataclass_fields__}))
        except TypeError:  # a field missing (another schema): calibrate again
            continue
    return out


def calibrate_plan(plan: Plan, note: Callable[[str], None] | None = None,
                   on_start: Callable[[str], None] | None = None, runners: Runners | None = None,
                   reuse: dict[str, tuple[Calibration, TimerCheck]] | None = None) -> None:
    """Calibrate every backend of ``plan`` once (measured peak, spec peak, timer floor), in place.

    ``entry.peak`` becomes the measured peak (``pct_of_peak``), ``entry.timer`` the floor of the
    ``launch-bound`` flag. Progress goes to ``note``. A backend that cannot be calibrated keeps
    ``peak`` none and says why; the sweep goes on. Under process isolation it runs in the
    backend's worker (``runners``; a private set is made and stopped when not given). A backend in
    ``reuse`` (``--resume``: the resumed run's calibration) is not measured again.
    """
    if runners is None:
        with Runners(plan) as own:
            return calibrate_plan(plan, note, on_start, own, reuse)
    for entry in plan.backends:
        if reuse and entry.name in reuse:
            entry.calibration, entry.timer = reuse[entry.name]
            entry.peak = entry.calibration.peak
            entry.spec = entry.calibration.spec
            if note is not None:
                note(f"  {entry.name}: calibration of the resumed run kept: {entry.calibration.describe()}")
            continue
        if on_start is not None:
            on_start(f"calibrating {entry.name}")
        if note is not None:
            note(f"calibrating {entry.name} ({entry.device}): device-to-device copy, timer floor...")
        # the empty launch timed like the rows: cold on a device when the run is cold (a synchronous host
        # backend gains nothing from a flush but time)
        entry.calibration, entry.timer = runners.calibrate(entry, plan.timing.cold and not is_host(entry.device_info),
                                                           plan.timing.flush)
        entry.peak = entry.calibration.peak
        entry.spec = entry.calibration.spec
        if note is not None:
            note(f"  {entry.name}: {entry.calibration.describe()}")
            note(f"  {entry.name}: {entry.timer.describe()}")


# -- running -----------------------------------------------------------------------------------

def _params_text(case: Case) -> str:
    return json.dumps(case.param_dict, sort_keys=True) if case.params else ""


def run_sweep(plan: Plan, emit: Callable[[dict[str, Any]], None],
              on_start: Callable[[str], None] | None = None, runners: Runners | None = None,
              skip: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None) -> None:
    """Run every (op, case, dtype, backend) of ``plan``, calling ``emit(row)`` as each row is done.

    Under process isolation each backend's rows run in its worker (``runners``; a private set is
    made and stopped when not given). ``skip(row)`` returning a row (the one already measured) leaves
    the row out (``--resume``).
    """
    if runners is None:
        with Runners(plan) as own:
            return run_sweep(plan, emit, on_start, own, skip)
    for spec, case, dtype in plan.jobs():
        seed = case_seed(plan.seed, spec.name, case.name, dtype)
        base = {
            "op": spec.name, "case": case.name, "shape": case.shape_str, "dtype": dtype,
            "params": _params_text(case), "mode": plan.mode, "seed": seed, "baseline": plan.baseline or "",
            "timing": "" if plan.mode == "test" else plan.timing.label, "flags": "",
        }
        try:
            base["bytes"] = spec.bytes_moved(case, dtype)
            base["flops"] = spec.flops(case)
        except Exception as exc:  # noqa: BLE001 - reported by the setup below as well
            base["bytes"] = base["flops"] = None
            base_error = "setting up the case: " + _message(exc)
        else:
            base_error = ""
        prepared = _CasePreparer(spec, case, dtype, seed)

        baseline_median: float | None = None
        for entry in plan.backends:
            row = dict(base, backend=entry.name, device=entry.device, flavour=entry.device_info.get("flavour", ""))
            old = skip(row) if skip is not None else None
            if old is not None:  # measured by the run being resumed: its baseline time still counts
                if entry.name == plan.baseline and old.get("status") == "ok" and old.get("median_ms"):
                    baseline_median = float(old["median_ms"])
                continue
            if on_start is not None:
                on_start(f"{spec.name} {case.name} {dtype} {entry.name}")
            if base_error:
                row.update(status="error", message=base_error)
            else:
                runners.run_row(entry, spec, case, dtype, row, prepared)
            median = row.get("median_ms")
            if entry.name == plan.baseline and row.get("status") == "ok" and median:
                baseline_median = median
            if baseline_median and row.get("status") == "ok" and median:
                row["speedup"] = baseline_median / median
            emit(row)
