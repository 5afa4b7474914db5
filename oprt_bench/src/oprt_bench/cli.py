"""The ``oprt-bench`` command.

``oprt-bench [options]`` runs a sweep and prints its results table; subcommands ``backends``, ``ops``,
``compare``, ``report`` and ``table`` inspect plugins and turn runs into tables and reports. Exit codes: 0 every row
ok or unsupported, 1 some row failed or errored (or a regression under --fail-on-regression, or a damaged run
for ``table``), 2 a user mistake (one line on stderr, nothing written), 128+signal when interrupted.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from oprt_core import OprtError, Registry

from . import __version__
from .compare import judge, parse_threshold, timing_mismatch
from .integrity import check_run, readable_rows
from .merge import ON_DUPLICATE, merge_runs
from .model import AVAILABILITY_TIMEOUT_S, FORMATS, ISOLATIONS, MODES, SweepOptions
from .plan import check_min_samples, check_seconds
from .profile_ncu import parse_profile, parse_row_names, profile_run
from .results import load_run
from .run import PROG, rebuild_report, sweep
from .table import TABLE_FORMATS, print_table
from .timing import FLUSHES, TIMERS, TimingConfig
from .views import (
    backend_rows,
    backends_text,
    comparison_json,
    console,
    op_rows,
    ops_text,
    print_backends,
    print_comparison,
    print_ops,
)

__all__ = ["cli", "main"]

def _fail(message: str, code: int) -> int:
    click.echo(f"{PROG}: error: {' '.join(str(message).split())}", err=True)
    return code


class OneLineErrors(click.Group):
    """A click group whose every usage error is one line on stderr (no usage block, no traceback)."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        for name in ("stdout", "stderr"):  # closed by the caller (a cron job's >&-): written to nowhere
            if getattr(sys, name) is None:
                setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - for the process
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
        except OSError as exc:  # a full disk, a folder that cannot be written (click ends a broken stdout pipe: 1)
            code = _fail(str(exc), 1)
        except click.Abort:
            click.echo("Aborted!", err=True)
            code = 130
        if standalone_mode:
            sys.exit(code)
        return code


def _registry(ctx: click.Context) -> Registry:
    """The plugin registry: ``ctx.obj["registry"]`` when a caller (tests, embedding) passes one."""
    obj = ctx.find_root().obj
    if isinstance(obj, dict) and obj.get("registry") is not None:
        registry: Registry = obj["registry"]
        return registry
    from oprt_core import get_registry

    return get_registry()


# -- the sweep ----------------------------------------------------------------------------------

