"""The ``oprt-bench`` command.

``oprt-bench [options]`` runs a sweep; subcommands ``backends``, ``ops``, ``compare`` and
``report`` inspect plugins and turn runs into tables and reports. Exit codes: 0 every row
ok or unsupported, 1 some row failed or errored (or a regression under --fail-on-regression),
2 a user mistake (one line on stderr, nothing written), 128+signal when interrupted.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import click

from oprt_core import OprtError

from . import __version__
from .compare import REGRESSIONS, compare_runs, parse_threshold, timing_mismatch
from .errors import UsageError
from .progress import make_progress
from .report import write_report
from .results import (
    CSV_NAME,
    REPORT_HTML,
    RESULTS_JSON,
    RUN_JSON,
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
from .sweep import (
    AVAILABILITY_TIMEOUT_S,
    FORMATS,
    ISOLATIONS,
    MODES,
    Runners,
    SweepOptions,
    calibrate_plan,
    check_seconds,
    make_plan,
    reusable_calibrations,
    run_sweep,
)
from .timing import FLUSHES, TimingConfig

__all__ = ["cli", "main"]

PROG = "oprt-bench"


def _fail(message: str, code: int) -> int:
    click.echo(f"{PROG}: error: {' '.join(str(message).split())}", err=True)
    return code


class OneLineErrors(click.Group):
    """A click group whose every usage error is one line on stderr (no usage block, no traceback)."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        try:
            rv = super().main(args=args, prog_name=prog_name or PROG, complete_var=complete_var,
                              standalone_mode=False, **extra)
            code = rv if isinstance(rv, int) else 0
        except click.UsageError as exc:
            code = _fail(exc.format_message(), 2)
        except click.ClickException as exc:
            code = _fail(exc.format_message(), exc.exit_code)
        except OprtError as exc:
            code = _fail(str(exc), 2)
        except click.Abort:
            click.echo("Aborted!", err=True)
            code = 130
        if standalone_mode:
            sys.exit(code)
        return code


def _registry(ctx: click.Context) -> Any:
    """The plugin registry: ``ctx.obj["registry"]`` when a caller (tests, embedding) passes one."""
    obj = ctx.find_root().obj
    if isinstance(obj, dict) and obj.get("registry") is not None:
        return obj["registry"]
    from oprt_core import get_registry

    return get_registry()


def _console(err: bool = False) -> Any:
    from rich.console import Console

    stream = sys.stderr if err else sys.stdout
    return Console(file=stream, width=None if stream.isatty() else 200, highlight=False)


# -- the sweep ----------------------------------------------------------------------------------

class _Interrupted(BaseException):  # noqa: N818 - like KeyboardInterrupt: no `except Exception` swallows it
    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise _Interrupted(signum)


def _set_handlers(handler: Any) -> dict[int, Any]:
    old: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            old[signum] = signal.signal(signum, handler)
        except (ValueError, OSError):  # not the main thread (embedding): leave signals alone
            pass
    return old


