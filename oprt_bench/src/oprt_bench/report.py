"""The HTML report: one self-contained file (inline CSS, SVG and a short script; nothing fetched).

Sections: environment (per run: host, versions, git commit, options; per backend: device,
measured and spec peak, timer floor), a status summary, the legend of row flags, a roofline chart
(achieved GFLOP/s against arithmetic intensity, every op that computes, under each backend's memory
roofs, and its compute roofs where run.json records the device's spec peak FLOP/s), per op a table with
the backends side by side (median, p10-p90, GB/s, % of the measured and
of the spec peak, speedup against the baseline, CI, samples, max error, flag markers) and a bandwidth
plot (achieved GB/s against bytes moved, a panel per dtype, a colour per backend, a line only along
the sizes of one case family, each point titled for hover; an op that computes, matmul, achieved TFLOP/s
against flops instead) and, where a baseline gave speedups, a
speedup-distribution plot (each backend's speedups against the baseline across the op's cases, a strip per
backend, its median marked; graph-timed rows marked G in the table), then failures and errors with their
messages, and unsupported cases; with GPU telemetry or ncu profiles, clock-drop markers, a clock-drop count in
the summary and a GPU section (:mod:`oprt_bench.report_gpu`). Every table sorts by a click on a column header
and filters by the text box above it. Several runs (e.g. from several machines) merge into one report: their
backends then read ``backend@host``.
"""

from __future__ import annotations

import html
import io
import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported where rows are built: `oprt-bench --help` stays quick
    import pandas as pd

from .flags import FLAGS, split_flags
from .integrity import plan_order
from .peaks import computes, measured_compute_peaks
from .report_gpu import GPU_CSS, cell_marker, cell_ncu, cell_note, clock_drops, gpu_section
from .results import STATUSES, Run, utc_now, write_text_atomic

