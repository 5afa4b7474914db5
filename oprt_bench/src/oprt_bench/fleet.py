"""Sweeps on a Dask distributed cluster: every GPU of a host, and backends on several hosts, in one run.

``oprt-bench --cluster local`` starts a cluster on this host (one worker per visible GPU, or ``--workers N`` CPU
workers where no requested backend has a device); ``--cluster tcp://HOST:PORT`` or ``--scheduler-file FILE``
joins a running one whose workers were started by ``oprt-bench worker``. See docs/fleet.md.

- A worker advertises each oprt backend it can run as the Dask resource ``oprt-backend-<name>=1`` and runs one
  task at a time (one thread), so two rows never share its device.
- The client (this process) asks every worker which of its backends are available and on which device
  (:func:`describe_worker`), makes the plan from that (:func:`~oprt_bench.plan.make_plan` with ``remote``), and
  submits one Dask future per (backend, op, case, dtype) job, routed by the backend's resource. Rows are written
  through the run's writer as the futures complete (``as_completed``).
- On the worker, :func:`run_job` runs the row with the local machinery: a one-backend plan and its
  :class:`~oprt_bench.runners.Runners` (the backend's own worker process: a crashing kernel costs one row),
  calibrated once per run on that worker's device (:func:`~oprt_bench.sweep.calibrate_plan`, calibration cache
  included). Each row gets the worker's ``host`` and ``device``; run.json's ``backends.<name>.devices`` holds the
  calibration of every device that ran rows.
- A row's ``speedup`` needs its baseline row (same op, case and dtype), which may finish later on another worker:
  such a row waits for it in memory; an interrupted run writes the waiting rows without a speedup.
- A worker lost mid-run: Dask runs its task again on another worker (``distributed.scheduler.allowed-failures``
  times), then the row is an ``error`` row that says so; when no worker offering a backend is left for
  :data:`ORPHAN_GRACE_S`, that backend's remaining rows become ``error`` rows.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import socket
import subprocess
import threading
import uuid
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from oprt_core import get_registry
from oprt_core.plugins import install_hint
from oprt_core.spec import Case

from .availability import availability, device_info
from .calcache import CalibrationCache
from .errors import UsageError, one_line
from .execute import CasePreparer
from .model import BackendEntry, Plan, RemoteBackend, Row, SweepOptions, WorkerSource
from .peaks import Peak, spec_peak
from .placement import host_label, visible_env
from .plan import split_names
from .runners import Runners
from .sweep import calibrate_plan, case_setup, new_row
from .timing import TimingConfig, flush_supports_clean

__all__ = ["ClusterOptions", "Fleet", "FleetJob", "FleetResult", "RESOURCE_PREFIX", "INSTALL_HINT", "require_dask",
           "resource_name", "describe_worker", "run_job", "close_run", "local_layout", "LocalWorker", "worker_command",
           "visible_devices"]

RESOURCE_PREFIX = "oprt-backend-"
INSTALL_HINT = "pip install ./oprt_bench[fleet]"
WAIT_WORKERS_S = 60.0  # joining a cluster: how long to wait for its first worker
ORPHAN_GRACE_S = 60.0  # a backend no worker offers any more for this long: its remaining rows are error rows
CPU_HOST = "cpu"  # the group of the backends without a device


def require_dask(option: str = "--cluster") -> None:
    """UsageError (one line, how to install) when Dask distributed is not importable."""
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as exc:
        raise UsageError(f"{option} needs Dask distributed ({exc.name or 'dask'} is not installed): "
                         f"{INSTALL_HINT}") from None


def resource_name(backend: str) -> str:
    """The Dask resource a worker that runs ``backend`` advertises."""
    return RESOURCE_PREFIX + backend


@dataclass(frozen=True)
class ClusterOptions:
    """``--cluster ADDRESS`` (``local`` or ``tcp://HOST:PORT``) or ``--scheduler-file FILE``; ``--workers``."""

    address: str | None = None
    scheduler_file: str | None = None
    workers: int | None = None  # CPU workers of a local cluster (default 2)

    def check(self) -> None:
        """UsageError for options that do not fit together (before anything starts)."""
        if self.address and self.scheduler_file:
            raise UsageError("--cluster and --scheduler-file exclude each other: give one")
        if self.workers is not None:
            if self.address != "local":
                raise UsageError("--workers applies to --cluster local (a running cluster has its own workers)")
            if self.workers < 1:
                raise UsageError(f"--workers must be at least 1, got {self.workers}")
        if self.address and self.address != "local" and "://" not in self.address and ":" not in self.address:
            raise UsageError(f"--cluster {self.address!r}: give local, or a scheduler address tcp://HOST:PORT")
        if self.scheduler_file and not os.path.isfile(self.scheduler_file):
            raise UsageError(f"--scheduler-file {self.scheduler_file!r} does not exist (dask scheduler "
                             "--scheduler-file FILE writes it)")


# -- a local cluster --------------------------------------------------------------------------------

@dataclass(frozen=True)
class LocalWorker:
    """One worker of ``--cluster local``: its name, its environment (the pinned device) and its backends."""

    name: str
    env: dict[str, str]
    backends: tuple[str, ...]


def _wanted(registry: Any, opts: SweepOptions) -> list[str]:
    names = list(registry.backends) if "all" in split_names(opts.backends) else split_names(opts.backends)
    baseline = opts.baseline if opts.baseline is not None else "torch" if "torch" in registry.backends else "numpy"
    if baseline != "none":
        names.append(baseline)
        if opts.baseline is None:
            names.append("numpy")  # the default baseline where torch is unavailable
    return [n for n in dict.fromkeys(names) if n in registry.backends]


def visible_devices(var: str, environ: Mapping[str, str] | None = None) -> list[str]:
    """The devices ``var`` (``CUDA_VISIBLE_DEVICES``, ``MACA_VISIBLE_DEVICES``) makes visible: its own list where
    it is set, else the indices the vendor's tool lists (``nvidia-smi -L``, ``mx-smi -L``), else one device."""
    from oprt_core.compiled import DRIVER_HINTS

    env = os.environ if environ is None else environ
    if env.get(var, "").strip():
        return [d.strip() for d in env[var].split(",") if d.strip()]
    tool = next((h.tool for h in DRIVER_HINTS.values() if h.visible_env == var and h.tool), "")
    if tool and shutil.which(tool):
        try:
            text = subprocess.run([tool, "-L"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            text = ""
        found = re.findall(r"^\s*GPU\s*#?\s*(\d+)", text, flags=re.MULTILINE)
        if found:
            return found
    return ["0"]


def local_layout(registry: Any, opts: SweepOptions, cpu_workers: int = 2,
                 environ: Mapping[str, str] | None = None) -> tuple[list[LocalWorker], list[str]]:
    """The workers of ``--cluster local`` and notes: one per visible device of each vendor the requested backends
    use (pinned by the vendor's variable), each with that vendor's backends and every host backend; without
    such a backend, ``cpu_workers`` workers with the host backends. An unavailable backend is left to the plan
    (which reports it)."""
    host = socket.gethostname()
    groups: dict[str, list[str]] = defaultdict(list)
    for name in _wanted(registry, opts):
        backend = registry.get_backend(name)
        if not availability(backend, opts.availability_timeout_s)[0]:
            continue
        groups[visible_env(device_info(backend, opts.availability_timeout_s)) or CPU_HOST].append(name)
    cpu = tuple(groups.pop(CPU_HOST, []))
    workers: list[LocalWorker] = []
    notes: list[str] = []
    for var, names in groups.items():
        devices = visible_devices(var, environ)
        notes.append(f"cluster: {len(devices)} worker(s) for {', '.join(names)}, one per device of {var}="
                     f"{','.join(devices)}")
        workers += [LocalWorker(f"{host}:{d}", {var: d}, tuple(names) + cpu) for d in devices]
    if not workers and cpu:
        workers = [LocalWorker(f"{host}-cpu{i}", {}, cpu) for i in range(cpu_workers)]
        notes.append(f"cluster: {cpu_workers} CPU worker(s) for {', '.join(cpu)}")
    return workers, notes


def _start_local(workers: list[LocalWorker]) -> Any:
    import dask
    from distributed import Nanny, Scheduler, SpecCluster

    # each worker starts processes of its own (the backends' workers): it must not be daemonic; its INFO log lines
    # (set before the worker process imports distributed) would drown the progress
    dask.config.set({"distributed.worker.daemon": False,
                     "distributed.nanny.pre-spawn-environ.DASK_LOGGING__DISTRIBUTED": "error"})
    spec = {w.name: {"cls": Nanny, "options": {"nthreads": 1, "env": w.env, "host": "127.0.0.1", "name": w.name,
                                                "resources": {resource_name(b): 1 for b in w.backends}}}
            for w in workers}
    return SpecCluster(workers=spec, scheduler={"cls": Scheduler,
                                                "options": {"host": "127.0.0.1", "dashboard": False}},
                       silence_logs=logging.ERROR, name="oprt-bench")


# -- oprt-bench worker ----------------------------------------------------------------------------------

def worker_command(registry: Any, scheduler: str | None, scheduler_file: str | None, backends: str,
                   name: str | None, timeout_s: float, extra: list[str]) -> tuple[list[str], dict[str, str], str]:
    """(argv, environment, summary line) of the ``dask worker`` that ``oprt-bench worker`` becomes: one thread,
    not daemonic (it starts the backends' worker processes), each backend available here a resource. UsageError
    when Dask is missing, the scheduler is not given once, or a named backend is unavailable here."""
    require_dask("oprt-bench worker")
    if bool(scheduler) == bool(scheduler_file):
        raise UsageError("oprt-bench worker: give the scheduler's address (tcp://HOST:PORT) or --scheduler-file, "
                         "not both")
    explicit = "all" not in split_names(backends)
    names = split_names(backends) if explicit else list(registry.backends)
    if not names:
        raise UsageError("--backends is empty")
    offered: list[str] = []
    where: list[str] = []
    for backend_name in names:
        if backend_name not in registry.backends:
            hint = install_hint(backend_name)
            raise UsageError(f"unknown backend {backend_name!r}; installed here: {', '.join(registry.backends)}"
                             + (f"; {hint}" if hint else ""))
        backend = registry.get_backend(backend_name)
        ok, reason, device = availability(backend, timeout_s)
        if not ok:
            if explicit:
                raise UsageError(f"backend {backend_name!r} is unavailable here: {reason}")
            continue
        offered.append(backend_name)
        where.append(f"{backend_name} ({device or 'host'}, {host_label(device_info(backend, timeout_s))})")
    if not offered:
        raise UsageError("no backend is available here (oprt-bench backends says why)")
    import sys

    argv = [sys.executable, "-m", "distributed.cli.dask_worker", *([scheduler] if scheduler else []),
            *(["--scheduler-file", scheduler_file] if scheduler_file else []), "--nthreads", "1", "--nworkers", "1",
            "--resources", " ".join(f"{resource_name(b)}=1" for b in offered), *(["--name", name] if name else []),
            *extra]
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__DAEMON="False")
    return argv, env, f"oprt-bench worker: {', '.join(where)} -> {scheduler or scheduler_file}"


# -- on the worker -------------------------------------------------------------------------------------

def describe_worker(timeout_s: float, dask_worker: Any = None) -> dict[str, Any]:
    """Run on every worker (``Client.run``, which passes ``dask_worker``): the host and, for each backend the
    worker advertises, whether it is available there, its device, device info and ``host`` label."""
    worker = dask_worker
    registry = get_registry()
    backends: dict[str, Any] = {}
    for res in worker.state.total_resources:
        if not res.startswith(RESOURCE_PREFIX):
            continue
        name = res[len(RESOURCE_PREFIX):]
        if name not in registry.backends:
            backends[name] = {"available": False, "reason": f"backend {name!r} is not installed on this worker"}
            continue
        backend = registry.get_backend(name)
        ok, reason, device = availability(backend, timeout_s)
        info = device_info(backend, timeout_s) if ok else {}
        backends[name] = {"available": ok, "reason": reason, "device": device or str(info.get("name", "")),
                          "device_info": info, "clean_flush": flush_supports_clean(backend),
                          "host": host_label(info)}
    return {"name": str(worker.name), "host": socket.gethostname(), "backends": backends}


@dataclass
class FleetJob:
    """One row for a cluster worker: the row with its fixed columns, and how the run times and isolates it."""

    run_id: str
    backend: str
    op: str
    case: Case
    dtype: str
    row: Row
    mode: str
    timing: TimingConfig
    isolation: str
    case_timeout_s: float | None
    calibrate: bool
    recalibrate: bool
    availability_timeout_s: float


@dataclass
class FleetResult:
    """A finished row and the device it ran on (``where``: its ``host`` label), with that device's calibration."""

    row: Row
    where: str
    device: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Station:
    """One backend on one worker for one run: its entry (the worker's device, calibrated) and runners."""

    entry: BackendEntry
    runners: Runners
    registry: Any
    where: str
    device: dict[str, Any]


_STATIONS: dict[tuple[str, str], _Station] = {}
_STATIONS_LOCK = threading.Lock()


def _station(job: FleetJob) -> _Station:
    key = (job.run_id, job.backend)
    found = _STATIONS.get(key)
    if found is not None:
        return found
    for old in [k for k in _STATIONS if k[0] != job.run_id]:  # a new run: the last one's backend workers go
        _STATIONS.pop(old).runners.close()
    registry = get_registry()
    backend = registry.get_backend(job.backend)
    _, _, device = availability(backend, job.availability_timeout_s)
    info = device_info(backend, job.availability_timeout_s)
    entry = BackendEntry(job.backend, backend, device or str(info.get("name", "")), info, Peak(None, "none"),
                         spec_peak(info))
    process = job.isolation == "process"
    plan = Plan([], {}, [], [entry], {}, None, job.mode, job.timing, 0, [], calibrate=job.calibrate,
                isolation=job.isolation, case_timeout_s=job.case_timeout_s,
                sources={job.backend: WorkerSource(job.backend, "entrypoints")} if process else {})
    runners = Runners(plan)
    source = "none"
    if job.calibrate:
        source = calibrate_plan(plan, runners=runners, cache=CalibrationCache(), refresh=job.recalibrate).get(
            job.backend, "")
    where = host_label(info)
    station = _Station(entry, runners, registry, where, entry.to_dict() | {"calibration_source": source})
    _STATIONS[key] = station
    return station


def run_job(job: FleetJob) -> FleetResult:
    """Run one row on this worker (a Dask task): through the backend's worker process, as a local run does."""
    with _STATIONS_LOCK:
        station = _station(job)
        entry = station.entry
        row = replace(job.row, host=station.where, device=entry.device,
                      flavour=str(entry.device_info.get("flavour", "")))
        spec = station.registry.get_op(job.op)
        prepared = CasePreparer(spec, job.case, job.dtype, int(row.seed))
        try:
            row = station.runners.run_row(entry, spec, job.case, job.dtype, row, prepared)
        finally:
            prepared.release()
        return FleetResult(row, station.where, station.device)


def close_run(run_id: str) -> int:
    """Run on every worker at the end of a run: stop its backends' worker processes; returns how many."""
    with _STATIONS_LOCK:
        keys = [k for k in _STATIONS if k[0] == run_id]
        for k in keys:
            _STATIONS.pop(k).runners.close()
        return len(keys)


# -- the client --------------------------------------------------------------------------------------

class _Pairing:
    """Emits rows with their ``speedup``: a row whose baseline row is not done yet waits for it."""

    def __init__(self, baseline: str | None, emit: Callable[[Row], None]):
        self.baseline = baseline
        self.emit = emit
        self.medians: dict[tuple[str, str, str], float] = {}
        self.done: set[tuple[str, str, str]] = set()
        self.waiting: dict[tuple[str, str, str], list[Row]] = defaultdict(list)

    def known(self, key: tuple[str, str, str], old: Mapping[str, Any]) -> None:
        """The baseline row of ``key`` is in the resumed run."""
        self.done.add(key)
        if old.get("status") == "ok" and old.get("median_ms"):
            self.medians[key] = float(old["median_ms"])

    def _out(self, row: Row, key: tuple[str, str, str]) -> None:
        base = self.medians.get(key)
        if base and row.status == "ok" and row.median_ms:
            row.speedup = base / row.median_ms
        self.emit(row)

    def add(self, row: Row) -> None:
        key = (row.op, row.case, row.dtype)
        if row.backend == self.baseline:
            if row.status == "ok" and row.median_ms:
                self.medians[key] = row.median_ms
            self.done.add(key)
            self._out(row, key)
            for waiting in self.waiting.pop(key, []):
                self._out(waiting, key)
        elif self.baseline is None or key in self.done:
            self._out(row, key)
        else:
            self.waiting[key].append(row)

    def flush(self) -> None:
        """Emit every waiting row (its baseline never came: an interrupted run)."""
        for rows in list(self.waiting.values()):
            for row in rows:
                self.emit(row)
        self.waiting.clear()


class Fleet:
    """A Dask client on the cluster of ``--cluster`` / ``--scheduler-file`` (a local one is started here and
    stopped by :meth:`close`), and the sweep run on it."""

    def __init__(self, options: ClusterOptions, registry: Any, opts: SweepOptions):
        require_dask()
        options.check()
        from distributed import Client

        self.options = options
        self.cluster: Any = None
        self.notes: list[str] = []
        self.run_id = uuid.uuid4().hex
        if options.address == "local":
            workers, self.notes = local_layout(registry, opts, options.workers or 2)
            if not workers:
                raise UsageError("--cluster local: no requested backend is available here (oprt-bench backends "
                                 "says why)")
            self.cluster = _start_local(workers)
            self.client = Client(self.cluster)
            expected = len(workers)
        else:
            try:
                self.client = Client(options.address, timeout="30s") if options.scheduler_file is None else \
                    Client(scheduler_file=options.scheduler_file, timeout="30s")
            except (OSError, TimeoutError) as exc:
                raise UsageError(f"cannot reach the Dask scheduler "
                                 f"{options.address or options.scheduler_file!r}: {one_line(exc)}") from None
            expected = 1
        try:
            self.client.wait_for_workers(expected, timeout=WAIT_WORKERS_S)
        except TimeoutError:
            self.close()
            raise UsageError(f"no oprt worker joined the cluster within {WAIT_WORKERS_S:g} s; start one with "
                             "oprt-bench worker SCHEDULER_ADDRESS") from None
        self.workers: dict[str, Any] = self.client.run(describe_worker, opts.availability_timeout_s)

    @property
    def address(self) -> str:
        scheduler = self.client.scheduler  # None once the client is closed
        if scheduler is None:
            raise UsageError("the Dask client of this run is closed")
        return str(scheduler.address)

    def remote_backends(self) -> dict[str, RemoteBackend]:
        """Every backend some worker advertises: available where one of them has it (its device then), else the
        workers' reasons."""
        out: dict[str, RemoteBackend] = {}
        reasons: dict[str, list[str]] = defaultdict(list)
        for described in self.workers.values():
            for name, b in described["backends"].items():
                if b["available"] and (name not in out or not out[name].available):
                    out[name] = RemoteBackend(True, b["reason"], b["device"], b["device_info"], b["clean_flush"])
                elif not b["available"]:
                    reasons[name].append(f"{described['name']}: {b['reason']}")
        for name, why in reasons.items():
            if name not in out:
                out[name] = RemoteBackend(False, "unavailable on every worker (" + "; ".join(why) + ")")
        return out

    def describe(self) -> dict[str, Any]:
        """run.json's ``cluster``: the scheduler and each worker's host and backends."""
        return {"address": "local" if self.cluster is not None else self.options.address or "",
                "scheduler": self.address, "scheduler_file": self.options.scheduler_file,
                "workers": {addr: {"name": d["name"], "host": d["host"],
                                   "backends": {n: {k: b.get(k) for k in ("available", "reason", "device", "host")}
                                                for n, b in d["backends"].items()}}
                            for addr, d in self.workers.items()}}

    def run(self, plan: Plan, opts: SweepOptions, emit: Callable[[Row], None], meta: dict[str, Any],
            save_meta: Callable[[], None], note: Callable[[str], None],
            skip: Callable[[Row], Mapping[str, Any] | None] | None = None) -> None:
        """Every row of ``plan`` on the cluster, ``emit`` -ted as it completes; each device's calibration goes into
        ``meta["backends"][name]["devices"]`` (``save_meta`` writes run.json) as its first row arrives."""
        from distributed import as_completed

        pairing = _Pairing(plan.baseline, emit)
        jobs: dict[Any, FleetJob] = {}
        for spec, case, dtype in plan.jobs():
            seed, nbytes, flops, base_error = case_setup(plan, spec, case, dtype)
            for entry in plan.backends:
                row = new_row(plan, spec, case, dtype, seed, nbytes, flops, entry)
                row.host = ""  # the worker's
                old = skip(row) if skip is not None else None
                if old is not None:
                    if entry.name == plan.baseline:
                        pairing.known((row.op, row.case, row.dtype), old)
                    continue
                if base_error:
                    row.status, row.message = "error", base_error
                    pairing.add(row)
                    continue
                job = FleetJob(self.run_id, entry.name, spec.name, case, dtype, row, plan.mode, plan.timing,
                               plan.isolation, plan.case_timeout_s, plan.calibrate, opts.recalibrate,
                               opts.availability_timeout_s)
                future = self.client.submit(run_job, job, resources={resource_name(entry.name): 1}, pure=False,
                                            key=f"oprt-{entry.name}-{spec.name}-{case.name}-{dtype}-{uuid.uuid4().hex}",
                                            priority=1 if entry.name == plan.baseline else 0)
                jobs[future] = job
        orphaned: dict[str, str] = {}
        stop = threading.Event()
        watchdog = threading.Thread(target=self._watch, args=(jobs, orphaned, stop), daemon=True,
                                    name="oprt-bench fleet watchdog")
        watchdog.start()
        try:
            for future in as_completed(list(jobs)):
                job = jobs.pop(future)
                row = self._row_of(future, job, orphaned, meta, save_meta, note)
                future.release()
                pairing.add(row)
        finally:
            stop.set()
            if jobs:
                self.client.cancel(list(jobs))
            pairing.flush()
            try:
                self.client.run(close_run, self.run_id)
            except Exception:  # noqa: BLE001 - a worker gone: its backend workers died with it
                pass

    def _row_of(self, future: Any, job: FleetJob, orphaned: dict[str, str], meta: dict[str, Any],
                save_meta: Callable[[], None], note: Callable[[str], None]) -> Row:
        from distributed import KilledWorker

        row = job.row
        if future.status == "finished":
            try:
                result: FleetResult = future.result()
            except Exception as exc:  # noqa: BLE001 - the result could not be fetched: the row says why
                row.status, row.message = "error", "cluster: the row's result was lost: " + one_line(exc)
                return row
            devices = meta.setdefault("backends", {}).setdefault(job.backend, {}).setdefault("devices", {})
            if result.where not in devices:
                devices[result.where] = result.device
                backend = meta["backends"][job.backend]
                for k in ("calibration", "timer", "peak", "calibration_source"):
                    if backend.get(k) is None and result.device.get(k) is not None:
                        backend[k] = result.device[k]  # the first device's, as a one-device run has it
                cal = result.device.get("calibration") or {}
                peak = cal.get("measured_peak_gbps")
                note(f"cluster: {job.backend} on {result.where} ({result.device.get('device', '')})"
                     + (f": measured peak {peak:.4g} GB/s" if peak else ""))
                save_meta()
            return result.row
        if future.status == "cancelled":
            row.status, row.message = "error", "cluster: " + orphaned.get(job.backend, "the row was cancelled")
            return row
        failure = future.exception()
        if isinstance(failure, KilledWorker):
            row.status, row.message = "error", (f"cluster: every worker that ran the row was lost "
                                                f"({one_line(failure)}); the row was not measured")
        else:
            row.status, row.message = "error", "cluster: worker error: " + one_line(failure)
        return row

    def _watch(self, jobs: dict[Any, FleetJob], orphaned: dict[str, str], stop: threading.Event) -> None:
        """Cancel the rows of a backend no worker has offered for ORPHAN_GRACE_S (they would wait forever)."""
        import time

        since: dict[str, float] = {}
        while not stop.wait(2.0):
            try:
                try:
                    info = self.client.scheduler_info(n_workers=-1)  # every worker (newer distributed lists 5)
                except TypeError:
                    info = self.client.scheduler_info()
                workers = info["workers"].values()
            except Exception:  # noqa: BLE001 - the scheduler is gone: as_completed ends with errors
                return
            offered = {r for w in workers for r in (w.get("resources") or {})}
            now = time.monotonic()
            for name in {j.backend for j in list(jobs.values())}:
                if resource_name(name) in offered:
                    since.pop(name, None)
                    continue
                since.setdefault(name, now)
                if now - since[name] >= ORPHAN_GRACE_S and name not in orphaned:
                    orphaned[name] = f"no worker of the cluster offered backend {name!r} for {ORPHAN_GRACE_S:g} s"
                    self.client.cancel([f for f, j in list(jobs.items()) if j.backend == name])

    def close(self) -> None:
        """Close the client, and stop the local cluster when this started one."""
        try:
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()
