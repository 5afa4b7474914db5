"""A sweep: a :class:`~oprt_bench.model.Plan` (made by :func:`~oprt_bench.plan.make_plan`) calibrated, then
run case by case into :class:`~oprt_bench.model.Row` s.

Order of work: for each op, case and dtype, fresh host inputs are drawn from a seed derived
from (``--seed``, op, case, dtype) -- so a row does not depend on what else the sweep ran --
and the float64 reference is computed once; then each backend, the baseline first, is checked
and timed on copies of those inputs. Under process isolation (the default) each backend's rows run
in its own worker process (:mod:`oprt_bench.worker`, :class:`~oprt_bench.runners.Runners`), which
draws the same inputs from the same seed, or, when several workers run the case, maps the parent's copy
(:mod:`oprt_bench.shared_case`). See docs/measurement.md and docs/reliability.md.

The names a script needs to run a sweep (:class:`SweepOptions`, :func:`make_plan`, :func:`run_sweep`)
are importable from here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from oprt_core.spec import Case, OpSpec

from .availability import call_with_timeout
from .calcache import CalibrationCache, cache_key
from .calibrate import Calibration, TimerCheck, is_host
from .errors import one_line
from .execute import CasePreparer
from .model import BackendEntry, Plan, Row, SweepOptions
from .placement import host_label
from .plan import default_baseline, make_plan
from .runners import Runners

__all__ = ["SweepOptions", "Plan", "BackendEntry", "Row", "make_plan", "default_baseline", "case_seed", "run_sweep",
           "calibrate_plan", "reusable_calibrations", "Runners", "call_with_timeout", "case_setup", "new_row"]


def case_seed(seed: int, op: str, case: str, dtype: str) -> int:
    """A 63-bit seed from the run seed and a stable hash of (op, case, dtype), independent of sweep order."""
    digest = hashlib.sha256(f"{seed}\0{op}\0{case}\0{dtype}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


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


def _set_calibration(entry: BackendEntry, calibration: Calibration, timer: TimerCheck) -> None:
    """The entry's calibration and timer check, and the peaks its rows divide by."""
    entry.calibration, entry.timer = calibration, timer
    entry.peak, entry.spec = calibration.peak, calibration.spec


def calibrate_plan(plan: Plan, note: Callable[[str], None] | None = None,
                   on_start: Callable[[str], None] | None = None, runners: Runners | None = None,
                   reuse: dict[str, tuple[Calibration, TimerCheck]] | None = None,
                   cache: CalibrationCache | None = None, refresh: bool = False) -> dict[str, str]:
    """Calibrate every backend of ``plan`` once (measured peak, spec peak, timer floor), in place.

    ``entry.peak`` becomes the measured peak (``pct_of_peak``), ``entry.timer`` the floor of the
    ``launch-bound`` flag. Progress goes to ``note``. A backend that cannot be calibrated keeps
    ``peak`` none and says why; the sweep goes on. Under process isolation it runs in the
    backend's worker (``runners``; a private set is made and stopped when not given). A backend in
    ``reuse`` (``--resume``: the resumed run's calibration) is not measured again. With a ``cache``
    (:mod:`oprt_bench.calcache`) a backend calibrated recently on the same device and build reuses that
    calibration, unless ``refresh`` (``--recalibrate``); what is measured is stored there.

    Returns where each backend's calibration came from: ``measured``, ``resumed run`` or ``cache``.
    """
    if runners is None:
        with Runners(plan) as own:
            return calibrate_plan(plan, note, on_start, own, reuse, cache, refresh)
    sources: dict[str, str] = {}
    for entry in plan.backends:
        if reuse and entry.name in reuse:
            cal, timer = reuse[entry.name]
            _set_calibration(entry, cal, timer)
            sources[entry.name] = "resumed run"
            if note is not None:
                note(f"  {entry.name}: calibration of the resumed run kept: {cal.describe()}")
            continue
        # the empty launch timed like the rows: cold on a device when the run is cold (a synchronous host
        # backend gains nothing from a flush but time)
        cold = plan.timing.cold and not is_host(entry.device_info)
        key = cache_key(entry.name, entry.device_info, cold, plan.timing.flush) if cache is not None else ""
        cached = cache.get(key) if cache is not None and not refresh and "error" not in entry.device_info else None
        if cached is not None:
            cal, timer = cached.calibration, cached.timer
            _set_calibration(entry, cal, timer)
            sources[entry.name] = "cache"
            if note is not None:
                note(f"  {entry.name}: calibration measured {cached.age_s() / 60:.0f} min ago reused "
                     f"(--recalibrate measures again): {cal.describe()}")
            continue
        if on_start is not None:
            on_start(f"calibrating {entry.name}")
        if note is not None:
            note(f"calibrating {entry.name} ({entry.device}): device-to-device copy, timer floor...")
        cal, timer = runners.calibrate(entry, cold, plan.timing.flush)
        _set_calibration(entry, cal, timer)
        sources[entry.name] = "measured"
        if cache is not None and "error" not in entry.device_info:
            cache.put(key, cal, timer)
        if note is not None:
            note(f"  {entry.name}: {cal.describe()}")
            note(f"  {entry.name}: {timer.describe()}")
    return sources