@click.group(cls=OneLineErrors, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.option("--ops", default="all", show_default=True, metavar="all|NAME,...", help="Ops to sweep.")
@click.option("--backends", default="all", show_default=True, metavar="all|NAME,...",
              help="Backends to sweep; 'all' = every available one. A named backend must be available.")
@click.option("--dtypes", default="all", show_default=True, metavar="all|f32,f16,bf16", help="Dtypes to sweep.")
@click.option("--cases", default="default", show_default=True, metavar="smoke|default|large|edge",
              help="Case set of every op.")
@click.option("--shape", "shapes", multiple=True, metavar="SHAPE",
              help="A contiguous case of this shape (e.g. 4096x4096) instead of the case set; repeatable.")
@click.option("--mode", type=click.Choice(MODES), default="all", show_default=True,
              help="test: correctness only; bench: correctness gate then timing; all: gate, timing, re-check.")
@click.option("--baseline", default=None, metavar="NAME|none",
              help="Backend speedups are measured against (always swept too). [default: torch when available, "
                   "else numpy]")
@click.option("--cold/--warm", default=True, show_default=True,
              help="Flush the device's last-level cache before each sample (cold) or not (warm).")
@click.option("--flush", type=click.Choice(FLUSHES), default="dirty", show_default=True,
              help="Cold mode's flush (the calibration's too): dirty writes a buffer of 2x L2 (as triton's do_bench), "
                   "leaving L2 full of dirty lines the timed op writes back; clean then reads it back, so the op "
                   "starts with clean lines (rows say timing=cold-clean).")
@click.option("--calibrate/--no-calibrate", default=True, show_default=True,
              help="Measure each backend's peak bandwidth (device-to-device copy) and timer floor first; "
                   "without it pct_of_peak and the launch-bound flag stay empty.")
@click.option("--time-budget", "time_budget", type=float, default=None, metavar="SECONDS",
              help="Sampling time per case and backend; at least --min-samples are taken. [default: 0.5; 0.1 for "
                   "smoke]")
@click.option("--target-ci", "target_ci", type=float, default=TimingConfig.target_rel_ci, show_default=True,
              metavar="FRACTION",
              help="Stop sampling a row once its median's 95% confidence half-width is below this fraction of the "
                   "median; 0 samples the whole budget. Tighter than the default for verdicts on near ties.")
@click.option("--min-samples", "min_samples", type=int, default=TimingConfig.min_samples, show_default=True,
              metavar="N", help="Samples every row takes, whatever the budget and the confidence interval (at most "
                                f"{TimingConfig.max_samples}).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random inputs.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Run folder (new or empty; never overwritten). [default: results/<UTC timestamp>-<host>/]")
@click.option("--resume", "resume", type=click.Path(path_type=Path), default=None, metavar="RUN_DIR",
              help="Continue an interrupted run in RUN_DIR: options default to that run's, rows it has are skipped; "
                   "refused when the provenance (versions, commit, seed, mode, timing, backend devices) differs.")
@click.option("--isolation", type=click.Choice(ISOLATIONS), default="process", show_default=True,
              help="process: each backend in a worker process (a crash or hang is an error row, the sweep goes on); "
                   "none: everything in this process.")
@click.option("--case-timeout", "case_timeout", type=float, default=None, metavar="SECONDS",
              help="Kill a row's worker after this long (process isolation). [default: 120 + --time-budget]")
@click.option("--availability-timeout", "availability_timeout", type=float, default=AVAILABILITY_TIMEOUT_S,
              show_default=True, metavar="SECONDS",
              help="A backend whose availability check takes longer is reported unavailable.")
@click.option("--format", "formats", default=",".join(FORMATS), show_default=True, metavar="csv,json,html",
              help="Outputs: results.csv, results.json, report.html (run.json is always written).")
@click.option("-q", "--quiet", is_flag=True, help="Only the final summary line.")
@click.option("-v", "--verbose", is_flag=True, help="Every row with its spread, full messages.")
@click.version_option(__version__, "-V", "--version", prog_name=PROG)
@click.pass_context
def cli(ctx: click.Context, ops: str, backends: str, dtypes: str, cases: str, shapes: tuple[str, ...], mode: str,
        baseline: str | None, cold: bool, flush: str, calibrate: bool, time_budget: float | None, target_ci: float,
        min_samples: int, seed: int,
        out: Path | None, resume: Path | None, isolation: str, case_timeout: float | None, availability_timeout: float,
        formats: str, quiet: bool, verbose: bool) -> int | None:
    """Check and time oprt operators on every backend; write CSV, JSON and HTML reports.

    \b
    Examples:
      oprt-bench --backends numpy --cases smoke
      oprt-bench --ops softmax --shape 4096x4096 --shape 65536x128 --dtypes f16
      oprt-bench compare results/OLD results/NEW --fail-on-regression
    """
    if ctx.invoked_subcommand is not None:
        return None
    check_seconds("--availability-timeout", availability_timeout)
    opts = SweepOptions(ops=ops, backends=backends, dtypes=dtypes, cases=cases, shapes=shapes, mode=mode,
                        baseline=baseline, cold=cold, flush=flush, time_budget_s=time_budget, target_ci=target_ci,
                        min_samples=min_samples, seed=seed,
                        formats=formats, calibrate=calibrate, isolation=isolation, case_timeout_s=case_timeout,
                        availability_timeout_s=availability_timeout)
    registry = _registry(ctx)
    if resume is not None:
        if out is not None:
            raise UsageError("--out and --resume exclude each other: --resume continues the run in its own folder")
        state = load_resume(resume)
        opts = resume_options(opts, state.meta, _explicit(ctx))
        plan = make_plan(registry, opts)
        return _run(registry, plan, opts, resume, quiet, verbose, state)
    plan = make_plan(registry, opts)
    out = out if out is not None else default_run_dir()
    check_out_dir(out)
    return _run(registry, plan, opts, out, quiet, verbose)


def _explicit(ctx: click.Context) -> set[str]:
    """The sweep options the user gave on the command line (the rest default to the resumed run's)."""
    names = {"time_budget": "time_budget_s", "case_timeout": "case_timeout_s",
             "availability_timeout": "availability_timeout_s"}
    return {names.get(k, k) for k in ctx.params
            if ctx.get_parameter_source(k) not in (click.core.ParameterSource.DEFAULT, None)}


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _run(registry: Any, plan: Any, opts: SweepOptions, out: Path, quiet: bool, verbose: bool,
         resume: ResumeState | None = None) -> int:
    options = vars(opts) | {"out": str(out), "shapes": list(opts.shapes)}
    fresh = provenance(sys.argv, plan.seed, options)
    fresh["plan"] = plan.to_dict()
    fresh["backends"] = {e.name: e.to_dict() for e in plan.backends}
    fresh["plugins"] = [p.to_dict() for p in registry.plugins()]
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
        skip = resume.lookup
    write_json(out / RUN_JSON, meta)
    writer = RowWriter(out / CSV_NAME if "csv" in plan.formats else None)
    counts: Counter[str] = Counter()
    if resume is not None:
        writer.rows.extend(resume.rows)
        counts.update(str(r.get("status")) for r in resume.rows)
    started = time.monotonic()
    interrupted: int | None = None
    crashed: BaseException | None = None  # an unexpected exception escaping the sweep (a bug): run.json says so

    def emit(row: dict[str, Any]) -> None:
        writer.write(row)
        counts[row["status"]] += 1
        progress.row(row)

    todo = plan.n_rows - (resume.count_skipped(plan) if resume is not None else 0)
    progress = make_progress(todo, quiet, verbose)
    old = _set_handlers(_raise_interrupt)
    try:
        with progress, Runners(plan) as runners:
            for note in plan.notes:
                progress.note(f"note: {note}")
            for name, reason in plan.skipped_backends.items():
                progress.note(f"note: backend {name!r} skipped: {reason}")
            if resume is not None:
                progress.note(f"note: resuming {out}: {plan.n_rows - todo} rows already measured are kept")
            if plan.calibrate and todo:
                reuse = reusable_calibrations(meta.get("backends")) if resume is not None else {}
                calibrate_plan(plan, progress.note, on_start=progress.start, runners=runners, reuse=reuse)
                meta["backends"] = (meta.get("backends") or {}) | {e.name: e.to_dict() for e in plan.backends
                                                                   if e.name not in reuse}
                write_json(out / RUN_JSON, meta)
            run_sweep(plan, emit, on_start=progress.start, runners=runners, skip=skip)
    except _Interrupted as exc:
        interrupted = exc.signum
    except BaseException as exc:
        crashed = exc
        raise
    finally:
        # a second Ctrl-C must not cut the report of what was measured
        _set_handlers(signal.SIG_IGN)
        try:
            writer.close()
            code = 1 if counts["failed"] or counts["error"] else 0
            status = "complete"
            if interrupted is not None:
                code = 128 + interrupted
                status = f"interrupted ({signal.Signals(interrupted).name})"
            elif crashed is not None:
                code = 1
                status = f"failed ({_one_line(crashed)})"
            meta.update(finished_utc=utc_now().isoformat(), status=status, counts=dict(counts), exit_code=code,
                        elapsed_s=round(time.monotonic() - started, 3))
            write_json(out / RUN_JSON, meta)
            if "json" in plan.formats:
                write_json(out / RESULTS_JSON, {"run": meta, "rows": writer.rows})
            if "html" in plan.formats:
                write_report([Run(out, normalize_rows(writer.rows), meta)], out / REPORT_HTML)
        finally:
            for signum, handler in old.items():
                signal.signal(signum, handler)
    total = sum(counts.values())
    summary = ", ".join(f"{counts[s]} {s}" for s in ("ok", "unsupported", "failed", "error") if counts[s])
    line = f"{PROG}: {total} rows ({summary or 'none'}) in {meta['elapsed_s']:.1f} s -> {out}"
    if interrupted is not None:
        click.echo(f"{line} [interrupted by {signal.Signals(interrupted).name}; finished rows and report kept]",
                   err=True)
    else:
        click.echo(line)
    return code


# -- backends, ops ------------------------------------------------------------------------------

def backend_rows(registry: Any, timeout_s: float = AVAILABILITY_TIMEOUT_S) -> list[dict[str, Any]]:
    """Every registered backend: available or not and why, device, flavour, versions. A backend whose
    availability check raises or outlasts ``timeout_s`` is listed unavailable with that reason."""
    from .sweep import _availability, _device_info

    rows = []
    for name, backend in registry.backends.items():
        ok, reason, device = _availability(backend, timeout_s)
        info = _device_info(backend, timeout_s)
        rows.append({"name": name, "plugin": registry.owner.get(("backend", name)), "available": ok,
                     "reason": reason, "device": device or info.get("name", ""), "flavour": info.get("flavour", ""),
                     "driver": info.get("driver_version", ""), "toolkit": info.get("toolkit", ""),
                     "device_info": info})
    return rows


@cli.command("backends")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--availability-timeout", "availability_timeout", type=float, default=AVAILABILITY_TIMEOUT_S,
              show_default=True, metavar="SECONDS", help="A backend whose availability check takes longer is "
              "listed unavailable.")
