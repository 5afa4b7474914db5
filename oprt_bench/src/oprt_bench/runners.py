"""Where and how one row of a sweep runs: in this process, or in its backend's worker process.

:class:`Runners` holds a :class:`~oprt_bench.worker.BackendWorker` per backend under process isolation
(with the time limits of a row and of a calibration there); :func:`run_row_here` computes a row in the
current process (the in-process path, and the worker's side). :mod:`oprt_bench.sweep` re-exports
:class:`Runners`, :func:`run_row_here` and :func:`default_case_timeout`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from oprt_core import UnsupportedCase
from oprt_core.spec import Case, OpSpec

from .calibrate import Calibration, TimerCheck, calibrate, timer_check
from .flags import row_flags
from .peaks import spec_peak
from .timing import measure
from .worker import BackendWorker, WorkerFailure, mp_context

if TYPE_CHECKING:
    from .sweep import BackendEntry, Plan

__all__ = ["Runners", "run_row_here", "default_case_timeout", "calibration_timeout"]


def default_case_timeout(time_budget_s: float) -> float:
    """Seconds one row may take in its worker before it is killed: 120 plus the sampling budget."""
    return 120.0 + time_budget_s


def calibration_timeout(plan: Plan) -> float:
    """Calibration is a longer measurement than a row (a copy of at least 512 MiB on a GPU,
    ``calibrate.GPU_MIN_BYTES``; the timer floor): 4x the case timeout, at least 60 s."""
    return max(60.0, 4 * (plan.case_timeout_s or 0.0))


class Runners:
    """Where each backend of a plan runs: a :class:`~oprt_bench.worker.BackendWorker` per backend under
    process isolation (started on first use, replaced after a crash or a timeout), else in-process.
    A context manager: leaving it stops every worker (also on Ctrl-C / SIGTERM)."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.workers: dict[str, BackendWorker] = {}
        if plan.isolation == "process" and plan.sources:
            ctx = mp_context()
            prime = plan.timing.flush if plan.timing.cold and plan.mode != "test" else None
            self.workers = {name: BackendWorker(src, ctx, prime_flush=prime) for name, src in plan.sources.items()}

    def __enter__(self) -> Runners:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        for w in self.workers.values():
            w.close()

    def calibrate(self, entry: BackendEntry, cold: bool, flush: str = "dirty") -> tuple[Calibration, TimerCheck]:
        worker = self.workers.get(entry.name)
        if worker is None:
            return (calibrate(entry.backend, entry.device_info, flush=flush),
                    timer_check(entry.backend, cold=cold, flush=flush))
        try:
            return worker.call("calibrate", {"device_info": entry.device_info, "cold": cold, "flush": flush},
                               calibration_timeout(self.plan), doing="calibrating")
        except WorkerFailure as exc:
            spec = spec_peak(entry.device_info)
            return (Calibration(None, spec.gbps, spec.source, "none", error=str(exc)),
                    TimerCheck(None, None, "none", None, "none", error=str(exc)))

    def run_row(self, entry: BackendEntry, spec: OpSpec, case: Case, dtype: str, row: dict[str, Any],
                prepared: Callable[[], tuple[list[np.ndarray] | None, np.ndarray | None, str]]) -> None:
        worker = self.workers.get(entry.name)
        if worker is None:
            inputs, ref, setup_error = prepared()
            _fill_row(entry, spec, case, dtype, inputs, ref, setup_error, self.plan, row)
            return
        payload = {"name": entry.name, "device": entry.device, "device_info": entry.device_info, "peak": entry.peak,
                   "spec": entry.spec, "timer": entry.timer, "op": spec.name, "case": case, "dtype": dtype,
                   "row": row, "mode": self.plan.mode, "timing": self.plan.timing}
        try:
            row.update(worker.call("row", payload, self.plan.case_timeout_s or default_case_timeout(0.0)))
        except WorkerFailure as exc:
            row.update(status="error", message=str(exc))


# -- running a row here -------------------------------------------------------------------------

def _message(exc: BaseException) -> str:
    text = str(exc).strip().replace("\n", " ")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _kernel_of(backend: Any) -> str | None:
    """What the backend says its last launch ran (:class:`oprt_core.backend.KernelNames`), None where it cannot say;
    a failure to ask is written into the cell, never into the row's status (the measurement stands)."""
    ask = getattr(backend, "last_launch", None)
    if ask is None:
        return None
    try:
        return ask()
    except Exception as exc:  # noqa: BLE001 - the kernel name is a note on the row, not a result
        return "unknown (" + _message(exc) + ")"


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
        try:
            launch()
        finally:  # a launch that raised keeps what the backend names for it (the kernels it tried)
            row["kernel"] = _kernel_of(backend)  # the same thread, before anything else calls into the backend
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


def _prepare_case(spec: OpSpec, case: Case, dtype: str, seed: int
                  ) -> tuple[list[np.ndarray] | None, np.ndarray | None, str]:
    """(inputs, float64 reference, setup error) of one (case, dtype), drawn from the row's seed."""
    try:
        if dtype in spec.dtypes:
            inputs = spec.make_inputs(case, dtype, np.random.default_rng(seed))
            return inputs, spec.reference(inputs, case.param_dict), ""
        return None, None, ""
    except Exception as exc:  # noqa: BLE001 - the case itself is broken: every backend's row says so
        return None, None, "setting up the case: " + _message(exc)


def _fill_row(entry: BackendEntry, spec: OpSpec, case: Case, dtype: str, inputs: list[np.ndarray] | None,
              ref: np.ndarray | None, setup_error: str, plan: Any, row: dict[str, Any]) -> None:
    if setup_error:
        row.update(status="error", message=setup_error)
    elif dtype not in spec.dtypes:
        row.update(status="unsupported", message=f"op {spec.name} does not define dtype {dtype}")
    else:
        _run_backend(entry, spec, case, dtype, inputs, ref, plan, row)


def run_row_here(entry: BackendEntry, spec: OpSpec, case: Case, dtype: str, row: dict[str, Any],
                 plan: Any) -> dict[str, Any]:
    """One row computed in this process (the worker's side): inputs from ``row["seed"]``, check, timing."""
    row = dict(row)
    inputs, ref, setup_error = _prepare_case(spec, case, dtype, int(row["seed"]))
    _fill_row(entry, spec, case, dtype, inputs, ref, setup_error, plan, row)
    return row


class _CasePreparer:
    """Draws a case's inputs and reference once, on first call: for every in-process backend; workers draw
    their own from the same seed."""

    def __init__(self, spec: OpSpec, case: Case, dtype: str, seed: int):
        self.args = (spec, case, dtype, seed)
        self.value: tuple[list[np.ndarray] | None, np.ndarray | None, str] | None = None

    def __call__(self) -> tuple[list[np.ndarray] | None, np.ndarray | None, str]:
        if self.value is None:
            self.value = _prepare_case(*self.args)
        return self.value