__all__ = ["render_report", "write_report", "label_rows", "backend_peaks", "backend_compute_peaks", "case_family",
           "joinable", "Series", "bandwidth_series", "computing_op", "roofline_points", "speedup_points"]

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em;color:#222;max-width:110em}
h1{font-size:1.5em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ccc}h3{font-size:1.05em}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:.85em}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:right;vertical-align:top}
th{background:#f3f3f3}td.l,th.l{text-align:left}
td.ok{}td.failed,td.error{background:#fde2e2;color:#8a1c1c}td.unsupported{background:#f6f1dc;color:#6b5a12}
td.faster{color:#116611;font-weight:bold}td.slower{color:#a31515}
small{color:#666}.plot svg{max-width:100%;height:auto}code{font-size:.9em}
small.kernel{display:block;font-family:ui-monospace,monospace;font-size:.75em;color:#555;text-align:left}
.flag{display:inline-block;font-size:.75em;font-weight:bold;padding:0 .25em;margin-left:.25em;border-radius:.2em;
color:#fff;background:#8a5a00;vertical-align:super}.flag-launch-bound{background:#6b4fa0}
.flag-fits-in-l2{background:#1f6f8b}.timer-graph{background:#2e7d32}.timer-events{background:#777}.flag-above-peak{background:#b0281c}td.flagged{background:#fff7e0}
dl.legend{display:grid;grid-template-columns:max-content auto;gap:.2em 1em;font-size:.85em}
dl.env{display:grid;grid-template-columns:max-content auto;gap:.1em 1em;font-size:.85em}dl.env dt{font-weight:bold}
th.sort{cursor:pointer}th[data-dir=asc]::after{content:" \\25B2"}th[data-dir=desc]::after{content:" \\25BC"}
table.op{display:block;overflow-x:auto;max-width:100%}
input.filter{display:block;margin:.6em 0 0;font-size:.85em;width:22em}
div.damaged{border:2px solid #a31515;background:#fde2e2;color:#8a1c1c;padding:.4em 1em;margin:1em 0}
dd.damaged{color:#a31515;font-weight:bold}
"""

_e = html.escape


def _fmt(value: Any, spec: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return ""
    try:
        return format(float(value), spec)
    except (TypeError, ValueError):
        return _e(str(value))


def _fmt_gbps(value: Any) -> str:
    """Bandwidth without scientific notation: 3220, 41.8, 0.265."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return _fmt(value, ".3g")
    return _fmt(v, ".0f" if abs(v) >= 100 else ".3g")


def _run_names(runs: Sequence[Run]) -> list[str]:
    names = [r.label for r in runs]
    return [n if names.count(n) == 1 else f"{n}#{i + 1}" for i, n in enumerate(names)]


def _label(backend: str, name: str, n_runs: int) -> str:
    return backend if n_runs == 1 else f"{backend}@{name}"


def label_rows(runs: Sequence[Run]) -> pd.DataFrame:
    """All runs' rows in one frame with a ``label`` column: the backend, or ``backend@run`` when merging."""
    import pandas as pd

    frames = []
    for run, name in zip(runs, _run_names(runs)):
        rows = run.rows.iloc[plan_order(run.rows.to_dict("records"), run.meta)].copy()  # as planned, not as done
        rows["label"] = rows["backend"] if len(runs) == 1 else rows["backend"] + "@" + name
        rows["run"] = name
        frames.append(rows)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def backend_peaks(runs: Sequence[Run]) -> dict[str, tuple[float | None, float | None]]:
    """label -> (measured peak, spec peak) in GB/s from each run's run.json (None where unknown)."""
    out: dict[str, tuple[float | None, float | None]] = {}
    for run, name in zip(runs, _run_names(runs)):
        for backend, b in ((run.meta or {}).get("backends") or {}).items():
            cal = b.get("calibration") or {}
            measured = cal.get("measured_peak_gbps")
            if measured is None and (b.get("peak") or {}).get("source") == "measured":
                measured = (b.get("peak") or {}).get("gbps")
            spec = cal.get("spec_peak_gbps", (b.get("spec_peak") or {}).get("gbps"))
            out[_label(backend, name, len(runs))] = (_float(measured), _float(spec))
    return out


def backend_compute_peaks(runs: Sequence[Run]) -> dict[str, dict[str, float]]:
    """label -> {dtype: spec dense peak TFLOP/s} from each run's run.json (``compute_peak``, written where the
    device is in :data:`oprt_bench.peaks.COMPUTE_PEAKS`); a backend without one is left out."""
    out: dict[str, dict[str, float]] = {}
    for run, name in zip(runs, _run_names(runs)):
        for backend, b in ((run.meta or {}).get("backends") or {}).items():
            peaks = {str(d): t for d, v in (b.get("compute_peak") or {}).items()
                     if isinstance(v, dict) and (t := _float(v.get("tflops"))) is not None}
            if peaks:
                out[_label(backend, name, len(runs))] = peaks
    return out


def _float(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def _markers(flags: Any) -> str:
    """The HTML markers of a row's flags (a badge per flag, its meaning as the tooltip)."""
    out = []
    for flag in split_flags(flags):
        short, meaning = FLAGS.get(flag, (flag, flag))
        out.append(f"<span class='flag flag-{_e(flag)}' title='{_e(flag)}: {_e(meaning)}'>{_e(short)}</span>")
    return "".join(out)


def _timer_mark(r: Any) -> str:
    """A badge for a row the run asked to time with CUDA graphs: G (graph-timed: its rotation, and the events'
    median of a launch-bound row, in the tooltip) or E (fell back to events: why); '' for an events run's row."""
    timer, note = str(getattr(r, "timer", "") or ""), str(getattr(r, "timer_note", "") or "")
    if timer == "graph":
        events = getattr(r, "event_median_ms", None)
        extra = f"; events median {_fmt(events, '.4g')} ms" if events == events and events is not None else ""
        return f"<span class='flag timer-graph' title='{_e(note + extra)}'>G</span>"
    if note:
        return f"<span class='flag timer-events' title='{_e(note)}'>E</span>"
    return ""


def _legend_section(rows: pd.DataFrame) -> str:
    """What the flag markers mean, with how many rows carry each."""
    counts = {f: int(rows["flags"].map(lambda v, f=f: f in split_flags(v)).sum()) for f in FLAGS}
    out = ["<h2 id='flags'>Row flags</h2><p><small>Markers next to a row's median; the CSV's <code>flags</code> "
           "column holds the names. Calibration (run.json <code>backends.*.calibration</code> and "
           "<code>timer</code>) gives the measured peak and the timer floor they are judged against.</small></p>"
           "<dl class='legend'>"]
    for flag, (short, meaning) in FLAGS.items():
        out.append(f"<dt><span class='flag flag-{_e(flag)}'>{_e(short)}</span> <code>{_e(flag)}</code> "
                   f"({counts[flag]} row{'s' if counts[flag] != 1 else ''})</dt><dd>{_e(meaning)}</dd>")
    graph = int((rows["timer"] == "graph").sum()) if "timer" in rows else 0
    fallback = int(((rows["timer"] == "events") & (rows["timer_note"] != "")).sum()) if "timer_note" in rows else 0
    if graph or fallback:
        out.append(f"<dt><span class='flag timer-graph'>G</span> <code>timer=graph</code> ({graph} rows)</dt>"
                   "<dd>timed by CUDA-graph replay (--timing graph): one replay per sample, buffers rotated past 2x "
                   "L2; the tooltip gives the rotation and, for a launch-bound row, the events' median</dd>"
                   f"<dt><span class='flag timer-events'>E</span> <code>timer=events</code> ({fallback} rows)</dt>"
                   "<dd>asked for graph timing, timed with events: the tooltip says why</dd>")
    out.append("</dl>")
    return "\n".join(out)


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    # no RDF metadata block: a date would make reports differ run to run for nothing
    fig.savefig(buf, format="svg", bbox_inches="tight",
                metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


# Points of one series closer than this in bytes are different shapes of about one size (softmax's 65536x128 and
# 128x65536, reduce_sum's 4096x4096 and 16384x1024): a line between them would read as a trend along size.
_JOIN_MIN_RATIO = 1.05
_DTYPE_ORDER = ("f32", "f16", "bf16")
_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "<", ">", "*", "h", "p")
_STYLES: tuple[Any, ...] = ("-", "--", ":", "-.")


def case_family(case: str, shape: str) -> str:
    """The case's name with each input's extents written ``N`` (``4096x4096-transposed`` -> ``NxN-transposed``,
    ``4096x4096+4096`` -> ``NxN+N``, ``16777216`` -> ``N``): cases of one family differ only in size."""
    family = str(case)
    for extents in str(shape).split(","):
        if extents:
            pattern = "S" if extents == "scalar" else "x".join("N" for _ in extents.split("x"))
            family = re.sub(rf"(?<![0-9x]){re.escape(extents)}(?![0-9x])", pattern, family, count=1)
    return family


@dataclass(frozen=True)
class Series:
    """One plotted series: the points of one backend, dtype and case family, sorted by x; ``joined`` when a
    line may connect them (every x at least ``_JOIN_MIN_RATIO`` from the next), else markers only."""

    label: str
    dtype: str
    family: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    titles: tuple[str, ...]
    flagged: tuple[bool, ...]
    joined: bool


def joinable(xs: Sequence[float]) -> bool:
    """True when a line through these x values (sorted) joins sizes, not shapes of about one size."""
    ordered = sorted(xs)
    return len(ordered) > 1 and all(b >= a * _JOIN_MIN_RATIO for a, b in zip(ordered, ordered[1:]))


def _point_title(r: Any, extra: str = "") -> str:
    flags = "; flags " + ", ".join(split_flags(r.flags)) if split_flags(r.flags) else ""
    return (f"{r.op} {r.case} ({r.shape}) {r.dtype} on {r.label}: median {_fmt(r.median_ms, '.4g')} ms, "
            f"{_fmt_gbps(r.gbps)} GB/s, {int(r.bytes)} bytes{extra}{flags}")


def computing_op(rows: pd.DataFrame) -> bool:
    """Whether an op's timed rows compute (a row of at least COMPUTE_INTENSITY flop per byte: matmul): its chart
    is then TFLOP/s against flops, not GB/s against bytes."""
    timed = rows[rows["status"] == "ok"]
    return any(computes(f, b) for f, b in zip(timed["flops"], timed["bytes"]))


def _with_tflops(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with tflops filled from flops and the median where the file has none (an older results.csv)."""
    return rows.assign(tflops=rows["tflops"].fillna(rows["flops"] / (rows["median_ms"] * 1e9)))


def bandwidth_series(rows: pd.DataFrame, compute: bool = False) -> list[Series]:
    """The bandwidth plot's series of one op's rows: timed rows grouped by (backend, dtype, case family);
    ``compute``: the compute plot's, TFLOP/s against flops per call."""
    x_col, y_col = ("flops", "tflops") if compute else ("bytes", "gbps")
    if compute:
        rows = _with_tflops(rows)
    timed = rows[(rows["status"] == "ok") & rows[y_col].notna() & (rows[x_col] > 0)]
    out = []
    groups: dict[tuple[str, str, str], list[Any]] = {}
    family_of = {(str(r.case), str(r.shape)): case_family(str(r.case), str(r.shape)) for r in timed.itertuples()}
    # a family whose cases differ in params the name does not spell (a plugin's) splits by params
    params_of: dict[str, set[str]] = {}
    for r in timed.itertuples(index=False):
        params_of.setdefault(family_of[(str(r.case), str(r.shape))], set()).add(str(r.params))
    for r in timed.itertuples(index=False):
        fam = family_of[(str(r.case), str(r.shape))]
        fam += f" {r.params}" if len(params_of[fam]) > 1 else ""
        groups.setdefault((str(r.label), str(r.dtype), fam), []).append(r)
    for (label, dtype, family), members in groups.items():
        members.sort(key=lambda r: (getattr(r, x_col), str(r.case)))
        xs = tuple(float(getattr(r, x_col)) for r in members)
        extra = (lambda r: f", {float(r.tflops):.4g} TFLOP/s, {int(r.flops)} flops") if compute else (lambda r: "")
        out.append(Series(label, dtype, family, xs, tuple(float(getattr(r, y_col)) for r in members),
                          tuple(_point_title(r, extra(r)) for r in members),
                          tuple(bool(split_flags(r.flags)) for r in members), joinable(xs)))
    return out


def _titled_svg(fig: Any, titles: dict[str, str]) -> str:
    """The figure's SVG with a <title> (the hover label) first in the group of each artist whose gid is a key."""
    text = _svg(fig)
    for gid, title in titles.items():
        tag = f'<g id="{gid}">'
        if tag not in text:
            raise RuntimeError(f"report: the SVG lost the group of point {gid!r}")
        text = text.replace(tag, f"{tag}<title>{_e(title)}</title>", 1)
    return text


def _peak_lines(ax: Any, label: str, color: Any, peaks: dict[str, tuple[float | None, float | None]]) -> None:
    measured, spec = peaks.get(label, (None, None))
    if measured:
        ax.axhline(measured, color=color, linestyle="-", linewidth=1.2, alpha=0.7)
    if spec:
        ax.axhline(spec, color=color, linestyle=(0, (5, 3)), linewidth=1.0, alpha=0.7)


def _bytes_label(value: float, _pos: Any = None) -> str:
    """A tick of the bytes axis in binary units: 512 B, 4 KiB, 64 MiB, 1 GiB."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.3g} B"


def _flops_label(value: float, _pos: Any = None) -> str:
    """A tick of the flops axis in decimal units: 950 flop, 2.1 Mflop, 34.4 Gflop."""
    for unit, size in (("Tflop", 1e12), ("Gflop", 1e9), ("Mflop", 1e6), ("kflop", 1e3)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.3g} flop"


def _bytes_axis(ax: Any, xs: Sequence[float], label: Any = _bytes_label, base: int = 2) -> None:
    """A log x axis labelled in binary units (``label``: another unit, with ``base`` its powers): at the plotted
    sizes (those at least 1.5x apart) where they are few, else at powers of ``base``; no minor labels."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log", base=base)
    ticks: list[float] = []
    for x in sorted(set(xs)):
        if not ticks or x >= ticks[-1] * 1.5:
            ticks.append(x)
    ax.xaxis.set_major_locator(FixedLocator(ticks) if len(ticks) <= 6 else LogLocator(base=base, numticks=7))
    ax.xaxis.set_major_formatter(FuncFormatter(label))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.tick_params(axis="x", labelsize="x-small")


def _bandwidth_plot(op: str, rows: pd.DataFrame, index: int,
                    peaks: dict[str, tuple[float | None, float | None]] | None = None,
                    compute: dict[str, dict[str, float]] | None = None) -> str:
    """One op's achieved GB/s against bytes moved per call (log x), a panel per dtype: a colour per backend,
    a marker (and line style) per case family, a line only along sizes of one family (never between shapes of
    about one size), each backend's measured peak solid and spec peak dashed, flagged rows ringed; every point
    titled (case, shape, dtype, backend, time, GB/s) for hover; '' when nothing was timed. An op that computes
    (:func:`computing_op`: matmul) gets achieved TFLOP/s against flops per call instead, each backend's spec dense
    peak of the panel's dtype (``compute``: label -> {dtype: TFLOP/s}) dashed. The legend lists only the peak
    lines drawn."""
    computing = computing_op(rows)
    series = bandwidth_series(rows, compute=computing)
    if not series:
        return ""
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    peaks = peaks or {}
    dtypes = sorted({s.dtype for s in series}, key=lambda d: (_DTYPE_ORDER + (d,)).index(d))
    labels = list(dict.fromkeys(s.label for s in series))
    families = list(dict.fromkeys(s.family for s in series))
    colors = matplotlib.colormaps["tab10"]
    color_of = {lab: colors(i % 10) for i, lab in enumerate(labels)}
    marker_of = {f: _MARKERS[i % len(_MARKERS)] for i, f in enumerate(families)}
    style_of = {f: _STYLES[i % len(_STYLES)] for i, f in enumerate(families)}
    titles: dict[str, str] = {}
    # a distinct salt per figure keeps the ids of inlined SVGs from colliding in one page
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": f"oprt-{op}-{index}"}):
        fig = Figure(figsize=(3.4 * len(dtypes) + 0.6, 3.6))
        axes = fig.subplots(1, len(dtypes), sharey=True, squeeze=False)[0]
        fig.subplots_adjust(left=0.07, right=0.97, wspace=0.08)
        drawn: set[str] = set()  # the kinds of peak line drawn: the legend lists these only
        for ax, dtype in zip(axes, dtypes):
            for label in labels:
                if computing:  # the peak of each roof dtype of the panel's rows (tf32 for f32 with allow_tf32)
                    for roof in _roof_dtypes(rows[rows["dtype"] == dtype], label):
                        tflops = (compute or {}).get(label, {}).get(roof)
                        if tflops:
                            ax.axhline(tflops, color=color_of[label], linestyle=(0, (5, 3)), linewidth=1.0,
                                       alpha=0.7)
                            drawn.add("spec")
                    continue
                measured, spec = peaks.get(label, (None, None))
                drawn.update(k for k, v in (("measured", measured), ("spec", spec)) if v)
                _peak_lines(ax, label, color_of[label], peaks)
            for s in (s for s in series if s.dtype == dtype):
                color = color_of[s.label]
                if s.joined:
                    ax.plot(s.xs, s.ys, color=color, linestyle=style_of[s.family], linewidth=1.2)
                for x, y, title, flagged in zip(s.xs, s.ys, s.titles, s.flagged):
                    gid = f"oprt-pt-{index}-{len(titles)}"
                    titles[gid] = title
                    ax.plot([x], [y], marker=marker_of[s.family], color=color, linestyle="none", markersize=5,
                            markeredgecolor="#b0281c" if flagged else color, markeredgewidth=1.6 if flagged else 1.0,
                            gid=gid)
            xs = [x for s in series if s.dtype == dtype for x in s.xs]
            if computing:
                _bytes_axis(ax, xs, _flops_label, 10)
            else:
                _bytes_axis(ax, xs)
            ax.set_ylim(bottom=0)
            ax.set_title(dtype, fontsize="medium")
            ax.set_xlabel("flops per call" if computing else "bytes moved per call (B)")
            ax.grid(True, which="both", alpha=0.3)
        axes[0].set_ylabel("achieved TFLOP/s (10^12 flop/s)" if computing else "achieved bandwidth (GB/s, 10^9 B/s)")
        handles = [Line2D([], [], color=color_of[lab], linewidth=2, label=lab) for lab in labels]
        handles += [Line2D([], [], color="#555", marker=marker_of[f], linestyle=style_of[f], label=f"case {f}")
                    for f in families]
        if "measured" in drawn:
            handles.append(Line2D([], [], color="#555", linestyle="-", label="measured peak (backend colour)"))
        if "spec" in drawn:
            handles.append(Line2D([], [], color="#555", linestyle=(0, (5, 3)),
                                  label=("spec dense peak" if computing else "spec peak") + " (backend colour)"))
        if any(any(s.flagged) for s in series):
            handles.append(Line2D([], [], color="#fff", marker="o", markeredgecolor="#b0281c", linestyle="none",
                                  label="flagged row (see the flags legend)"))
        what = "TFLOP/s against flops" if computing else "GB/s against bytes moved"
        fig.suptitle(f"{op}: achieved {what} per call (a panel per dtype; hover a point)", fontsize="medium")
        fig.legend(handles=handles, fontsize="x-small", loc="center left", bbox_to_anchor=(1.0, 0.5))
        return _titled_svg(fig, titles)


def speedup_points(rows: pd.DataFrame) -> pd.DataFrame:
    """One op's rows with a speedup against a baseline (the baseline's own rows, all 1.0, left out)."""
    sped = rows[(rows["status"] == "ok") & (rows["speedup"] > 0)]
    return sped[sped["backend"] != sped["baseline"]]


def _speedup_plot(op: str, rows: pd.DataFrame, index: int) -> str:
    """One op's speedup distribution: per backend a strip of its speedups against the baseline across the op's
    cases and dtypes (log scale, a marker per dtype, graph-timed rows filled darker), its median a bar, 1.0 a
    line; every point titled for hover. '' when no row has a speedup."""
    pts = speedup_points(rows)
    if pts.empty:
        return ""
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    labels = list(dict.fromkeys(pts["label"]))
    dtypes = sorted(set(pts["dtype"]), key=lambda d: (_DTYPE_ORDER + (d,)).index(d))
    marker_of = {d: _MARKERS[i % len(_MARKERS)] for i, d in enumerate(dtypes)}
    colors = matplotlib.colormaps["tab10"]
    titles: dict[str, str] = {}
    baseline = str(pts["baseline"].iloc[0])
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": f"oprt-speedup-{op}-{index}"}):
        fig = Figure(figsize=(7.5, 0.6 + 0.55 * len(labels)))
        ax = fig.subplots()
        ax.axvline(1.0, color="#555", linewidth=1)
        for y, label in enumerate(labels):
            mine = pts[pts["label"] == label]
            values = mine["speedup"].astype(float).tolist()
            median = statistics.median(values)
            ax.plot([median, median], [y - 0.3, y + 0.3], color=colors(y % 10), linewidth=2.5,
                    gid=f"oprt-spmed-{index}-{y}")
            for j, r in enumerate(mine.itertuples(index=False)):
                gid = f"oprt-sp-{index}-{len(titles)}"
                graph = str(getattr(r, "timer", "")) == "graph"
                titles[gid] = (f"{r.op} {r.case} ({r.shape}) {r.dtype} on {r.label}: speedup {float(r.speedup):.3g} "
                               f"against {r.baseline}" + (" (graph-timed)" if graph else ""))
                jitter = ((j * 7) % 11 - 5) / 25  # spread points of about one speedup apart, deterministically
                ax.plot([float(r.speedup)], [y + jitter], marker=marker_of[str(r.dtype)], linestyle="none",
                        markersize=5, color=colors(y % 10), markerfacecolor=colors(y % 10) if graph else "none",
                        gid=gid)
        ax.set_xscale("log")
        ax.set_yticks(range(len(labels)), labels)
        ax.set_ylim(-0.6, len(labels) - 0.4)
        ax.set_xlabel(f"speedup against {baseline} (baseline median / row median; log scale, > 1 faster)")
        ax.grid(True, axis="x", which="both", alpha=0.3)
        handles = [Line2D([], [], color="#555", marker=marker_of[d], linestyle="none", label=d) for d in dtypes]
        handles.append(Line2D([], [], color="#555", linewidth=2.5, label="median"))
        if "timer" in pts and (pts["timer"] == "graph").any():
            handles.append(Line2D([], [], color="#555", marker="o", linestyle="none", label="filled: graph-timed"))
        fig.suptitle(f"{op}: speedup distribution across cases (hover a point)", fontsize="medium")
        fig.legend(handles=handles, fontsize="x-small", loc="center left", bbox_to_anchor=(1.0, 0.5))
        return _titled_svg(fig, titles)


def roofline_points(rows: pd.DataFrame) -> pd.DataFrame:
    """Timed rows of ops that compute (flops > 0) with ``intensity`` (flop per byte moved) and ``gflops``
    (achieved 10^9 flop/s); a row without a flop count gets it from its op's spec where the op is known."""
    timed = rows[(rows["status"] == "ok") & (rows["median_ms"] > 0) & (rows["bytes"] > 0)].copy()
    if timed.empty:
        return timed.assign(intensity=[], gflops=[])
    missing = timed["flops"].isna()
    if missing.any():
        timed.loc[missing, "flops"] = [_spec_flops(r.op, r.case, r.shape, r.params)
                                       for r in timed[missing].itertuples(index=False)]
    timed = timed[timed["flops"] > 0]
    timed["intensity"] = timed["flops"] / timed["bytes"]
    timed["gflops"] = timed["flops"] / timed["median_ms"] / 1e6
    return timed


def _spec_flops(op: str, case: str, shape: str, params: str) -> float:
    """The flops of a case from its op's spec (its case sets, else a custom case of the row's shape); NaN when
    the op or case is not known here."""
    import json

    try:
        from oprt_core.plugins import get_registry
        from oprt_core.spec import parse_shape

        spec = get_registry().get_op(op)
        for cases in spec.case_sets.values():
            for c in cases:
                if c.name == case:
                    return float(spec.flops(c))
        first = parse_shape(str(shape).split(",")[0])
        return float(spec.flops(spec.custom_case(first, json.loads(params) if params else None)))
    except Exception:  # an op this install does not have, or a case it cannot rebuild: no flops, no point
        return math.nan


def _roof_dtypes(points: pd.DataFrame, label: Any) -> list[str]:
    """The compute peaks a backend's points are held to: their dtypes, tf32 for f32 rows with allow_tf32 set."""
    import json

    from .peaks import roof_dtype

    out = []
    for p in points[points["label"] == label].itertuples(index=False):
        try:
            params = json.loads(p.params) if isinstance(p.params, str) and p.params else {}
        except ValueError:
            params = {}
        out.append(roof_dtype(str(p.dtype), params if isinstance(params, dict) else {}))
    return list(dict.fromkeys(out))


def _roofline_plot(rows: pd.DataFrame, peaks: dict[str, tuple[float | None, float | None]],
                   compute: dict[str, dict[str, float]] | None = None) -> tuple[str, str]:
    """The roofline of every op that computes: achieved GFLOP/s against arithmetic intensity (flop per byte
    moved), log-log, a colour per backend and a marker per op; each backend's memory roof from its measured
    peak (solid) and spec peak (dashed): GFLOP/s = GB/s x flop/B; its compute roofs (dotted, one per dtype of its
    points) from ``compute``, the spec dense peaks run.json records, where it records them; the legend says when
    none is known. Returns (svg, note); svg is '' when no such row was timed."""
    compute = compute or {}
    points = roofline_points(rows)
    skipped = sorted(set(rows.loc[(rows["status"] == "ok") & (rows["median_ms"] > 0), "op"]) - set(points["op"]))
    note = (f"Left out (0 flops: they only move data): {', '.join(skipped)}. " if skipped else "")
    if points.empty:
        return "", note
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    labels = list(dict.fromkeys(points["label"]))
    ops = list(dict.fromkeys(points["op"]))
    colors = matplotlib.colormaps["tab10"]
    color_of = {lab: colors(i % 10) for i, lab in enumerate(labels)}
    marker_of = {op: _MARKERS[i % len(_MARKERS)] for i, op in enumerate(ops)}
    lo, hi = float(points["intensity"].min()) / 2, float(points["intensity"].max()) * 2
    titles: dict[str, str] = {}
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "oprt-roofline"}):
        fig = Figure(figsize=(7.5, 4.6))
        ax = fig.add_subplot()
        handles = []
        compute_drawn = False
        for label in labels:
            measured, spec = peaks.get(str(label), (None, None))
            for bw, style, what in ((measured, "-", "measured"), (spec, (0, (5, 3)), "spec")):
                if bw:
                    gid = f"oprt-roof-{len(titles)}"
                    titles[gid] = f"{label} memory roof from its {what} peak: {bw:.4g} GB/s x flop/B"
                    ax.plot([lo, hi], [bw * lo, bw * hi], color=color_of[label], linestyle=style, linewidth=1.2,
                            alpha=0.7, gid=gid)
            for dtype in _roof_dtypes(points, label) if str(label) in compute else []:
                tflops = compute[str(label)].get(dtype)
                if tflops:
                    gid = f"oprt-roof-{len(titles)}"
                    titles[gid] = f"{label} compute roof ({dtype}, spec dense peak): {tflops:.4g} TFLOP/s"
                    ax.plot([lo, hi], [tflops * 1e3] * 2, color=color_of[label], linestyle=(0, (1, 2)),
                            linewidth=1.2, alpha=0.7, gid=gid)
                    compute_drawn = True
            handles.append(Line2D([], [], color=color_of[label], linewidth=2, label=str(label)))
        # the compute roof measured by the fastest row of each device and dtype (a floor of the true peak)
        fastest = measured_compute_peaks({str(k): v for k, v in r.items()} for r in points.to_dict("records"))
        for device, per in fastest.items():
            for dtype, m in per.items():
                gid = f"oprt-roof-{len(titles)}"
                titles[gid] = (f"compute roof ({dtype}, measured: the fastest row, {m['backend']} {m['op']} "
                               f"{m['case']}{' on ' + device if device else ''}): {m['tflops']:.4g} TFLOP/s")
                ax.plot([lo, hi], [m["tflops"] * 1e3] * 2, color="#333", linestyle="-.", linewidth=1.0, alpha=0.8,
                        gid=gid)
        p: Any  # a row of the frame (itertuples)
        for p in points.itertuples(index=False):
            gid = f"oprt-roofpt-{len(titles)}"
            titles[gid] = _point_title(p, f", {p.intensity:.3g} flop/B, {p.gflops:.4g} GFLOP/s")
            ax.plot([p.intensity], [p.gflops], marker=marker_of[p.op], color=color_of[p.label], linestyle="none",
                    markersize=5, gid=gid)
        handles += [Line2D([], [], color="#555", marker=marker_of[op], linestyle="none", label=f"op {op}")
                    for op in ops]
        roofs = [peaks.get(str(lab), (None, None)) for lab in labels]
        if any(m for m, _ in roofs):
            handles.append(Line2D([], [], color="#555", linestyle="-", label="memory roof: measured peak"))
        if any(s for _, s in roofs):
            handles.append(Line2D([], [], color="#555", linestyle=(0, (5, 3)), label="memory roof: spec peak"))
        if not any(any(r) for r in roofs):
            handles.append(Line2D([], [], color="none", label="memory roof: no peak recorded"))
        if fastest:
            handles.append(Line2D([], [], color="#333", linestyle="-.",
                                  label="compute roof: measured (fastest row) per dtype"))
        if compute_drawn:
            handles.append(Line2D([], [], color="#555", linestyle=(0, (1, 2)),
                                  label="compute roof: spec dense peak per dtype"))
        else:
            handles.append(Line2D([], [], color="none", label="compute roof: not known (no peak FLOP/s recorded)"))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_xlabel("arithmetic intensity (flop per byte moved)")
        ax.set_ylabel("achieved GFLOP/s (10^9 flop/s)")
        ax.set_title("roofline: achieved GFLOP/s against arithmetic intensity (hover a point)", fontsize="medium")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(handles=handles, fontsize="x-small", loc="center left", bbox_to_anchor=(1.01, 0.5))
        return _titled_svg(fig, titles), note


def _env_section(runs: Sequence[Run], damage: Sequence[Sequence[str]] = ()) -> str:
    out = ["<h2>Environment</h2>"]
    for i, run in enumerate(runs):
        m = run.meta
        damaged = list(damage[i]) if i < len(damage) else []
        status = m.get("status", "")
        if damaged:  # the status run.json gives is not what the files hold
            status = f"DAMAGED: {'; '.join(damaged)} (run.json status: {status or 'none'})"
        host = m.get("host") or {}
        git = m.get("git") or {}
        opts = m.get("plan") or {}
        timing = opts.get("timing") or {}
        items = [
            ("run", str(run.path)), ("host", f"{host.get('hostname', '?')} ({host.get('platform', '')})"),
            ("started", m.get("started_utc", "")), ("finished", m.get("finished_utc") or ""),
            ("status", status), ("command", " ".join(m.get("argv") or [])),
            ("seed", m.get("seed", "")), ("mode", opts.get("mode", "")),
            ("timing", ", ".join(f"{k}={v}" for k, v in timing.items())),
            ("baseline", opts.get("baseline") or ""),
            ("git", (git.get("commit", "") + (" (dirty)" if git.get("dirty") else "")) if git else ""),
            ("versions", ", ".join(f"{k} {v}" for k, v in (m.get("versions") or {}).items())),
        ]
        out.append(f"<h3>{_e(run.label)}</h3><dl class='env'>")
        mark = " class='damaged'" if damaged else ""
        out += [f"<dt>{_e(k)}</dt><dd{mark if k == 'status' else ''}>{_e(str(v))}</dd>" for k, v in items]
        out.append("</dl>")
        backends = m.get("backends") or {}
        if backends:
            out.append(_filter_box("backends") + "<table class='sortable'><thead><tr><th class='l'>backend</th>"
                       "<th class='l'>device</th><th class='l'>flavour</th>"
                       "<th>memory GiB</th><th>L2 / LLC MiB</th><th>SMs / cores</th><th>measured peak GB/s</th>"
                       "<th>spec peak GB/s</th><th>timer floor us</th>"
                       "<th class='l'>driver</th><th class='l'>toolkit</th></tr></thead><tbody>")
            for name, b in backends.items():
                info = b.get("device_info") or {}
                peak = b.get("peak") or {}
                spec = b.get("spec_peak") or {}
                cal = b.get("calibration") or {}
                timer = b.get("timer") or {}
                mem, l2 = info.get("memory_bytes"), info.get("l2_bytes")
                how = (f"{cal.get('method', '')}, 2 x {cal['buffer_bytes'] / 2**20:.0f} MiB, n={cal.get('samples')}, "
                       f"{cal.get('timing', '')}"
                       if cal.get("buffer_bytes") else cal.get("error", "") or "not calibrated")
                floor = timer.get("floor_ms")
                floor_how = (f"empty launch {_fmt(timer.get('empty_launch_ms'), '.3g')} ms, resolution "
                             f"{_fmt(timer.get('resolution_ms'), '.3g')} ms ({timer.get('resolution_source', '')})"
                             if floor is not None else timer.get("error", "") or "not measured")
                out.append(
                    f"<tr><td class='l'>{_e(name)}</td><td class='l'>{_e(str(b.get('device', '')))}</td>"
                    f"<td class='l'>{_e(str(info.get('flavour', '')))}</td>"
                    f"<td>{_fmt(mem / 2**30 if mem else None, '.1f')}</td><td>{_fmt(l2 / 2**20 if l2 else None, '.1f')}"
                    f"</td><td>{_e(str(info.get('sm_count') or ''))}</td>"
                    f"<td title='{_e(how)}'>{_fmt(peak.get('gbps'), '.4g')} <small>{_e(str(peak.get('source', '')))}"
                    f"</small></td><td>{_fmt(spec.get('gbps'), '.4g')} <small>{_e(str(spec.get('source', '')))}"
                    f"</small></td><td title='{_e(floor_how)}'>"
                    f"{_fmt(floor * 1e3 if floor is not None else None, '.3g')}</td>"
                    f"<td class='l'>{_e(str(info.get('driver_version', '')))}</td>"
                    f"<td class='l'>{_e(str(info.get('toolkit', '')))}</td></tr>")
            out.append("</tbody></table>")
    return "\n".join(out)


def _summary_section(rows: pd.DataFrame) -> str:
    drops = clock_drops(rows) is not None  # a clock-drop count per backend where any row has telemetry
    out = ["<h2>Summary</h2>" + _filter_box("backends") + "<table id='summary' class='sortable'><thead><tr>"
           "<th class='l'>backend</th>" + "".join(f"<th>{s}</th>" for s in STATUSES)
           + ("<th title='rows timed while the clocks dropped (GPU telemetry)'>clock drops</th>" if drops else "")
           + "</tr></thead><tbody>"]
    for label, part in rows.groupby("label", sort=False):
        counts = part["status"].value_counts()
        cells = "".join(f"<td class='{s if counts.get(s, 0) else ''}'>{int(counts.get(s, 0))}</td>" for s in STATUSES)
        if drops:
            n = clock_drops(part)
            cells += f"<td class='{'slower' if n else ''}'>{'' if n is None else n}</td>"
        out.append(f"<tr><td class='l'>{_e(str(label))}</td>{cells}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _kernel_parts(r: Any) -> tuple[str, str]:
    """(the "; kernel NAME" a cell's title adds, the small line under its value) of a row that names its kernel."""
    if not r.kernel:
        return "", ""
    return f"; kernel {r.kernel}", f"<small class='kernel'>{_e(str(r.kernel))}</small>"


def _compile_note(r: Any) -> str:
    """"; compiled in N s" for a row whose prepare compiled the case (the ``compile_s`` column), else ""."""
    value: Any = getattr(r, "compile_s", None)
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return ""
    return f"; compiled in {seconds:.3g} s" if math.isfinite(seconds) else ""


# What each per-backend column of an op table holds (the header's tooltip).
_COLUMN_HELP = {
    "median ms": "median of the timed samples, ms; p10-p90 under it",
    "GB/s": "bytes moved / median, 10^9 B/s",
    "% peak": "GB/s against the backend's measured (calibrated) copy bandwidth",
    "% spec": "GB/s against the device's spec bandwidth",
    "speedup": "baseline median / this median",
    "CI ±%": "half-width of the median's 95% confidence interval, % of the median (stopped by: in the tooltip)",
    "n": "timed samples",
    "max abs err": "max |out - ref| against the float64 reference (max relative error in the tooltip); "
                   "an ok row is within the op's error budget",
    "max rel err": "max |out - ref| / max |ref| (normwise: a reference near 0 does not inflate it)",
    "status": "row status",
}


def _filter_box(what: str) -> str:
    """The text box that filters the table after it (the inline script hides the rows not matching)."""
    return (f"<input type='search' class='filter' placeholder='filter {_e(what)} (all words must match)' "
            f"aria-label='filter the {_e(what)} of the next table'>")


def _num(value: Any) -> str:
    """A number as the sort key of its cell (``data-v``); empty (sorted last) when missing."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return ""
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"  # as the script's Number() reads it
    return "" if math.isnan(v) else repr(v)


def _err_cell(r: Any) -> str:
    return (f"<td data-v='{_num(r.max_abs_err)}' title='max rel err {_fmt(r.max_rel_err, '.3g')}'>"
            f"{_fmt(r.max_abs_err, '.2g')}</td>")


def _op_table(op: str, rows: pd.DataFrame) -> str:
    """One op's rows: a line per (case, dtype), the backends side by side; sortable by any column below a
    backend's name (click its header) and filtered by the box above it."""
    labels = list(dict.fromkeys(rows["label"]))
    timed = rows["median_ms"].notna().any()
    peak = rows["pct_of_peak"].notna().any()
    pspec = rows["pct_of_spec"].notna().any()
    speed = rows["speedup"].notna().any()
    sub = (["median ms", "GB/s"] + (["% peak"] if peak else []) + (["% spec"] if pspec else [])
           + (["speedup"] if speed else []) + ["CI ±%", "n", "max abs err"]) if timed \
        else ["status", "max abs err", "max rel err"]
    head1 = "<tr><th class='l' rowspan='2' data-col='0'>case</th><th class='l' rowspan='2' data-col='1'>shape</th>" \
            "<th class='l' rowspan='2' data-col='2'>dtype</th>" + "".join(
                f"<th colspan='{len(sub)}'>{_e(str(lab))}</th>" for lab in labels) + "</tr>"
    head2 = "<tr>" + "".join(f"<th data-col='{3 + i * len(sub) + j}' title='{_e(_COLUMN_HELP[s])}'>{s}</th>"
                             for i, _ in enumerate(labels) for j, s in enumerate(sub)) + "</tr>"
    out = [_filter_box(f"{op} rows"), f"<table class='op sortable' data-op='{_e(op)}'>", "<thead>", head1, head2,
           "</thead><tbody>"]
    keyed: dict[tuple[Any, Any, Any], Any] = {(r.case, r.dtype, r.label): r for r in rows.itertuples(index=False)}
    for case, dtype in dict.fromkeys(zip(rows["case"], rows["dtype"])):
        first = next(r for r in rows.itertuples(index=False) if r.case == case and r.dtype == dtype)
        cells = [f"<td class='l'>{_e(str(case))}</td><td class='l'>{_e(str(first.shape))}</td>"
                 f"<td class='l'>{_e(str(dtype))}</td>"]
        for label in labels:
            r = keyed.get((case, dtype, label))
            if r is None:
                cells.append(f"<td colspan='{len(sub)}' data-v=''></td>")
            elif r.status != "ok" or not timed:
                # a failed or untimed row keeps the kernel it ran (which kernel got the numbers wrong)
                note, kernel = _kernel_parts(r)
                title = (str(r.message) + note).removeprefix("; ")
                if timed:
                    cells.append(f"<td class='{_e(r.status)}' colspan='{len(sub)}' data-v='' title='{_e(title)}'>"
                                 f"{_e(r.status)}{kernel}</td>")
                else:
                    cells.append(f"<td class='{_e(r.status)}' title='{_e(title)}'>{_e(r.status)}{kernel}</td>"
                                 f"{_err_cell(r)}<td data-v='{_num(r.max_rel_err)}'>{_fmt(r.max_rel_err, '.2e')}</td>")
            else:
                note, kernel = _kernel_parts(r)
                spread = (f"p10 {_fmt(r.p10_ms, '.4g')} / p90 {_fmt(r.p90_ms, '.4g')}, n={_fmt(r.samples, '.0f')}"
                          + note + _compile_note(r))
                spread += cell_note(r)  # the GPU's clocks and power while the row was timed
                marks = _markers(r.flags) + cell_marker(r) + _timer_mark(r)
                cells.append(f"<td title='{_e(spread)}' class='{'flagged' if marks else ''}' "
                             f"data-flags='{_e(str(r.flags))}' data-kernel='{_e(str(r.kernel))}' "
                             f"data-v='{_num(r.median_ms)}'>"
                             f"{_fmt(r.median_ms, '.4g')}{marks}<br>"
                             f"<small>{_fmt(r.p10_ms, '.3g')}&ndash;{_fmt(r.p90_ms, '.3g')}</small>{kernel}"
                             f"{cell_ncu(r)}</td>"
                             f"<td data-v='{_num(r.gbps)}'>{_fmt_gbps(r.gbps)}</td>")
                if peak:
                    cells.append(f"<td data-v='{_num(r.pct_of_peak)}'>{_fmt(r.pct_of_peak, '.1f')}</td>")
                if pspec:
                    cells.append(f"<td data-v='{_num(r.pct_of_spec)}'>{_fmt(r.pct_of_spec, '.1f')}</td>")
                if speed:
                    s = r.speedup
                    cls = "" if s != s else ("faster" if s > 1.05 else "slower" if s < 0.95 else "")
                    cells.append(f"<td class='{cls}' data-v='{_num(s)}'>{_fmt(s, '.2f')}</td>")
                ci = r.ci_rel * 100 if r.ci_rel == r.ci_rel else None
                cells.append(f"<td data-v='{_num(ci)}' title='stopped by {_e(str(r.stopped_by) or '?')}'>"
                             f"{_fmt(ci, '.2g')}</td><td data-v='{_num(r.samples)}'>{_fmt(r.samples, '.0f')}</td>"
                             + _err_cell(r))
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _problem_section(rows: pd.DataFrame) -> str:
    bad = rows[rows["status"].isin(["failed", "error"])]
    out = [f"<h2 id='failures'>Failures and errors ({len(bad)})</h2>"]
    if bad.empty:
        out.append("<p>None: every row is ok or unsupported.</p>")
    else:
        out.append(_filter_box("failures") + "<table id='failures-table' class='sortable'><thead><tr>"
                   "<th class='l'>op</th><th class='l'>case</th><th class='l'>dtype</th><th class='l'>backend</th>"
                   "<th class='l'>status</th><th class='l'>message</th></tr></thead><tbody>")
        r: Any  # a row of the frame (itertuples): its cells are str after normalize_rows
        for r in bad.itertuples(index=False):
            out.append(f"<tr><td class='l'>{_e(r.op)}</td><td class='l'>{_e(r.case)}</td><td class='l'>{_e(r.dtype)}"
                       f"</td><td class='l'>{_e(r.label)}</td><td class='l {_e(r.status)}'>{_e(r.status)}</td>"
                       f"<td class='l'><code>{_e(str(r.message))}</code></td></tr>")
        out.append("</tbody></table>")
    unsup = rows[rows["status"] == "unsupported"]
    if not unsup.empty:
        out.append(f"<details><summary>Unsupported ({len(unsup)})</summary>" + _filter_box("unsupported rows")
                   + "<table class='sortable'><thead><tr><th class='l'>op</th><th class='l'>case</th>"
                   "<th class='l'>dtype</th><th class='l'>backend</th><th class='l'>reason</th></tr></thead><tbody>")
        u: Any
        for u in unsup.itertuples(index=False):
            out.append(f"<tr><td class='l'>{_e(u.op)}</td><td class='l'>{_e(u.case)}</td><td class='l'>{_e(u.dtype)}"
                       f"</td><td class='l'>{_e(u.label)}</td><td class='l'>{_e(str(u.message))}</td></tr>")
        out.append("</tbody></table></details>")
    return "\n".join(out)


# Sorting and filtering, inline (the report fetches nothing). A header with data-col (or any header of a one-row
# head) sorts its table's body by that column on click or Enter, ascending then descending; a cell's data-v, where
# set, is its sort key, else its text; numbers compare as numbers, empty keys sort last. The search box before a
# table hides the body rows whose text lacks any of its words.
SCRIPT = """
(function(){
function key(row, col){
  let c = 0;
  for (const td of row.cells){ c += td.colSpan; if (c > col) return td.dataset.v ?? td.textContent.trim(); }
  return '';
}
function cmp(a, b){
  const x = Number(a), y = Number(b);
  return (!isNaN(x) && !isNaN(y)) ? x - y : a.localeCompare(b, undefined, {numeric: true});
}
document.querySelectorAll('table.sortable').forEach(t => {
  const one = t.tHead.rows.length === 1;
  t.tHead.querySelectorAll('th').forEach(th => {
    const col = th.dataset.col !== undefined ? Number(th.dataset.col) : (one ? th.cellIndex : -1);
    if (col < 0) return;
    th.classList.add('sort'); th.tabIndex = 0;
    const go = () => {
      const dir = th.dataset.dir === 'asc' ? 'desc' : 'asc';
      t.tHead.querySelectorAll('th').forEach(h => delete h.dataset.dir);
      th.dataset.dir = dir;
      const body = t.tBodies[0], rows = Array.from(body.rows);
      rows.sort((a, b) => {
        const p = key(a, col), q = key(b, col);
        if (p === '' || q === '') return (p === '') - (q === '');
        return dir === 'asc' ? cmp(p, q) : cmp(q, p);
      });
      rows.forEach(r => body.appendChild(r));
    };
    th.addEventListener('click', go);
    th.addEventListener('keydown', e => { if (e.key === 'Enter') go(); });
  });
});
document.querySelectorAll('input.filter').forEach(box => {
  const t = box.nextElementSibling;
  box.addEventListener('input', () => {
    const words = box.value.toLowerCase().split(/\\s+/).filter(Boolean);
    for (const r of t.tBodies[0].rows){
      const text = r.textContent.toLowerCase();
      r.hidden = !words.every(w => text.includes(w));
    }
  });
});
})();
"""


def _damage_section(runs: Sequence[Run], damage: Sequence[Sequence[str]]) -> str:
    """A box at the top naming what is wrong with each damaged run (:mod:`oprt_bench.integrity`); '' when none."""
    out = []
    for run, name, lines in zip(runs, _run_names(runs), damage):
        if lines:
            out.append(f"<p><strong>{_e(name)} ({_e(str(run.path))}) is damaged</strong>: its tables and plots show "
                       "the rows that could be read, not the whole run.</p><ul>"
                       + "".join(f"<li>{_e(line)}</li>" for line in lines) + "</ul>")
    return f"<div class='damaged' id='damage'>{''.join(out)}</div>" if out else ""


def render_report(runs: Sequence[Run], title: str = "oprt-bench report",
                  damage: Sequence[Sequence[str]] = ()) -> str:
    """The whole report as one HTML document; ``damage``: per run, what is wrong with it (shown first, and as its
    status)."""
    rows = label_rows(runs)
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
             f"<meta name='viewport' content='width=device-width, initial-scale=1'><style>{CSS}{GPU_CSS}</style>"
             "</head><body>",
             f"<h1>{_e(title)}</h1><p><small>generated {utc_now().strftime('%Y-%m-%d %H:%M:%S')} UTC from "
             f"{len(runs)} run(s), {len(rows)} row(s). Times are medians in milliseconds; speedup = baseline median / "
             f"row median; GB/s from the op's ideal bytes moved; % peak against the backend's measured "
             f"device-to-device copy bandwidth, % spec against its spec peak; CI ±% is the half-width of the "
             f"median's 95% confidence interval. Click a column header to sort, type in the box above a table to "
             f"filter its rows; hover a plotted point for its case.</small></p>",
             _damage_section(runs, damage), _env_section(runs, damage)]
    if rows.empty:
        parts.append("<p>No rows were measured.</p>")
    else:
        parts.append(_summary_section(rows))
        if rows["median_ms"].notna().any():
            parts.append(_legend_section(rows))
        parts.append(gpu_section(rows, _filter_box))
        peaks = backend_peaks(runs)
        compute = backend_compute_peaks(runs)
        svg, note = _roofline_plot(rows, peaks, compute)
        if svg or note:
            roof = ("A compute roof (dotted: the datasheet's dense peak TFLOP/s of the row's dtype, tf32 for f32 rows "
                    "with allow_tf32) is drawn for each backend whose run.json records one (a device in "
                    "oprt_bench.peaks.COMPUTE_PEAKS); it is the spec figure, not a measured one."
                    if compute else "No spec compute roof is drawn: run.json records no peak FLOP/s.")
            roof += (" The measured compute roof (dash-dot, grey) of each dtype is the fastest row that computes "
                     "(a GEMM; hover it for which): the best any kernel here reached, a floor of the device's peak.")
            parts.append("<h2 id='roofline'>Roofline</h2><p><small>Achieved GFLOP/s (the op spec's flops per call "
                         "/ median) against arithmetic intensity (flops / bytes moved), a point per timed row. "
                         "Below a memory roof (GFLOP/s = GB/s x flop/B: each backend's measured peak solid, its spec "
                         f"peak dashed) the kernel is bandwidth-bound. {roof} {_e(note)}</small></p>")
            if svg:
                parts.append(f"<div class='plot roofline' id='roofline-chart'>{svg}</div>")
        for i, (op, part) in enumerate(rows.groupby("op", sort=False)):
            parts.append(f"<h2 id='op-{_e(str(op))}'>{_e(str(op))}</h2>")
            parts.append(_op_table(str(op), part))
            svg = _bandwidth_plot(str(op), part, i, peaks, compute)
            if svg:
                kind = "compute" if computing_op(part) else "bandwidth"
                parts.append(f"<div class='plot {kind}' id='{kind}-{_e(str(op))}'>{svg}</div>")
            svg = _speedup_plot(str(op), part, i)
            if svg:
                parts.append(f"<div class='plot speedup' id='speedup-{_e(str(op))}'>{svg}</div>")
        parts.append(_problem_section(rows))
    parts.append(f"<script>{SCRIPT}</script></body></html>")
    return "\n".join(parts)


def write_report(runs: Sequence[Run], path: Path, title: str = "oprt-bench report",
                 damage: Sequence[Sequence[str]] = ()) -> Path:
    write_text_atomic(path, render_report(runs, title, damage))
    return path