@click.pass_context
def backends_cmd(ctx: click.Context, as_json: bool, availability_timeout: float) -> int:
    """Installed plugins and backends: available or not and why, device, build flavour, versions."""
    check_seconds("--availability-timeout", availability_timeout)
    registry = _registry(ctx)
    plugins = [p.to_dict() for p in registry.plugins()]
    backends = backend_rows(registry, availability_timeout)
    if as_json:
        click.echo(json.dumps({"plugins": plugins, "backends": backends}, indent=2, default=str))
        return 0
    from rich.table import Table

    console = _console()
    t = Table(title="plugins", title_justify="left")
    for col in ("plugin", "distribution", "version", "backends", "ops", "load error"):
        t.add_column(col, overflow="fold")
    for p in plugins:
        t.add_row(p["name"], p["distribution"] or "", p["version"] or "", ", ".join(p["backends"]),
                  ", ".join(p["ops"]), p["error"] or "", style="red" if p["error"] else None)
    console.print(t)
    t = Table(title="backends", title_justify="left")
    for col in ("backend", "plugin", "available", "device", "flavour", "driver", "toolkit", "reason"):
        t.add_column(col, overflow="fold")
    for b in backends:
        t.add_row(b["name"], b["plugin"] or "", "yes" if b["available"] else "no", b["device"], b["flavour"],
                  b["driver"], b["toolkit"], b["reason"], style=None if b["available"] else "yellow")
    console.print(t)
    return 0


