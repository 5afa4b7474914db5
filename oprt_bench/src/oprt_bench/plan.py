"""Validating a sweep's options into a :class:`~oprt_bench.model.Plan`, before anything runs.

Every option is checked and every backend the run may use is probed for availability (in a thread with a
timeout, :mod:`oprt_bench.availability`); a user mistake raises :class:`~oprt_bench.errors.UsageError` or
another :class:`~oprt_core.OprtError` before a file is written. Under process isolation each backend gets
the :class:`~oprt_bench.model.WorkerSource` its worker rebuilds it from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from oprt_core import DTYPES, OPT_IN_DTYPES, OprtError, Registry, UnknownNameError, get_dtype
from oprt_core.plugins import install_hint
from oprt_core.spec import CASE_SETS, Case, parse_shape

from .availability import availability as check_availability
from .availability import device_info
from .errors import UsageError
from .memory import host_available
from .model import FORMATS, ISOLATIONS, MODES, BackendEntry, Plan, RemoteBackend, SweepOptions, WorkerSource
from .peaks import Peak, spec_peak
from .runners import default_case_timeout
from .shapes_file import file_cases, load_shapes_file
from .timing import FLUSHES, TIMERS, TimingConfig, flush_supports_clean
from .worker import worker_source

__all__ = ["make_plan", "check_seconds", "check_min_samples", "split_names", "default_time_budget", "default_baseline"]

MAX_SHAPE_BYTES = 2**48  # a --shape whose float64 copy would exceed this (256 TiB) is a mistake


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


def check_min_samples(value: int, option: str = "--min-samples") -> int:
    """``--min-samples`` (``ab``'s ``--min-pairs``): 1 to the measurement's sample cap."""
    cap = TimingConfig.max_samples
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= cap:
        raise UsageError(f"{option} must be a whole number from 1 to {cap}, got {value}")
    return value


def split_names(text: str | None) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]`` (order kept, duplicates dropped)."""
    out: list[str] = []
    for part in (text or "").split(","):
        part = part.strip()
        if part and part not in out:
            out.append(part)
    return out


def default_time_budget(case_set: str) -> float:
    """Seconds of sampling per case and backend: 0.5, or 0.1 for the ``smoke`` set (which exists to be quick)."""
    return 0.1 if case_set == "smoke" else 0.5


def default_baseline(registry: Any, availability: dict[str, tuple[bool, str, str]] | None = None) -> str:
    """The baseline backend when ``--baseline`` is not given: ``torch`` when it is registered and
    available (the library kernel developers compare with), else ``numpy``."""
    if "torch" in registry.backends:
        known = (availability or {}).get("torch")
        ok = known[0] if known is not None else check_availability(registry.get_backend("torch"))[0]
        if ok:
            return "torch"
    return "numpy"


def _entry(name: str, backend: Any, device: str, timeout_s: float | None = None) -> BackendEntry:
    info = device_info(backend, timeout_s)
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
            raise UnknownNameError(kind.rstrip("s"), name, [*choices, "all"],
                                   install_hint(name) if kind == "backends" else None)
    return names


def make_plan(registry: Registry, opts: SweepOptions, remote: Mapping[str, RemoteBackend] | None = None) -> Plan:
    """Validate every option; raises UsageError or OprtError (a user mistake) before anything is created.

    ``remote``: the backends of a cluster's workers (``--cluster``, :mod:`oprt_bench.fleet`); the plan's backends
    are then theirs (available where a worker has them), not this machine's, and every backend's worker rebuilds
    it from its own installed plugins."""
    if opts.mode not in MODES:
        raise UnknownNameError("mode", opts.mode, MODES)
    host_available()  # a malformed OPRT_HOST_MEMORY is refused before anything runs
    formats = split_names(opts.formats)
    for f in formats:
        if f not in FORMATS:
            raise UnknownNameError("format", f, FORMATS)
    if not formats:
        raise UsageError(f"--format is empty; valid choices: {', '.join(FORMATS)}")
    budget = opts.time_budget_s if opts.time_budget_s is not None else default_time_budget(opts.cases)
    check_seconds("--time-budget", budget)
    target_ci = _check_target_ci(opts.target_ci)
    min_samples = check_min_samples(opts.min_samples)
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
                raise UnknownNameError("dtype", name, [*DTYPES, *OPT_IN_DTYPES, "all"]) from None
        for dt in (DTYPES if name == "all" else [get_dtype(name).name]):
            if dt not in dtypes:
                dtypes.append(dt)

    if opts.cases not in CASE_SETS:
        raise UnknownNameError("case set", opts.cases, CASE_SETS)
    cases: dict[str, list[Case]] = {s.name: [] for s in specs}
    notes: list[str] = []
    if opts.shapes:
        shapes = [parse_shape(s) for s in opts.shapes]
        for text, shape in zip(opts.shapes, shapes):
            if math.prod(shape) * 8 > MAX_SHAPE_BYTES or any(d >= 2**63 for d in shape):
                raise UsageError(f"--shape {text} is too large: {math.prod(shape)} elements (at most "
                                 f"{MAX_SHAPE_BYTES // 8} float64 elements, each extent below 2**63)")
        for spec in specs:
            for text, shape in zip(opts.shapes, shapes):
                try:
                    cases[spec.name].append(spec.custom_case(shape))
                except OprtError as exc:
                    raise UsageError(f"--shape {text} does not fit op {spec.name}: {exc}") from None
    if opts.shapes_file:
        file_entries = load_shapes_file(opts.shapes_file)
        for op, found in file_cases(opts.shapes_file, file_entries, specs, list(registry.ops)).items():
            cases[op].extend(found)
        if not any(cases.values()):
            raise UsageError(f"--shapes {str(opts.shapes_file)!r}: none of its entries is for an op of --ops "
                             f"({', '.join(op_names)})")
    for op, given in cases.items():  # rows are keyed by (op, case name): two cases of one name would share rows
        seen: set[str] = set()
        for c in given:
            if c.name in seen:
                raise UsageError(f"two cases of op {op} are named {c.name!r} (from --shape and --shapes, or a "
                                 "repeated --shape): rows are keyed by the case name; rename one")
            seen.add(c.name)
    if not opts.shapes and not opts.shapes_file:
        cases = {s.name: list(s.case_sets.get(opts.cases, ())) for s in specs}
        # an op without the set (a third-party op with no models set) has no rows, and the run says so
        lacking = [s.name for s in specs if opts.cases not in s.case_sets]
        if len(lacking) == len(specs):
            raise UsageError(f"no op of --ops has a {opts.cases!r} case set (ops: {', '.join(lacking)})")
        for name in lacking:
            notes.append(f"op {name!r} has no {opts.cases!r} case set: no rows for it")

    # an opt-in dtype (e4m3) gives rows only for the ops that declare it: said once per dtype, an error when no op
    # of the sweep declares any dtype asked for
    for dt in (d for d in dtypes if d in OPT_IN_DTYPES):
        takers = [s.name for s in specs if dt in s.dtypes]
        others = [s.name for s in specs if dt not in s.dtypes]
        if not takers and all(d in OPT_IN_DTYPES for d in dtypes):
            declaring = [n for n in registry.ops if dt in registry.get_op(n).dtypes]
            raise UsageError(f"--dtypes {dt}: no op of --ops takes it ({', '.join(others)}); {dt} is opt-in, for "
                             f"the ops that declare it: {', '.join(declaring) or '(none)'}")
        if others:
            notes.append(f"dtype {dt} is opt-in: no {dt} rows for {', '.join(others)}, which do not declare it")

    all_backends = list(registry.backends)
    if remote is not None:
        all_backends += [n for n in remote if n not in all_backends]
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
            if remote is not None:
                found = remote.get(name)
                avail[name] = (found.available, found.reason, found.device) if found is not None else \
                    (False, "no worker of the cluster has it", "")
            else:
                avail[name] = check_availability(registry.get_backend(name), opts.availability_timeout_s)
        return avail[name]

    def entry(name: str, device: str) -> BackendEntry:
        if remote is not None:  # the backend object lives on the workers
            info = dict(remote[name].device_info)
            return BackendEntry(name, None, device or str(info.get("name", "")), info, Peak(None, "none"),
                                spec_peak(info))
        return _entry(name, registry.get_backend(name), device, opts.availability_timeout_s)

    def available() -> list[str]:  # for an error message: every backend, probed then
        return [n for n in all_backends if probe(n)[0]]

    for name in wanted:
        probe(name)
    if opts.baseline is None and "torch" in all_backends:
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
        entries.append(entry(name, device))

    baseline: str | None = opts.baseline
    if baseline is None:
        baseline = default_baseline(registry, avail) if remote is None else \
            "torch" if "torch" in all_backends and probe("torch")[0] else "numpy"
    if baseline == "none":
        baseline = None
    if baseline is not None:
        if baseline not in all_backends:
            if opts.baseline is not None:
                raise UnknownNameError("baseline backend", baseline, [*all_backends, "none"], install_hint(baseline))
            baseline = None
        elif not probe(baseline)[0]:
            if opts.baseline is not None:
                raise UsageError(f"baseline backend {baseline!r} is unavailable: {avail[baseline][1]}; "
                                 f"available backends: {', '.join(available()) or '(none)'}, or none")
            baseline = None
    if baseline is not None:
        if baseline not in [e.name for e in entries]:
            entries.append(entry(baseline, avail[baseline][2]))
            notes.append(f"baseline {baseline!r} added to the backends")
        entries.sort(key=lambda e: e.name != baseline)
    if not entries:
        raise UsageError("no backend is available: " + "; ".join(f"{n}: {r}" for n, r in skipped.items()))

    if opts.flush not in FLUSHES:
        raise UsageError(f"unknown flush {opts.flush!r}; choose {' or '.join(FLUSHES)}")
    if opts.flush == "clean":
        if not opts.cold:
            raise UsageError("--flush clean applies to cold timing; drop --warm or --flush")
        unable = [e.name for e in entries
                  if not (remote[e.name].clean_flush if remote is not None else flush_supports_clean(e.backend))]
        if unable:
            raise UsageError(f"--flush clean: backend {unable[0]!r} cannot flush clean (its flush_cache() takes "
                             "no 'clean' argument); leave it out or use the default flush")
    if opts.timer not in TIMERS:
        raise UsageError(f"unknown timing {opts.timer!r}; choose {' or '.join(TIMERS)}")
    timing = TimingConfig(cold=opts.cold, flush=opts.flush, time_budget_s=float(budget), target_rel_ci=target_ci,
                          min_samples=min_samples, warmup_s=min(0.05, 0.2 * float(budget)), timer=opts.timer)
    sources: dict[str, WorkerSource] = {}
    case_timeout: float | None = None
    if opts.isolation == "process":
        case_timeout = float(opts.case_timeout_s or default_case_timeout(timing.time_budget_s))
        for e in entries:
            # a cluster's worker rebuilds its backend from its own installed plugins
            source = WorkerSource(e.name, "entrypoints") if remote is not None else \
                worker_source(registry, e.name, op_names)
            if isinstance(source, str):
                notes.append(f"backend {e.name!r} runs in-process (no fault isolation): {source}")
            else:
                sources[e.name] = source
    return Plan(specs, cases, dtypes, entries, skipped, baseline, opts.mode, timing, int(opts.seed), formats, notes,
                calibrate=bool(opts.calibrate) and opts.mode != "test", isolation=opts.isolation,
                case_timeout_s=case_timeout, sources=sources)