@click.group(cls=OneLineErrors, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.option("--ops", default="all", show_default=True, metavar="all|NAME,...", help="Ops to sweep.")
@click.option("--backends", default="all", show_default=True, metavar="all|NAME,...",
              help="Backends to sweep; 'all' = every available one. A named backend must be available.")
@click.option("--dtypes", default="all", show_default=True, metavar="all|f32,f16,bf16,e4m3",
              help="Dtypes to sweep (all: f32, f16, bf16; e4m3 only when named, for the ops that declare it).")
@click.option("--cases", default="default", show_default=True, metavar="smoke|default|large|edge|models",
              help="Case set of every op (models: shapes of published models, docs/cases.md; an op without the "
                   "set has no rows).")
@click.option("--shape", "shapes", multiple=True, metavar="SHAPE",
              help="A contiguous case of this shape (e.g. 4096x4096) instead of the case set; repeatable.")
@click.option("--shapes", "shapes_file", type=click.Path(path_type=Path), default=None, metavar="FILE",
              help="Cases from a JSON (or, with PyYAML installed, YAML) file instead of the case set: a list of "
                   "{name, op, shape, axis, layout, params} (docs/cases.md).")
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
@click.option("--timing", "timing", type=click.Choice(TIMERS), default="events", show_default=True,
              help="What brackets each sample: events (an event pair around the launch) or graph (an event pair "
                   "around one CUDA-graph replay of the launch, input and output buffers rotated past 2x L2 so every "
                   "sample reads cold memory; CUDA backends: nvidia, metax nvcc-shim, torch, cupy, triton; others "
                   "fall back to events, the row's timer_note says why). See docs/measurement.md.")
@click.option("--calibrate/--no-calibrate", default=True, show_default=True,
              help="Measure each backend's peak bandwidth (device-to-device copy) and timer floor first; "
                   "without it pct_of_peak and the launch-bound flag stay empty.")
@click.option("--recalibrate", is_flag=True,
              help="Measure the calibration again even where one of the last 12 h on the same device and build is "
                   "cached (see docs/measurement.md).")
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
@click.option("--cluster", "cluster", default=None, metavar="local|tcp://HOST:PORT",
              help="Run the rows on a Dask cluster (docs/fleet.md): local starts one worker per visible GPU of the "
                   "requested backends (--workers CPU workers for host backends); an address joins a cluster of "
                   "`oprt-bench worker`s. Needs pip install ./oprt_bench[fleet].")
@click.option("--scheduler-file", "scheduler_file", default=None, metavar="FILE",
              help="Join the Dask cluster whose scheduler wrote FILE (dask scheduler --scheduler-file), as --cluster.")
@click.option("--workers", "cluster_workers", type=int, default=None, metavar="N",
              help="CPU workers of --cluster local when no requested backend has a device. [default: 2]")
@click.option("--format", "formats", default=",".join(FORMATS), show_default=True, metavar="csv,json,html",
              help="Outputs: results.csv, results.json, report.html (run.json is always written).")
@click.option("-q", "--quiet", is_flag=True, help="Only the final summary line.")
@click.option("-v", "--verbose", is_flag=True,
              help="Every row with its spread, full messages; the seconds of each phase of the run.")
@click.option("--table", "table_format", type=click.Choice(TABLE_FORMATS), default="auto", show_default=True,
              help="The results table after the sweep. auto: rich on a terminal, plain text otherwise, none with -q; "
                   "a format named: stdout has the table alone (progress and the summary line go to stderr).")
@click.option("--telemetry/--no-telemetry", default=True, show_default=True,
              help="Record the GPU's clocks, throttle reasons, power and energy while each row is timed (NVML, "
                   "nvidia-ml-py: the telemetry extra); columns stay empty, with the reason in run.json, where "
                   "unavailable.")
@click.option("--profile", "profile", default=None, metavar="ncu[:N]",
              help="After the sweep, re-run the N (default 2) rows lowest against their roofline (% of peak) under "
                   "Nsight Compute: report in the run folder's profiles/, DRAM bytes and throughput in the rows.")
@click.option("--profile-rows", "profile_rows", default=None, metavar="OP/CASE[/DTYPE[/BACKEND]],...",
              help="The rows --profile re-runs, instead of the lowest (implies --profile ncu).")
@click.version_option(__version__, "-V", "--version", prog_name=PROG)
@click.pass_context
def cli(ctx: click.Context, ops: str, backends: str, dtypes: str, cases: str, shapes: tuple[str, ...],
        shapes_file: Path | None, mode: str,
        baseline: str | None, cold: bool, flush: str, timing: str, calibrate: bool, recalibrate: bool,
        time_budget: float | None,
        target_ci: float,
        min_samples: int, seed: int,
        out: Path | None, resume: Path | None, isolation: str, case_timeout: float | None, availability_timeout: float,
        cluster: str | None, scheduler_file: str | None, cluster_workers: int | None,
        formats: str, quiet: bool, verbose: bool, table_format: str, telemetry: bool, profile: str | None,
        profile_rows: str | None) -> int | None:
    """Check and time oprt operators on every backend; write CSV, JSON and HTML reports.

    \b
    Examples:
      oprt-bench --backends numpy --cases smoke
      oprt-bench --ops softmax --shape 4096x4096 --shape 65536x128 --dtypes f16
      oprt-bench --cases models --ops softmax,reduce_sum
      oprt-bench --shapes my-model.json --backends nvidia,torch
      oprt-bench --cases models --backends nvidia --cluster local
      oprt-bench compare results/OLD results/NEW --fail-on-regression
      oprt-bench table results/RUN --format markdown
    """
    if ctx.invoked_subcommand is not None:
        return None
    check_seconds("--availability-timeout", availability_timeout)
    profile_count = parse_profile(profile or "ncu") if profile or profile_rows else None
    profile_names = parse_row_names(profile_rows) if profile_rows else []
    opts = SweepOptions(ops=ops, backends=backends, dtypes=dtypes, cases=cases, shapes=shapes,
                        shapes_file=str(shapes_file) if shapes_file is not None else None, mode=mode,
                        baseline=baseline, cold=cold, flush=flush, timer=timing, time_budget_s=time_budget,
                        target_ci=target_ci,
                        min_samples=min_samples, seed=seed,
                        formats=formats, calibrate=calibrate, recalibrate=recalibrate, isolation=isolation,
                        case_timeout_s=case_timeout,
                        availability_timeout_s=availability_timeout, telemetry=telemetry)
    table_only = table_format not in ("auto", "none")  # stdout carries the table alone
    fleet = None
    if cluster is not None or scheduler_file is not None or cluster_workers is not None:
        from .fleet import ClusterOptions

        fleet = ClusterOptions(cluster, scheduler_file, cluster_workers)
        fleet.check()
    outcome = sweep(_registry(ctx), opts, sys.argv, out=out, resume=resume, explicit=_explicit(ctx), quiet=quiet,
                    verbose=verbose, progress_out=sys.stderr if table_only else None, cluster=fleet)
    if table_only or (table_format == "auto" and not quiet):
        print_table(outcome.rows, table_format, sys.stdout)
    if outcome.interrupted_by is not None:
        click.echo(f"{outcome.summary} [interrupted by {outcome.interrupted_by}; finished rows and report kept]",
                   err=True)
    else:
        click.echo(outcome.summary, err=table_only)
        if profile_count is not None and outcome.folder is not None:
            for line in profile_run(outcome.folder, profile_count, profile_names).lines:
                click.echo(f"{PROG}: {line}", err=True)
    return outcome.code


def _explicit(ctx: click.Context) -> set[str]:
    """The sweep options the user gave on the command line (the rest default to the resumed run's)."""
    names = {"time_budget": "time_budget_s", "timing": "timer", "case_timeout": "case_timeout_s",
             "availability_timeout": "availability_timeout_s"}
    return {names.get(k, k) for k in ctx.params
            if ctx.get_parameter_source(k) not in (click.core.ParameterSource.DEFAULT, None)}


# -- backends, ops ------------------------------------------------------------------------------

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
        click.echo(backends_text(plugins, backends))
        return 0
    print_backends(console(), plugins, backends)
    return 0

@cli.command("ops")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def ops_cmd(ctx: click.Context, as_json: bool) -> int:
    """Registered ops: params, dtypes, case sets with their sizes."""
    rows = op_rows(_registry(ctx))
    if as_json:
        click.echo(ops_text(rows))
    else:
        print_ops(console(), rows)
    return 0


# -- compare, report ----------------------------------------------------------------------------

@cli.command("compare")
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("--threshold", default="5%", show_default=True,
              help="Smallest change that counts (5% or 0.05); a noisy row needs more (docs/measurement.md).")
@click.option("--fail-on-regression", is_flag=True,
              help="Exit 1 when a row got slower or broke, or when something cannot be judged and no --allow-* "
                   "flag accepts it.")
@click.option("--allow-missing", is_flag=True, help="Accept rows of OLD that NEW lacks.")
@click.option("--allow-status", is_flag=True,
              help="Accept rows ok in OLD that NEW did not time (unsupported, ...); failed or error rows stay "
                   "regressions.")
@click.option("--allow-incomplete", is_flag=True,
              help="Accept a NEW run that did not finish (interrupted, failed, still running) or has no run.json.")
@click.option("--allow-unreadable", is_flag=True,
              help="Accept damaged rows: a results.csv line cut or malformed, a median, p10 or p90 not a number.")
@click.option("--allow-mode-mismatch", is_flag=True,
              help="Accept comparing a --mode test run with a timed one (statuses only: no timing to judge).")
@click.option("--allow-provenance", is_flag=True,
              help="Accept a different device, dtype set, cold/warm and flush timing, or concurrency.")
@click.option("--allow-noisy", is_flag=True,
              help="Accept rows too noisy to judge at the threshold (their bounds ask a larger change).")
@click.option("--all", "show_all", is_flag=True, help="List unchanged rows too.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def compare_cmd(old: Path, new: Path, threshold: str, fail_on_regression: bool, allow_missing: bool,
                allow_status: bool, allow_incomplete: bool, allow_unreadable: bool, allow_mode_mismatch: bool,
                allow_provenance: bool, allow_noisy: bool, show_all: bool, as_json: bool) -> int:
    """Compare two runs row by row: faster / slower / same, judged against both rows' spreads, and each op's and the
    whole run's rows together (a shift of many rows); name every row or run that cannot be judged (missing, no
    longer ok, unfinished, unreadable, too noisy for the threshold, other mode or provenance)."""
    t = parse_threshold(threshold)
    old_run, new_run = load_run(old), load_run(new)
    allow = {kind for kind, on in (("missing", allow_missing), ("status", allow_status),
                                   ("incomplete", allow_incomplete), ("unreadable", allow_unreadable),
                                   ("mode", allow_mode_mismatch), ("provenance", allow_provenance),
                                   ("noisy", allow_noisy)) if on}
    result = judge(old_run, new_run, t, allow, old_source=old, new_source=new)
    warning = timing_mismatch(old_run, new_run)
    if warning:
        click.echo(warning, err=True)
    kernels = int(result.table["kernel_changed"].sum())
    if as_json:
        click.echo(comparison_json(result, t, warning, kernels))
    else:
        print_comparison(console(), result, f"{old} -> {new} (threshold {t:.1%})", show_all, kernels)
    return 1 if fail_on_regression and result.failed() else 0


@cli.command("ab")
@click.argument("a")
@click.argument("b")
@click.option("--ops", default="all", show_default=True, metavar="all|NAME,...", help="Ops to time.")
@click.option("--dtypes", default="all", show_default=True, metavar="all|f32,f16,bf16,e4m3",
              help="Dtypes to time (all: f32, f16, bf16; e4m3 only when named).")
@click.option("--cases", default="default", show_default=True, metavar="smoke|default|large|edge|models",
              help="Case set of every op.")
@click.option("--shape", "shapes", multiple=True, metavar="SHAPE",
              help="A contiguous case of this shape instead of the case set; repeatable.")
@click.option("--cold/--warm", default=True, show_default=True, help="Flush the device's cache before each sample.")
@click.option("--flush", type=click.Choice(FLUSHES), default="dirty", show_default=True, help="Cold mode's flush.")
@click.option("--time-budget", "time_budget", type=float, default=2.0, show_default=True, metavar="SECONDS",
              help="Sampling time per case, both backends together.")
@click.option("--target-ci", "target_ci", type=float, default=0.0025, show_default=True, metavar="FRACTION",
              help="Stop once both medians' 95% confidence half-widths are below this fraction; 0 samples the whole "
                   "budget.")
@click.option("--min-pairs", "min_pairs", type=int, default=30, show_default=True, metavar="N",
              help=f"Sample pairs every case takes (at most {TimingConfig.max_samples}).")
@click.option("--resamples", type=int, default=2000, show_default=True, metavar="N",
              help="Bootstrap resamples of the speedup's interval (at least 2000).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the inputs and of the bootstrap.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Folder for ab.csv and ab.json (new or empty). [default: results/<UTC timestamp>-<host>-ab/]")
@click.pass_context
def ab_cmd(ctx: click.Context, a: str, b: str, ops: str, dtypes: str, cases: str, shapes: tuple[str, ...],
           cold: bool, flush: str, time_budget: float, target_ci: float, min_pairs: int, resamples: int, seed: int,
           out: Path | None) -> int:
    """Time backends A and B interleaved in this process (sample pairs A,B / B,A on copies of the same inputs):
    per case the speedup (the median of the pairs' A/B) with a bootstrap 95% interval and a verdict of B against A
    (faster / slower / same). A and B may name one backend (a noise check) or one build installed twice.

    \b
    Examples:
      oprt-bench ab nvidia metax --ops softmax --dtypes f32
      oprt-bench ab nvidia nvidia --cases smoke
    """
    from .ab import ab_meta, format_table, run_ab, write_ab
    from .results import check_out_dir, create_run_dir, default_run_dir

    check_seconds("--time-budget", time_budget)
    check_min_samples(min_pairs, "--min-pairs")
    if out is None:
        stamp = default_run_dir()
        out = stamp.with_name(stamp.name + "-ab")
    check_out_dir(out)
    opts = SweepOptions(ops=ops, dtypes=dtypes, cases=cases, shapes=shapes, cold=cold, flush=flush,
                        time_budget_s=time_budget, target_ci=target_ci, min_samples=min_pairs, seed=seed)
    def emit(row: Any) -> None:
        text = f"{row.op} {row.case} {row.dtype}: " + (
            f"speedup {row.speedup:.4f} [{row.ci_low:.4f}, {row.ci_high:.4f}] {row.verdict}" if row.status == "ok"
            else f"{row.status}: {row.message}")
        click.echo(text, err=True)

    rows, entries = run_ab(_registry(ctx), a, b, opts, resamples, emit=emit)
    create_run_dir(out)
    meta = ab_meta(sys.argv, seed, {**vars(opts), "a": a, "b": b, "shapes": list(shapes), "out": str(out)}, entries,
                   resamples)
    write_ab(out, rows, meta)
    click.echo(f"{PROG} ab: A = {a}, B = {b}; speedup = median of the pairs' A / B (above 1: B is faster)")
    click.echo(format_table(rows))
    counts: dict[str, int] = {}
    for r in rows:
        key = r.verdict if r.status == "ok" else r.status
        counts[key] = counts.get(key, 0) + 1
    click.echo(f"{PROG} ab: {len(rows)} cases ({', '.join(f'{n} {k}' for k, n in counts.items()) or 'none'}) "
               f"-> {out}")
    return 1 if any(r.status in ("failed", "error") for r in rows) else 0


@cli.command("report")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="RUN_DIR...")
@click.option("--out", type=click.Path(path_type=Path), default=None, metavar="FILE|FOLDER",
              help="The report: a .html file, or a folder for report.html. [default: the run folder for one run, "
                   "results/merged-<UTC> for several]")