def op_rows(registry: Any) -> list[dict[str, Any]]:
    rows = []
    for name, spec in registry.ops.items():
        rows.append({
            "name": name, "doc": spec.doc, "inputs": list(spec.input_names), "dtypes": list(spec.dtypes),
            "params": [{"name": p.name, "default": p.default, "types": [t.__name__ for t in p.types],
                        "allow_none": p.allow_none, "doc": p.doc} for p in spec.params],
            "case_sets": {k: {"count": len(v), "cases": [c.name for c in v]} for k, v in spec.case_sets.items()},
        })
    return rows


@cli.command("ops")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def ops_cmd(ctx: click.Context, as_json: bool) -> int:
    """Registered ops: params, dtypes, case sets with their sizes."""
    rows = op_rows(_registry(ctx))
    if as_json:
        click.echo(json.dumps({"ops": rows}, indent=2, default=str))
        return 0
    from rich.table import Table

    t = Table(title="ops", title_justify="left")
    for col in ("op", "inputs", "params", "dtypes", "case sets", "doc"):
        t.add_column(col, overflow="fold")
    for r in rows:
        params = ", ".join(f"{p['name']}={p['default']!r}" for p in r["params"])
        sets = ", ".join(f"{k} {v['count']}" for k, v in r["case_sets"].items())
        t.add_row(r["name"], ", ".join(r["inputs"]), params, ", ".join(r["dtypes"]), sets, r["doc"])
    _console().print(t)
    return 0


