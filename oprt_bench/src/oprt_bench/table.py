"""The results table: a run's rows per op, one line per (case, dtype), every backend's figures side by side.

Built once as plain data (:func:`build_table`), then written as rich tables fitted to a width, as aligned plain
text, as markdown pipe tables or as one wide CSV (:func:`render`). A timed run shows each backend's median time
(ms, as results.csv and compare have it), GB/s, % of peak and speedup over the baseline; a ``--mode test`` run
each backend's status and max relative error. Failed and errored rows come first: a failures table with their
messages above the op tables, and within an op the lines where some backend failed before the others.

Rows that compute (arithmetic intensity of at least :data:`COMPUTE_INTENSITY` flop per byte moved: matmul, not
the memory-bound ops, which do at most ~2) also show TFLOP/s, beside GB/s, and their % of peak is of the compute
peak: the spec dense TFLOP/s of the row's dtype (``pct_of_compute``), not of the memory peak.

Narrow widths drop whole column kinds, least telling first (% of peak, then GB/s, then speedup; max rel err in
a test run; the compile time, shown only for a backend that compiles at prepare, before all of them), until
every op table fits; what still does not fit wraps inside its cells.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from .peaks import COMPUTE_INTENSITY, computes
from .peaks import finite_float as _float

if TYPE_CHECKING:  # rich is imported where it is used: `oprt-bench --help` stays quick
    from rich.console import Console, RenderableType
    from rich.table import Table

__all__ = ["TABLE_FORMATS", "COMPUTE_INTENSITY", "Column", "Line", "ResultsTable", "build_table", "renderables",
           "render", "print_table", "choose_format", "stream_width"]

TABLE_FORMATS = ("auto", "rich", "plain", "markdown", "csv", "none")
BAD = ("failed", "error")
MESSAGE_CHARS = 200  # a message longer than this is cut in the terminal views (results.csv has it whole)


@dataclass(frozen=True)
class Column:
    """One figure of one backend: ``key`` names it in a line's cell, ``drop`` is the narrowing step that
    drops it (0: never)."""

    backend: str
    key: str
    label: str
    drop: int
    csv_name: str


@dataclass
class Line:
    """One (case, dtype) of an op: each backend's row (as normalized: numbers float/NaN, text str)."""

    case: str
    dtype: str
    cells: dict[str, Mapping[str, Any]]

    @property
    def failing(self) -> bool:
        return any(str(r.get("status")) in BAD for r in self.cells.values())


@dataclass
class ResultsTable:
    """Every op's lines (failing lines first), the columns each op table has, the failed and errored rows."""

    backends: list[str]
    baseline: str
    timed: bool
    columns: list[Column]
    ops: dict[str, list[Line]] = field(default_factory=dict)
    failures: list[Mapping[str, Any]] = field(default_factory=list)

    @property
    def max_drop(self) -> int:
        return max((c.drop for c in self.columns), default=0)

    def shown(self, drop: int = 0) -> list[Column]:
        """The columns left once every column kind whose narrowing step is ``drop`` or below is dropped (the
        baseline's own speedup, always 1, and columns no line fills never show)."""
        return [c for c in self.columns if (c.drop == 0 or c.drop > drop) and self._filled(c)]

    def _filled(self, col: Column) -> bool:
        return any(cell_text(line.cells.get(col.backend), col.key) not in ("", "-")
                   for lines in self.ops.values() for line in lines)


def _num(v: float | None) -> str:
    """Three significant figures or more, never an exponent for the sizes a benchmark sees (0.012, 4.56, 123, 45678)."""
    if v is None:
        return ""
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def cell_text(row: Mapping[str, Any] | None, key: str) -> str:
    """A cell as shown: a timed row's status stands in its time column when it is not ok."""
    if row is None:
        return ""
    status = str(row.get("status") or "")
    if key == "status":
        return status
    if key == "median_ms":
        ms = _float(row.get("median_ms"))
        return _num(ms) if status == "ok" and ms is not None else status
    if key == "tflops" and not _computes(row):
        return ""
    v = _float(row.get(key))
    if key == "max_rel_err":  # a failed row's error says how far off it is
        return "" if v is None else f"{v:.2e}"
    if status != "ok":
        return ""
    if key == "pct_of_peak":
        if _computes(row):  # held to the compute roof: the memory % says little of a GEMM
            v = _float(row.get("pct_of_compute"))
        return "" if v is None else f"{v:.1f}"
    if key == "speedup":
        return "" if v is None else f"{v:.2f}"
    return _num(v)


