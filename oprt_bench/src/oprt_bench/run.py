"""Running a sweep into a run folder, and rebuilding a run folder's report.

:func:`sweep` is what ``oprt-bench [options]`` does once its options are parsed: validate them into a
plan, create (or, with ``--resume``, continue) the run folder, calibrate, run every row, and write
run.json, results.csv, results.json and report.html; Ctrl-C or SIGTERM stops it with every finished
row and the report kept. :func:`rebuild_report` is ``oprt-bench report``.
"""

from __future__ import annotations

import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from oprt_core import Registry

from .calcache import CalibrationCache
from .errors import UsageError, one_line
from .integrity import check_run, plan_order, readable_rows
from .model import Plan, Row, SweepOptions
from .peaks import measured_compute_peaks
from .plan import make_plan
from .progress import make_progress
from .report import write_report
from .results import (
    CSV_NAME,
    REPORT_HTML,
    RESULTS_JSON,
    RUN_JSON,
    STATUSES,
    RowWriter,
    Run,
    check_out_dir,
    create_run_dir,
    default_run_dir,
    load_run,
    normalize_rows,
    provenance,
    utc_now,
    write_json,
)
from .resume import ResumeState, check_provenance, load_resume, resume_options
from .runners import Prestarted, Runners
from .sweep import calibrate_plan, reusable_calibrations, run_sweep
from .telemetry import describe_device

if TYPE_CHECKING:  # dask is imported only for --cluster
    from .fleet import ClusterOptions, Fleet

__all__ = ["RunOutcome", "sweep", "rebuild_report", "PROG"]

PROG = "oprt-bench"
_T = TypeVar("_T")


@dataclass(frozen=True)
class RunOutcome:
    """How a sweep ended: the exit code, the summary line, the signal that interrupted it (if one did), and the
    run's rows (resumed ones included) in plan order for the results table, and the run folder."""

    code: int
    summary: str
    interrupted_by: str | None = None
    rows: Sequence[Mapping[str, Any]] = ()
    folder: Path | None = None  # the run folder


class _Interrupted(BaseException):  # noqa: N818 - like KeyboardInterrupt: no `except Exception` swallows it
    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise _Interrupted(signum)


def _set_handlers(handler: Any) -> dict[int, Any]:
    old: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            old[signum] = signal.signal(signum, handler)
        except (ValueError, OSError):  # not the main thread (embedding): leave signals alone
            pass
    return old


