"""Where each row of a sweep runs: in this process, or in its backend's worker process.

:class:`Runners` holds a :class:`~oprt_bench.worker.BackendWorker` per backend under process isolation
(with the time limits of a row and of a calibration there); rows of the other backends are computed here
(:mod:`oprt_bench.execute`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from oprt_core.spec import Case, OpSpec

from .calibrate import Calibration, TimerCheck, calibrate, timer_check
from .execute import CasePreparer, fill_row, refused, too_big
from .model import BackendEntry, CalibrationTask, Plan, Row, RowTask, SweepOptions, WorkerSource
from .peaks import spec_peak
from .worker import BackendWorker, WorkerFailure, mp_context

__all__ = ["Runners", "Prestarted", "default_case_timeout", "calibration_timeout"]


def default_case_timeout(time_budget_s: float) -> float:
    """Seconds one row may take in its worker before it is killed: 120 plus the sampling budget."""
    return 120.0 + time_budget_s


def calibration_timeout(plan: Plan) -> float:
    """Calibration is a longer measurement than a row (a copy of at least 512 MiB on a GPU,
    ``calibrate.GPU_MIN_BYTES``; the timer floor): 4x the case timeout, at least 60 s."""
    return max(60.0, 4 * (plan.case_timeout_s or 0.0))


CANCEL_WAIT_S = 15.0  # Prestarted.close(): how long a cancelled start's thread may take to close its killed process


def _in_daemon_thread(fn: Callable[[], float]) -> Future[float]:
    future: Future[float] = Future()

    def target() -> None:
        try:
            future.set_result(fn())
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits
            future.set_exception(exc)

    threading.Thread(target=target, daemon=True, name="oprt-bench worker start").start()
    return future


class Prestarted:
    """Workers started before the plan is made, so that each one's start (importing its runtime, creating its
    device context) overlaps the parent's own availability checks; :class:`Runners` adopts those the plan
    uses and :meth:`close` stops the rest. Only for backends of the installed plugins (a worker rebuilds them
    from the entry points), under process isolation."""

    def __init__(self, sources: dict[str, WorkerSource], prime_flush: str | None):
        self.prime_flush = prime_flush
        ctx = mp_context()
        self.workers = {name: BackendWorker(src, ctx, prime_flush=prime_flush) for name, src in sources.items()}
        # daemon threads: a run refused by its plan (a usage error) exits at once, not after the workers' start
        self.futures: dict[str, Future[float]] = {name: _in_daemon_thread(w.start) for name, w in self.workers.items()}
        self._taken: set[str] = set()

    @classmethod
    def for_options(cls, registry: Any, opts: SweepOptions) -> Prestarted | None:
        """Start the workers ``opts`` will most likely need (the named backends and the baseline); None where the
        registry is not the installed one or the run is not process-isolated."""
        from oprt_core import plugins

        if opts.isolation != "process" or not plugins.get_registry.cache_info().currsize \
                or registry is not plugins.get_registry():
            return None
        names = list(registry.backends) if opts.backends.strip() == "all" else \
            [n.strip() for n in opts.backends.split(",") if n.strip()]
        baseline = opts.baseline if opts.baseline is not None else ("torch" if "torch" in registry.backends else None)
        if baseline and baseline != "none" and baseline not in names:
            names.append(baseline)
        names = [n for n in dict.fromkeys(names) if n in registry.backends]
        prime = opts.flush if opts.cold and opts.mode != "test" else None
        return cls({n: WorkerSource(n, "entrypoints") for n in names}, prime) if names else None

    def take(self, name: str, source: WorkerSource,
             prime_flush: str | None) -> tuple[BackendWorker, Future[float]] | None:
        """The started worker of ``name`` when it was built the way the plan needs it."""
        worker = self.workers.get(name)
        if worker is None or worker.source != source or prime_flush != self.prime_flush or name in self._taken:
            return None
        self._taken.add(name)
        return worker, self.futures[name]

    def close(self) -> None:
        """Stop every worker no :class:`Runners` adopted: one whose start is over is asked to leave; one still
        starting (a backend the plan refused, whose import hangs) is cancelled: killed, or never started. Returns
        once the cancelled starts' threads have closed what they started (moments after the kill): a process left
        half-closed at the interpreter's exit makes multiprocessing's exit handler print a traceback."""
        cancelled = []
        for name, worker in self.workers.items():
            if name in self._taken:
                continue
            if self.futures[name].done():
                worker.close()
            else:
                worker.cancel()
                cancelled.append(self.futures[name])
        wait(cancelled, timeout=CANCEL_WAIT_S)


class Runners:
    """Where each backend of a plan runs: a :class:`~oprt_bench.worker.BackendWorker` per backend under
    process isolation (started on first use, replaced after a crash or a timeout), else in-process.
    A context manager: leaving it stops every worker (also on Ctrl-C / SIGTERM)."""

    def __init__(self, plan: Plan, prestarted: Prestarted | None = None):
        self.plan = plan
        self.workers: dict[str, BackendWorker] = {}
        self._starting: dict[str, Future[float]] = {}  # adopted from ``prestarted``: their start is under way
        if plan.isolation == "process" and plan.sources:
            ctx = mp_context()
            prime = plan.timing.flush if plan.timing.cold and plan.mode != "test" else None
            for name, src in plan.sources.items():
                adopted = prestarted.take(name, src, prime) if prestarted is not None else None
                if adopted is not None:
                    self.workers[name], self._starting[name] = adopted
                else:
                    self.workers[name] = BackendWorker(src, ctx, prime_flush=prime)

    def __enter__(self) -> Runners:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        for w in self.workers.values():
            w.close()

    def start_all(self) -> dict[str, float]:
        """Start every backend's worker at once (each loads its backend, imports its runtime and creates its
        device context in parallel with the others); returns the seconds each took. A worker that cannot start
        reports it in its backend's first calibration or row."""
        if not self.workers:
            return {}
        with ThreadPoolExecutor(max_workers=len(self.workers), thread_name_prefix="oprt-bench start") as pool:
            futures = {name: self._starting.get(name) or pool.submit(w.start) for name, w in self.workers.items()}
            return {name: f.result() for name, f in futures.items()}

    def calibrate(self, entry: BackendEntry, cold: bool, flush: str = "dirty") -> tuple[Calibration, TimerCheck]:
        worker = self.workers.get(entry.name)
        if worker is None:
            return (calibrate(entry.backend, entry.device_info, flush=flush),
                    timer_check(entry.backend, cold=cold, flush=flush))
        try:
            result: tuple[Calibration, TimerCheck] = worker.call(
                "calibrate", CalibrationTask(entry.device_info, cold, flush), calibration_timeout(self.plan),
                doing="calibrating")
            return result
        except WorkerFailure as exc:
            spec = spec_peak(entry.device_info)
            return (Calibration(None, spec.gbps, spec.source, "none", error=str(exc)),
                    TimerCheck(None, None, "none", None, "none", error=str(exc)))

    def run_row(self, entry: BackendEntry, spec: OpSpec, case: Case, dtype: str, row: Row,
                prepared: CasePreparer) -> Row:
        """``row`` filled by ``entry``'s backend: here (the case's inputs from ``prepared``) or in its worker."""
        worker = self.workers.get(entry.name)
        if worker is None:
            if dtype in spec.dtypes and refused(entry, spec, case, dtype, row):
                return row
            fill_row(entry, spec, case, dtype, prepared(), self.plan.mode, self.plan.timing, row)
            return row
        # several workers run this case: the parent draws it once and shares it (shared_case); one draws its own
        shared = None
        if dtype in spec.dtypes and too_big(entry, spec, case, dtype, row):  # neither this process nor the worker
            return row
        if len(self.workers) > 1:
            try:
                shared = prepared.shared()
            except OSError:  # no room in /dev/shm: each worker draws the case itself, as a lone one does
                shared = None
        task = RowTask(entry.detached(), spec.name, case, dtype, row, self.plan.mode, self.plan.timing, shared)
        try:
            done: Row = worker.call("row", task, self.plan.case_timeout_s or default_case_timeout(0.0))
            return done
        except WorkerFailure as exc:
            row.status, row.message = "error", str(exc)
            return row