def _computes(row: Mapping[str, Any]) -> bool:
    """Whether a row's flops per byte moved reach :data:`COMPUTE_INTENSITY` (its TFLOP/s is then shown)."""
    return computes(row.get("flops"), row.get("bytes"))


def _value(row: Mapping[str, Any] | None, key: str) -> Any:
    """A cell as the CSV has it: numbers unrounded, empty where there is none."""
    if row is None:
        return ""
    if key in ("status", "message"):
        return str(row.get(key) or "")
    v = _float(row.get(key))
    return "" if v is None else v


def build_table(rows: Iterable[Mapping[Any, Any]]) -> ResultsTable:
    """The table of a run's rows (results.csv's columns; numbers as numbers or text, empty as None, "" or NaN).
    Ops, cases, dtypes and backends keep the order of the rows (a sweep's: the baseline backend first)."""
    rows = list(rows)
    backends = list(dict.fromkeys(str(r.get("backend")) for r in rows))
    baseline = next((str(r["baseline"]) for r in rows if r.get("baseline")), "")
    timed = any(_float(r.get("median_ms")) is not None for r in rows) or any(
        str(r.get("mode") or "") not in ("", "test") for r in rows)
    columns: list[Column] = []
    for b in backends:
        if timed:
            columns += [Column(b, "median_ms", "ms", 0, "median_ms"), Column(b, "gbps", "GB/s", 2, "gbps"),
                        Column(b, "tflops", "TFLOP/s", 2, "tflops"),
                        Column(b, "pct_of_peak", "% peak", 1, "pct_of_peak")]
            if baseline and b != baseline:
                columns.append(Column(b, "speedup", "speedup", 3, "speedup"))
        else:
            columns += [Column(b, "status", "status", 0, "status"), Column(b, "max_rel_err", "max rel err", 1,
                                                                            "max_rel_err")]
        # shown only where a backend compiles at prepare (torch-compile), dropped first when narrowing
        columns.append(Column(b, "compile_s", "compile s", 4, "compile_s"))
    table = ResultsTable(backends, baseline, timed, columns)
    lines: dict[tuple[str, str, str], Line] = {}
    for r in rows:
        op, case, dtype = str(r.get("op")), str(r.get("case")), str(r.get("dtype"))
        line = lines.get((op, case, dtype))
        if line is None:
            line = lines[(op, case, dtype)] = Line(case, dtype, {})
            table.ops.setdefault(op, []).append(line)
        line.cells[str(r.get("backend"))] = r
        if str(r.get("status")) in BAD:
            table.failures.append(r)
    for op, op_lines in table.ops.items():
        table.ops[op] = [ln for ln in op_lines if ln.failing] + [ln for ln in op_lines if not ln.failing]
    return table


def _short(message: Any) -> str:
    text = " ".join(str(message or "").split())
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS - 3] + "..."


def legend(table: ResultsTable) -> str:
    compiled = "; compile s = seconds its prepare spent compiling the case" if any(
        c.key == "compile_s" for c in table.shown()) else ""
    if not table.timed:
        return f"correctness only (--mode test): each backend's status and max relative error{compiled}"
    speed = f"; speedup = {table.baseline}'s median / the backend's (> 1: faster)" if table.baseline else ""
    tflops = (f", TFLOP/s (10^12 flop/s) where a row does >= {COMPUTE_INTENSITY:g} flop per byte"
              if any(c.key == "tflops" for c in table.shown()) else "")
    of_compute = (" (of the spec dense peak of the row's dtype where it shows TFLOP/s)"
                  if any(c.key == "tflops" for c in table.shown()) else "")
    return f"median time in ms, GB/s{tflops}, % of the backend's calibrated peak{of_compute}{speed}{compiled}"