class Phases:
    """Seconds spent in each phase of a run (plan, workers, calibration, rows, report): run.json's ``phases_s``,
    printed by ``--verbose``."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def time(self, name: str, fn: Callable[[], _T]) -> _T:
        t0 = time.monotonic()
        try:
            return fn()
        finally:
            self.seconds[name] = round(self.seconds.get(name, 0.0) + time.monotonic() - t0, 3)


def sweep(registry: Registry, opts: SweepOptions, argv: Sequence[str], out: Path | None = None,
          resume: Path | None = None, explicit: set[str] | frozenset[str] = frozenset(), quiet: bool = False,
          verbose: bool = False, progress_out: TextIO | None = None,
          cluster: ClusterOptions | None = None) -> RunOutcome:
    """Run the sweep ``opts`` describes into the run folder ``out`` (default: a new one under results/), or
    continue the run in ``resume`` (options not in ``explicit`` default to that run's). Progress goes to
    ``progress_out`` (default: a bar on a terminal stderr, else lines on stdout). A user mistake raises
    UsageError (or another OprtError) before anything is written. ``cluster``: run the rows on a Dask cluster
    (:mod:`oprt_bench.fleet`) instead of this host's workers."""
    if resume is not None and out is not None:
        raise UsageError("--out and --resume exclude each other: --resume continues the run in its own folder")
    started = time.monotonic()
    state = load_resume(resume) if resume is not None else None  # holds the resumed run's lock
    try:
        if state is not None:
            opts = resume_options(opts, state.meta, set(explicit))
        outcome = _sweep(registry, opts, argv, out, state, quiet, verbose, progress_out, cluster)
    finally:
        if state is not None and state.rows_file is not None:
            state.rows_file.close()  # closed by the run's writer already, unless the run was refused before it
    # the whole sweep's wall time: plan, workers, calibration, rows, report and the workers' stop (run.json's
    # phases_s has each phase, its elapsed_s the span from the workers' start to the last row)
    return replace(outcome, summary=f"{outcome.summary} in {time.monotonic() - started:.1f} s -> {outcome.folder}")


def _sweep(registry: Registry, opts: SweepOptions, argv: Sequence[str], out: Path | None, state: ResumeState | None,
           quiet: bool, verbose: bool, progress_out: TextIO | None, cluster: ClusterOptions | None) -> RunOutcome:
    phases = Phases()
    fleet: Fleet | None = None
    if cluster is not None:
        from .fleet import Fleet

        cluster.check()
        fleet = phases.time("cluster", lambda: Fleet(cluster, registry, opts))
    # the workers start while this process checks every backend's availability (both import the runtimes)
    prestarted = Prestarted.for_options(registry, opts) if fleet is None else None
    try:
        remote = fleet.remote_backends() if fleet is not None else None
        plan = phases.time("plan", lambda: make_plan(registry, opts, remote=remote))
        if state is None:
            out = out if out is not None else default_run_dir()
            check_out_dir(out)
        folder = state.path if state is not None else out
        assert folder is not None
        return _run(registry, plan, opts, argv, folder, quiet, verbose, phases, state, progress_out=progress_out,
                    prestarted=prestarted, fleet=fleet)
    finally:
        if prestarted is not None:
            prestarted.close()
        if fleet is not None:
            fleet.close()


def _run(registry: Registry, plan: Plan, opts: SweepOptions, argv: Sequence[str], out: Path, quiet: bool,
         verbose: bool, phases: Phases, resume: ResumeState | None = None,
         progress_out: TextIO | None = None, prestarted: Prestarted | None = None,
         fleet: Fleet | None = None) -> RunOutcome:
    options = vars(opts) | {"out": str(out), "shapes": list(opts.shapes)}
    fresh = provenance(argv, plan.seed, options)
    fresh["plan"] = plan.to_dict()
    for entry in plan.backends:  # the NVML device of each backend (or why none), before the workers get entries
        entry.telemetry = describe_device(entry.device_info, opts.telemetry)
    fresh["backends"] = {e.name: e.to_dict() for e in plan.backends}
    fresh["plugins"] = [p.to_dict() for p in registry.plugins()]
    if fleet is not None:
        fresh["cluster"] = fleet.describe()
    skip = None
    if resume is None:
        create_run_dir(out)
        meta = fresh
    else:
        check_provenance(resume.meta, fresh, plan)  # refuses (UsageError) before anything is written
        resume.heal()
        meta = resume.meta
        meta.setdefault("resumed", []).append({k: fresh[k] for k in ("argv", "started_utc", "git", "plan")}
                                              | {"skipped_rows": resume.count_skipped(plan)})
        # a backend the resumed run has keeps its entry (its calibration: the kept rows were computed with it)
        meta["backends"] = fresh["backends"] | (meta.get("backends") or {})
        meta.update(status="running", finished_utc=None)
        if fleet is not None:
            meta["cluster"] = fresh["cluster"]
        skip = resume.lookup
    write_json(out / RUN_JSON, meta)
    writer = RowWriter(out / CSV_NAME if "csv" in plan.formats else None,
                       file=resume.rows_file if resume is not None else None)
    counts: Counter[str] = Counter()
    if resume is not None:
        writer.rows.extend(resume.rows)
        counts.update(str(r.get("status")) for r in resume.rows)
    started = time.monotonic()
    interrupted: int | None = None
    crashed: BaseException | None = None  # an unexpected exception escaping the sweep (a bug): run.json says so

    def emit(row: Row) -> None:
        writer.write(row)
        counts[row.status] += 1
        progress.row(row)

    todo = plan.n_rows - (resume.count_skipped(plan) if resume is not None else 0)
    progress = make_progress(todo, quiet, verbose, out=progress_out)
    old = _set_handlers(_raise_interrupt)
    try:
        with progress, Runners(plan, prestarted) as runners:
            for note in plan.notes:
                progress.note(f"note: {note}")
            for name, reason in plan.skipped_backends.items():
                progress.note(f"note: backend {name!r} skipped: {reason}")
            if resume is not None:
                progress.note(f"note: resuming {out}: {plan.n_rows - todo} rows already measured are kept")
            if fleet is not None:
                for note in fleet.notes:
                    progress.note(f"note: {note}")
                progress.start(f"running on {len(fleet.workers)} cluster worker(s)")
                phases.time("rows", lambda: fleet.run(plan, opts, emit, meta, lambda: write_json(out / RUN_JSON, meta),
                                                      progress.note, skip=skip))
            if todo and fleet is None:
                progress.start("starting workers")
                starts = phases.time("workers", runners.start_all)
                if verbose and starts:
                    progress.note("time: workers started in parallel: " + ", ".join(
                        f"{name} {secs:.1f} s" for name, secs in starts.items()))
            if plan.calibrate and todo and fleet is None:
                reuse = reusable_calibrations(meta.get("backends")) if resume is not None else {}
                cache = CalibrationCache()
                sources = phases.time("calibration", lambda: calibrate_plan(
                    plan, progress.note, on_start=progress.start, runners=runners, reuse=reuse, cache=cache,
                    refresh=opts.recalibrate))
                meta["backends"] = (meta.get("backends") or {}) | {
                    e.name: e.to_dict() | {"calibration_source": sources.get(e.name, "")} for e in plan.backends
                    if e.name not in reuse}
                write_json(out / RUN_JSON, meta)
            if fleet is None:
                phases.time("rows", lambda: run_sweep(plan, emit, on_start=progress.start, runners=runners,
                                                      skip=skip))
    except _Interrupted as exc:
        interrupted = exc.signum
    except BaseException as exc:
        crashed = exc
        raise
    finally:
        # a second Ctrl-C must not cut the report of what was measured
        _set_handlers(signal.SIG_IGN)
        try:
            code = 1 if counts["failed"] or counts["error"] else 0
            status = "complete"
            if interrupted is not None:
                code = 128 + interrupted
                status = f"interrupted ({signal.Signals(interrupted).name})"
            elif crashed is not None:
                code = 1
                status = f"failed ({one_line(crashed)})"
            meta.update(finished_utc=utc_now().isoformat(), status=status, counts=dict(counts), exit_code=code,
                        elapsed_s=round(time.monotonic() - started, 3),
                        compute_calibration=measured_compute_peaks(writer.rows))
            write_json(out / RUN_JSON, meta)
            meta["phases_s"] = phases.seconds
            write_json(out / RUN_JSON, meta)
            if "json" in plan.formats:
                write_json(out / RESULTS_JSON, {"run": meta, "rows": writer.rows})
            if "html" in plan.formats:
                phases.time("report", lambda: write_report([Run(out, normalize_rows(writer.rows), meta)],
                                                           out / REPORT_HTML))
                write_json(out / RUN_JSON, meta)  # with the report's time
        finally:
            writer.close()  # the run's lock is released once run.json, results.json and the report are written
            for signum, handler in old.items():
                signal.signal(signum, handler)
    if verbose:
        print("time: " + ", ".join(f"{name} {secs:.1f} s" for name, secs in phases.seconds.items()), file=sys.stderr)
    total = sum(counts.values())
    summary = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s])
    line = f"{PROG}: {total} rows ({summary or 'none'})"  # sweep() adds the wall time and the folder
    return RunOutcome(code, line, signal.Signals(interrupted).name if interrupted is not None else None,
                      [writer.rows[i] for i in plan_order(writer.rows, meta)], out)