@click.option("--title", default="oprt-bench report", show_default=True)
def report_cmd(runs: tuple[Path, ...], out: Path | None, title: str) -> int:
    """Rebuild report.html from run folders (results.csv, else results.json, and run.json), as the sweep writes
    it; several runs (e.g. from several machines) merge into one comparison. A damaged run (a results.csv line cut
    or malformed, rows of run.json's plan missing, a run that did not finish) is reported with the rows that can be
    read: what is wrong is shown at the top of the report, as its status, and as a warning line on stderr."""
    click.echo(str(rebuild_report(runs, out, title, warn=lambda line: click.echo(f"{PROG}: warning: {line}",
                                                                                 err=True))))
    return 0


@cli.command("merge")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="RUN_DIR...")
@click.option("--out", type=click.Path(path_type=Path), required=True, metavar="FOLDER",
              help="The merged run folder (new or empty).")
@click.option("--on-duplicate", type=click.Choice(ON_DUPLICATE), default="error", show_default=True,
              help="A row (op, case, dtype, backend) in two runs: refuse, keep the first or last run's, or rename "
                   "both runs' backend to backend@host.")
@click.option("--title", default="oprt-bench report", show_default=True)
def merge_cmd(runs: tuple[Path, ...], out: Path, on_duplicate: str, title: str) -> int:
    """Merge runs made separately (e.g. on an H200 host and a MetaX host) into one run folder and one report, with
    each source run's provenance in run.json; compare and report read it as any run."""
    folder, counts = merge_runs(list(runs), out, on_duplicate, sys.argv, title)
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    click.echo(f"{PROG} merge: {sum(counts.values())} rows ({summary or 'none'}) from {len(runs)} runs -> {folder}")
    return 0