# -- rich and plain ------------------------------------------------------------------------------

_STYLES = {"failed": "red", "error": "red", "unsupported": "yellow", "skipped": "yellow"}


def _box(plain: bool) -> Any:
    from rich.box import SIMPLE_HEAD, Box

    # plain: rich's SIMPLE box in ASCII, a rule of dashes under the header and nothing else
    return Box("    \n    \n -- \n    \n    \n -- \n    \n    \n", ascii=True) if plain else SIMPLE_HEAD


def _op_table(op: str, lines: Sequence[Line], columns: Sequence[Column], plain: bool) -> Table:
    from rich.table import Table

    t = Table(title=op, title_justify="left", title_style=None if plain else "bold", box=_box(plain),
              show_edge=not plain, header_style=None if plain else "bold")
    t.add_column("case", overflow="fold")
    t.add_column("dtype", no_wrap=True)
    first = {c.backend: c for c in reversed(columns)}  # the backend's first shown column carries its name
    for c in columns:
        head = f"{c.backend}\n{c.label}" if first[c.backend] is c else f"\n{c.label}"
        t.add_column(head, justify="right", no_wrap=True, overflow="ellipsis")
    for line in lines:
        cells: list[Any] = [line.case, line.dtype]
        for c in columns:
            row = line.cells.get(c.backend)
            text = cell_text(row, c.key)
            status = str(row.get("status")) if row is not None else ""
            style = _STYLES.get(status) if not plain and text == status else None
            if not plain and c.key == "speedup" and text:
                v = float(text)
                style = "green" if v > 1.05 else "red" if v < 0.95 else None
            cells.append(text if style is None else _styled(text, style))
        t.add_row(*cells)
    return t


def _styled(text: str, style: str) -> Any:
    from rich.text import Text

    return Text(text, style=style)


def _failures_table(table: ResultsTable, plain: bool) -> Table:
    from rich.table import Table

    t = Table(title=f"failures and errors ({len(table.failures)})", title_justify="left",
              title_style=None if plain else "bold red", box=_box(plain), show_edge=not plain,
              header_style=None if plain else "bold")
    for col in ("op", "case", "dtype", "backend", "status"):
        t.add_column(col, no_wrap=col in ("dtype", "status"), overflow="fold")
    t.add_column("message", overflow="fold", ratio=1)
    for r in table.failures:
        t.add_row(str(r.get("op")), str(r.get("case")), str(r.get("dtype")), str(r.get("backend")),
                  _styled(str(r.get("status")), "red") if not plain else str(r.get("status")),
                  _short(r.get("message")))
    return t


def fit_drop(table: ResultsTable, console: Console, plain: bool = False) -> int:
    """The fewest narrowing steps after which every op table's natural width fits ``console``'s width (the last
    step when none does)."""
    from rich.console import Console as RichConsole

    probe = RichConsole(width=100_000, file=io.StringIO(), color_system=None)
    for drop in range(table.max_drop + 1):
        cols = table.shown(drop)
        if all(probe.measure(_op_table(op, lines, cols, plain)).maximum <= console.width
               for op, lines in table.ops.items()):
            return drop
    return table.max_drop


def renderables(table: ResultsTable, console: Console, plain: bool = False) -> list[RenderableType]:
    """The legend, the failures table (when a row failed) and one table per op, fitted to ``console``."""
    cols = table.shown(fit_drop(table, console, plain))
    from rich.text import Text

    out: list[RenderableType] = [Text(legend(table), style="" if plain else "dim")]
    if table.failures:
        out.append(_failures_table(table, plain))
    out += [_op_table(op, lines, cols, plain) for op, lines in table.ops.items()]
    return out


