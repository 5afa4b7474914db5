"""Progress of a sweep: a rich progress bar on a terminal, one plain line per row otherwise."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, TextIO

__all__ = ["Progress", "make_progress", "format_row"]


def _num(value: Any, fmt: str) -> str | None:
    if value is None or value == "":
        return None
    try:
        return format(float(value), fmt)
    except (TypeError, ValueError):
        return None


def format_row(row: Mapping[str, Any], verbose: bool = False) -> str:
    """``copy 1000 f32 numpy: ok 0.0123 ms (p10 0.012, p90 0.013, n=40) 0.65 GB/s x1.00 [launch-bound]``."""
    text = f"{row['op']} {row['case']} {row['dtype']} {row['backend']}: {row['status']}"
    median = _num(row.get("median_ms"), ".4g")
    if median is not None:
        text += f" {median} ms"
        if verbose:
            text += f" (p10 {_num(row['p10_ms'], '.4g')}, p90 {_num(row['p90_ms'], '.4g')}, n={row['samples']}, " \
                    f"{row.get('stopped_by', '')})"
        gbps = _num(row.get("gbps"), ".4g")
        if gbps is not None:
            text += f" {gbps} GB/s"
        speedup = _num(row.get("speedup"), ".2f")
        if speedup is not None and row["backend"] != row.get("baseline"):
            text += f" x{speedup} vs {row['baseline']}"
        if row.get("flags"):
            text += f" [{row['flags']}]"
    if row.get("message") and row["status"] != "ok":
        msg = str(row["message"])
        text += ": " + (msg if verbose or len(msg) <= 200 else msg[:197] + "...")
    return text


class Progress:
    """Plain lines: ``[i/n] row`` on ``out``; quiet prints nothing per row."""

    def __init__(self, total: int, out: TextIO, quiet: bool = False, verbose: bool = False):
        self.total = total
        self.done = 0
        self.out = out
        self.quiet = quiet
        self.verbose = verbose

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        pass

    def start(self, label: str) -> None:
        pass

    def _say(self, text: str) -> None:
        try:
            print(text, file=self.out, flush=True)
        except BrokenPipeError:  # the reader of the lines went away (| head): the sweep goes on, silently
            self.quiet = True

    def note(self, text: str) -> None:
        if not self.quiet:
            self._say(text)

    def row(self, row: Mapping[str, Any]) -> None:
        self.done += 1
        if not self.quiet:
            self._say(f"[{self.done}/{self.total}] {format_row(row, self.verbose)}")


class RichProgress(Progress):
    """A live bar on the terminal; failed, errored (and with -v, all) rows printed above it."""

    def __init__(self, total: int, out: TextIO, quiet: bool = False, verbose: bool = False):
        super().__init__(total, out, quiet, verbose)
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as Bar

        self.console = Console(file=out)
        self.bar = Bar(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), TimeRemainingColumn(), console=self.console, transient=False)
        self.task = self.bar.add_task("starting", total=total)
        self.bar.start()

    def close(self) -> None:
        self.bar.stop()

    def start(self, label: str) -> None:
        self.bar.update(self.task, description=label)

    def note(self, text: str) -> None:
        if not self.quiet:
            self.console.print(text, markup=False, highlight=False)

    def row(self, row: Mapping[str, Any]) -> None:
        self.done += 1
        self.bar.advance(self.task)
        if self.verbose or row["status"] in ("failed", "error", "skipped"):
            style = {"failed": "red", "error": "red", "unsupported": "yellow", "skipped": "yellow"}.get(row["status"])
            self.console.print(format_row(row, self.verbose), style=style, markup=False, highlight=False)


def make_progress(total: int, quiet: bool, verbose: bool, out: TextIO | None = None) -> Progress:
    """A rich bar when ``out`` (stderr by default) is a terminal and not quiet, else plain lines on stdout."""
    err = out or sys.stderr
    if not quiet and err.isatty():
        return RichProgress(total, err, quiet, verbose)
    return Progress(total, sys.stdout if out is None else out, quiet, verbose)