@cli.command("worker", context_settings={"ignore_unknown_options": True})
@click.argument("scheduler", required=False, metavar="[SCHEDULER_ADDRESS]")
@click.option("--scheduler-file", "scheduler_file", default=None, metavar="FILE",
              help="The scheduler's address from this file (dask scheduler --scheduler-file) instead.")
@click.option("--backends", default="all", show_default=True, metavar="all|NAME,...",
              help="Backends this worker offers; 'all' = every one available here. A named one must be available.")
@click.option("--name", default=None, help="The worker's name in the cluster. [default: its address]")
@click.option("--availability-timeout", "availability_timeout", type=float, default=AVAILABILITY_TIMEOUT_S,
              show_default=True, metavar="SECONDS", help="A backend whose availability check takes longer is left out.")
@click.argument("dask_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- DASK_WORKER_OPTIONS...]")
@click.pass_context
def worker_cmd(ctx: click.Context, scheduler: str | None, scheduler_file: str | None, backends: str, name: str | None,
               availability_timeout: float, dask_args: tuple[str, ...]) -> int:
    """Join a Dask cluster as a worker for `oprt-bench --cluster` (docs/fleet.md): `dask worker` with one thread,
    advertising each backend available here as the resource oprt-backend-NAME. Pin a GPU with the vendor's
    variable (CUDA_VISIBLE_DEVICES=1 oprt-bench worker ...)."""
    from .fleet import worker_command

    check_seconds("--availability-timeout", availability_timeout)
    argv, env, line = worker_command(_registry(ctx), scheduler, scheduler_file, backends, name, availability_timeout,
                                     list(dask_args))
    click.echo(line, err=True)
    os.execvpe(argv[0], argv, env)
    return 0  # not reached: the process is dask's worker now