# -- running -----------------------------------------------------------------------------------

def _params_text(case: Case) -> str:
    return json.dumps(case.param_dict, sort_keys=True) if case.params else ""


def run_sweep(plan: Plan, emit: Callable[[Row], None],
              on_start: Callable[[str], None] | None = None, runners: Runners | None = None,
              skip: Callable[[Row], Mapping[str, Any] | None] | None = None) -> None:
    """Run every (op, case, dtype, backend) of ``plan``, calling ``emit(row)`` as each row is done.

    Under process isolation each backend's rows run in its worker (``runners``; a private set is
    made and stopped when not given). ``skip(row)`` returning a row (the one already measured) leaves
    the row out (``--resume``).
    """
    if runners is None:
        with Runners(plan) as own:
            return run_sweep(plan, emit, on_start, own, skip)
    for spec, case, dtype in plan.jobs():
        seed, nbytes, flops, base_error = case_setup(plan, spec, case, dtype)
        prepared = CasePreparer(spec, case, dtype, seed)
        try:
            _run_case(plan, spec, case, dtype, seed, nbytes, flops, base_error, prepared, emit, on_start, runners,
                      skip)
        finally:
            prepared.release()


def case_setup(plan: Plan, spec: OpSpec, case: Case, dtype: str) -> tuple[int, int | None, int | None, str]:
    """(seed, bytes, flops, setup error) of one (case, dtype): what every backend's row of it starts from."""
    seed = case_seed(plan.seed, spec.name, case.name, dtype)
    try:
        return seed, spec.bytes_moved(case, dtype), spec.flops(case), ""
    except Exception as exc:  # noqa: BLE001 - every backend's row of the case says so
        return seed, None, None, "setting up the case: " + one_line(exc)


def new_row(plan: Plan, spec: OpSpec, case: Case, dtype: str, seed: int, nbytes: int | None, flops: int | None,
            entry: BackendEntry) -> Row:
    """A backend's row of one (case, dtype) with its fixed columns, before it is run."""
    return Row(op=spec.name, case=case.name, shape=case.shape_str, dtype=dtype, params=_params_text(case),
               mode=plan.mode, seed=seed, baseline=plan.baseline or "",
               timing="" if plan.mode == "test" else plan.timing.label, flags="", bytes=nbytes, flops=flops,
               backend=entry.name, device=entry.device, flavour=entry.device_info.get("flavour", ""),
               host=host_label(entry.device_info))


def _run_case(plan: Plan, spec: OpSpec, case: Case, dtype: str, seed: int, nbytes: int | None, flops: int | None,
              base_error: str, prepared: CasePreparer, emit: Callable[[Row], None],
              on_start: Callable[[str], None] | None, runners: Runners,
              skip: Callable[[Row], Mapping[str, Any] | None] | None) -> None:
    """Every backend's row of one (case, dtype), the baseline first."""
    baseline_median: float | None = None
    for entry in plan.backends:
        row = new_row(plan, spec, case, dtype, seed, nbytes, flops, entry)
        old = skip(row) if skip is not None else None
        if old is not None:  # measured by the run being resumed: its baseline time still counts
            if entry.name == plan.baseline and old.get("status") == "ok" and old.get("median_ms"):
                baseline_median = float(old["median_ms"])
            continue
        if on_start is not None:
            on_start(f"{spec.name} {case.name} {dtype} {entry.name}")
        if base_error:
            row.status, row.message = "error", base_error
        else:
            row = runners.run_row(entry, spec, case, dtype, row, prepared)
        median = row.median_ms
        if entry.name == plan.baseline and row.status == "ok" and median:
            baseline_median = median
        if baseline_median and row.status == "ok" and median:
            row.speedup = baseline_median / median
        emit(row)