def _plain(table: ResultsTable, width: int | None) -> str:
    from rich.console import Console as RichConsole

    buf = io.StringIO()
    con = RichConsole(file=buf, width=width or 100_000, color_system=None, highlight=False, emoji=False,
                      markup=False, force_terminal=False, soft_wrap=False)
    for i, part in enumerate(renderables(table, con, plain=True)):
        if i:
            con.print()
        con.print(part, markup=False)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


# -- markdown and csv ---------------------------------------------------------------------------

def _md(text: Any) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|")


def _markdown(table: ResultsTable) -> str:
    cols = table.shown(0)
    out = [f"_{legend(table)}_", ""]
    if table.failures:
        out += [f"### failures and errors ({len(table.failures)})", "",
                "| op | case | dtype | backend | status | message |", "| --- | --- | --- | --- | --- | --- |"]
        out += ["| " + " | ".join(_md(v) for v in (r.get("op"), r.get("case"), r.get("dtype"), r.get("backend"),
                                                     r.get("status"), _short(r.get("message")))) + " |"
                for r in table.failures]
        out.append("")
    for op, lines in table.ops.items():
        out += [f"### {_md(op)}", "", "| case | dtype | " + " | ".join(f"{_md(c.backend)} {c.label}" for c in cols)
                + " |", "| --- | --- | " + " | ".join("---:" for _ in cols) + " |"]
        out += ["| " + " | ".join([_md(ln.case), _md(ln.dtype)]
                                  + [_md(cell_text(ln.cells.get(c.backend), c.key)) for c in cols]) + " |"
                for ln in lines]
        out.append("")
    return "\n".join(out)


def _csv(table: ResultsTable) -> str:
    """The wide table: op, case, dtype, then per backend its status, figures (unrounded) and message; every column
    of every backend, filled or not, so the header depends only on the backends and the mode."""
    keys = (["status", "median_ms", "gbps", "pct_of_peak", "tflops", "pct_of_compute", "speedup"] if table.timed
            else ["status", "max_rel_err"])
    keys.append("message")
    header = ["op", "case", "dtype"] + [f"{b}_{k}" for b in table.backends for k in keys]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for op, lines in table.ops.items():
        for ln in lines:
            w.writerow([op, ln.case, ln.dtype] + [_value(ln.cells.get(b), k) for b in table.backends for k in keys])
    return buf.getvalue()


# -- choosing and printing ------------------------------------------------------------------------

def render(table: ResultsTable, fmt: str, width: int | None = None) -> str:
    """The table as text: ``plain`` (fitted to ``width`` when given), ``markdown`` or ``csv``."""
    if fmt == "plain":
        return _plain(table, width)
    if fmt == "markdown":
        return _markdown(table)
    if fmt == "csv":
        return _csv(table)
    raise ValueError(f"no text rendering {fmt!r}; valid choices: plain, markdown, csv")


def stream_width(stream: TextIO) -> int | None:
    """The width to fit: $COLUMNS when set, else the terminal's when ``stream`` is one, else none (no limit)."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return os.get_terminal_size(stream.fileno()).columns if stream.isatty() else None
    except (AttributeError, OSError, ValueError):
        return None


def choose_format(fmt: str, stream: TextIO) -> str:
    """``auto``: rich on a terminal, plain text otherwise; any other format as given."""
    if fmt != "auto":
        return fmt
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return "rich" if tty else "plain"


def print_table(rows: Iterable[Mapping[Any, Any]], fmt: str, stream: TextIO, width: int | None = None) -> None:
    """Write the table of ``rows`` to ``stream`` as ``fmt`` (one of TABLE_FORMATS; ``auto``: see
    :func:`choose_format`); ``width`` defaults to :func:`stream_width`. Nothing for ``none`` or no rows."""
    fmt = choose_format(fmt, stream)
    table = build_table(rows)
    if fmt == "none" or not table.ops:
        return
    width = width if width is not None else stream_width(stream)
    if fmt == "rich":
        from rich.console import Console as RichConsole

        con = RichConsole(file=stream, width=width, highlight=False)
        for part in renderables(table, con):
            con.print(part, markup=False)
        return
    stream.write(render(table, fmt, width))
    stream.flush()