@cli.command("table")
@click.argument("run", type=click.Path(path_type=Path), metavar="RUN_DIR")
@click.option("--format", "fmt", type=click.Choice([f for f in TABLE_FORMATS if f != "none"]), default="auto",
              show_default=True, help="auto: rich on a terminal, plain text otherwise.")
def table_cmd(run: Path, fmt: str) -> int:
    """Print a run's results table, as the sweep prints it: per op, one line per case and dtype with every
    backend's time (ms), GB/s, % of peak and speedup (status and error for a --mode test run), failures first, in
    plan order.

    Exit 1 when the run is damaged, with a warning line on stderr for each damage: a results.csv line cut or
    malformed (its row is left out of the table), rows run.json's plan lists that the results lack, a run.json
    status other than complete (interrupted, failed, still running)."""
    loaded = load_run(run)
    check = check_run(loaded, run)
    rows = readable_rows(loaded, check)
    if rows.empty and not check.damaged:
        raise click.ClickException(f"{str(run)!r} has no rows")
    print_table(rows.to_dict("records"), fmt, sys.stdout)
    for line in check.messages():
        click.echo(f"{PROG}: warning: {run}: {line}", err=True)
    return 1 if check.damaged else 0


def main() -> None:
    """Console-script entry point."""
    cli.main(prog_name=PROG)