def rebuild_report(runs: Sequence[Path], out: Path | None = None, title: str = "oprt-bench report",
                   warn: Callable[[str], None] | None = None) -> Path:
    """Write report.html from run folders (their results.csv, else results.json, and run.json), as the sweep
    writes it. ``out``: a ``.html`` file, or a folder for report.html (default: the run folder for one run,
    results/merged-<UTC> for several). Returns the path written; UsageError when a run cannot be read. A damaged
    run (:mod:`oprt_bench.integrity`) is reported with the rows that could be read, what is wrong with it shown
    first in the report and passed to ``warn``, a line each."""
    loaded, damage = [], []
    for path in runs:
        run = load_run(path)
        check = check_run(run, path)
        loaded.append(Run(run.path, readable_rows(run, check), run.meta))
        damage.append(check.messages())
        if warn is not None:
            for line in damage[-1]:
                warn(f"{path}: {line}")
    if out is not None and out.suffix.lower() in (".html", ".htm"):
        if out.is_dir():
            raise UsageError(f"--out {str(out)!r} is a folder; give a file name or the folder without the suffix")
        folder = out.parent if str(out.parent) else Path(".")
        if not folder.exists():
            check_out_dir(folder)
            folder.mkdir(parents=True)
        return write_report(loaded, out, title, damage)
    if out is None:
        stamp = utc_now().strftime("%Y%m%dT%H%M%SZ")
        out = loaded[0].path if len(loaded) == 1 else Path("results") / f"merged-{stamp}"
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {str(out)!r} is a file; give a folder")
    if not out.exists():
        check_out_dir(out)
        out.mkdir(parents=True)
    return write_report(loaded, out / REPORT_HTML, title, damage)