# -- compare, report ----------------------------------------------------------------------------

@cli.command("compare")
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("--threshold", default="5%", show_default=True, help="Smallest change that counts (5% or 0.05).")
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when a row got slower or broke.")
@click.option("--all", "show_all", is_flag=True, help="List unchanged rows too.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def compare_cmd(old: Path, new: Path, threshold: str, fail_on_regression: bool, show_all: bool, as_json: bool) -> int:
    """Compare two runs row by row: faster / slower / same, judged against each row's p10..p90 spread."""
    t = parse_threshold(threshold)
    old_run, new_run = load_run(old), load_run(new)
    table = compare_runs(old_run, new_run, t)
    warning = timing_mismatch(old_run, new_run)
    if warning:
        click.echo(warning, err=True)
    counts = table["verdict"].value_counts().to_dict()
    regressions = int(table["verdict"].isin(REGRESSIONS).sum())
    kernels = int(table["kernel_changed"].sum())
    if as_json:
        click.echo(json.dumps({"threshold": t, "counts": counts, "regressions": regressions, "warning": warning,
                               "kernel_changes": kernels,
                               "rows": table.astype(object).where(table.notna(), None).to_dict("records")},
                              indent=2, default=str))
    else:
        from rich.table import Table

        shown = table if show_all else table[(table["verdict"] != "same") | table["noisy"] | table["kernel_changed"]]
        rt = Table(title=f"{old} -> {new} (threshold {t:.1%})", title_justify="left")
        for col in ("op", "case", "dtype", "backend", "old ms", "new ms", "new/old", "verdict") + (
                ("kernel",) if kernels else ()):
            rt.add_column(col, justify="right" if col in ("old ms", "new ms", "new/old") else "left")
        styles = {"slower": "red", "broken": "red", "faster": "green", "fixed": "green"}
        for r in shown.to_dict("records"):
            ms = lambda v: "" if v != v or v is None else f"{v:.4g}"  # noqa: E731
            old_ms = ms(r["old_median_ms"]) if r["old_status"] == "ok" else str(r["old_status"] or "")
            new_ms = ms(r["new_median_ms"]) if r["new_status"] == "ok" else str(r["new_status"] or "")
            ratio = "" if r["ratio"] is None or r["ratio"] != r["ratio"] else f"{r['ratio']:.3f}"
            verdict = r["verdict"] + (" ~" if r["noisy"] else "")
            kernel = (f"{r['old_kernel']} -> {r['new_kernel']}" if r["kernel_changed"] else "",) if kernels else ()
            rt.add_row(r["op"], r["case"], r["dtype"], r["backend"], old_ms, new_ms, ratio, verdict, *kernel,
                       style=styles.get(r["verdict"]))
        console = _console()
        console.print(rt)
        console.print(f"{len(table)} rows: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
                      + f"; {regressions} regression(s)" + (f"; {kernels} took another kernel" if kernels else "")
                      + ". '~' = moved beyond the threshold within the noise.")
    return 1 if fail_on_regression and regressions else 0


@cli.command("report")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Folder for report.html. [default: the run folder for one run, results/merged-<UTC> for several]")
@click.option("--title", default="oprt-bench report", show_default=True)
def report_cmd(runs: tuple[Path, ...], out: Path | None, title: str) -> int:
    """Render report.html from one or more runs (e.g. from several machines, merged into one comparison)."""
    loaded = [load_run(p) for p in runs]
    if out is None:
        stamp = utc_now().strftime("%Y%m%dT%H%M%SZ")
        out = loaded[0].path if len(loaded) == 1 else Path("results") / f"merged-{stamp}"
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {str(out)!r} is a file; give a folder")
    if not out.exists():
        check_out_dir(out)
        out.mkdir(parents=True)
    path = write_report(loaded, out / REPORT_HTML, title)
    click.echo(str(path))
    return 0


def main() -> None:
    """Console-script entry point."""
    cli.main(prog_name=PROG)
