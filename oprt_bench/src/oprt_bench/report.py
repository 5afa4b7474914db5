"""The HTML report: one self-contained file (inline CSS and SVG, no script, nothing fetched).

Sections: environment (per run: host, versions, git commit, options; per backend: device,
measured and spec peak, timer floor), a status summary, the legend of row flags, per op a table
with the backends side by side (median, p10-p90, GB/s, % of the measured and of the spec peak,
speedup against the baseline, flag markers) and a roofline view (achieved GB/s against bytes
moved, the measured peak of each backend as a line, its spec peak dashed, flagged points ringed),
then failures and errors with their messages, and unsupported cases. Several runs (e.g. from
several machines) merge into one report: their backends then read ``backend@host``.
"""

from __future__ import annotations

import html
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported where rows are built: `oprt-bench --help` stays quick
    import pandas as pd

from .flags import FLAGS, split_flags
from .results import STATUSES, Run, utc_now

__all__ = ["render_report", "write_report", "label_rows", "backend_peaks"]

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
.flag-fits-in-l2{background:#1f6f8b}.flag-above-peak{background:#b0281c}td.flagged{background:#fff7e0}
dl.legend{display:grid;grid-template-columns:max-content auto;gap:.2em 1em;font-size:.85em}
dl.env{display:grid;grid-template-columns:max-content auto;gap:.1em 1em;font-size:.85em}dl.env dt{font-weight:bold}
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
        rows = run.rows.copy()
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
    out.append("</dl>")
    return "\n".join(out)


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    # no RDF metadata block: a date would make reports differ run to run for nothing
    fig.savefig(buf, format="svg", bbox_inches="tight",
                metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _roofline_plot(op: str, rows: pd.DataFrame, index: int,
                   peaks: dict[str, tuple[float | None, float | None]] | None = None) -> str:
    """The roofline view of one op: achieved GB/s against bytes moved (log x) across sizes, a colour per
    backend (line style and marker per dtype), each backend's measured peak as a solid horizontal line
    and its spec peak dashed, flagged rows ringed; '' when nothing was timed."""
    timed = rows[(rows["status"] == "ok") & rows["gbps"].notna() & (rows["bytes"] > 0)]
    if timed.empty:
        return ""
    import matplotlib
    from matplotlib.figure import Figure

    peaks = peaks or {}
    markers = {"f32": "o", "f16": "s", "bf16": "^"}
    styles = {"f32": "-", "f16": "--", "bf16": ":"}
    # a distinct salt per figure keeps the ids of inlined SVGs from colliding in one page
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": f"oprt-{op}-{index}"}):
        fig = Figure(figsize=(7.5, 4.2))
        ax = fig.add_subplot()
        labels = list(dict.fromkeys(timed["label"]))
        colors = matplotlib.colormaps["tab10"]
        for li, label in enumerate(labels):
            color = colors(li % 10)
            for dtype, part in timed[timed["label"] == label].groupby("dtype", sort=False):
                part = part.sort_values("bytes")
                ax.plot(part["bytes"], part["gbps"], marker=markers.get(str(dtype), "d"), color=color,
                        linestyle=styles.get(str(dtype), "-."), markersize=4, label=f"{label} {dtype}")
            measured, spec = peaks.get(str(label), (None, None))
            if measured:
                ax.axhline(measured, color=color, linestyle="-", linewidth=1.2, alpha=0.7,
                           label=f"{label} measured peak {measured:.4g} GB/s")
            if spec:
                ax.axhline(spec, color=color, linestyle=(0, (5, 3)), linewidth=1.0, alpha=0.7,
                           label=f"{label} spec peak {spec:.4g} GB/s")
        flagged = timed[timed["flags"].map(lambda v: bool(split_flags(v)))]
        if not flagged.empty:
            ax.scatter(flagged["bytes"], flagged["gbps"], s=90, facecolors="none", edgecolors="#b0281c",
                       linewidths=1.2, zorder=5, label="flagged row (see the flags legend)")
        ax.set_xscale("log")
        ax.set_ylim(bottom=0)
        ax.set_xlabel("bytes moved per call")
        ax.set_ylabel("achieved GB/s")
        ax.set_title(f"{op}: roofline (achieved GB/s against bytes moved; lines: measured peak, dashed: spec)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="xx-small", loc="center left", bbox_to_anchor=(1.01, 0.5))
        return _svg(fig)


def _env_section(runs: Sequence[Run]) -> str:
    out = ["<h2>Environment</h2>"]
    for run in runs:
        m = run.meta
        host = m.get("host") or {}
        git = m.get("git") or {}
        opts = m.get("plan") or {}
        timing = opts.get("timing") or {}
        items = [
            ("run", str(run.path)), ("host", f"{host.get('hostname', '?')} ({host.get('platform', '')})"),
            ("started", m.get("started_utc", "")), ("finished", m.get("finished_utc") or ""),
            ("status", m.get("status", "")), ("command", " ".join(m.get("argv") or [])),
            ("seed", m.get("seed", "")), ("mode", opts.get("mode", "")),
            ("timing", ", ".join(f"{k}={v}" for k, v in timing.items())),
            ("baseline", opts.get("baseline") or ""),
            ("git", (git.get("commit", "") + (" (dirty)" if git.get("dirty") else "")) if git else ""),
            ("versions", ", ".join(f"{k} {v}" for k, v in (m.get("versions") or {}).items())),
        ]
        out.append(f"<h3>{_e(run.label)}</h3><dl class='env'>")
        out += [f"<dt>{_e(k)}</dt><dd>{_e(str(v))}</dd>" for k, v in items]
        out.append("</dl>")
        backends = m.get("backends") or {}
        if backends:
            out.append("<table><tr><th class='l'>backend</th><th class='l'>device</th><th class='l'>flavour</th>"
                       "<th>memory GiB</th><th>L2 / LLC MiB</th><th>SMs / cores</th><th>measured peak GB/s</th>"
                       "<th>spec peak GB/s</th><th>timer floor us</th>"
                       "<th class='l'>driver</th><th class='l'>toolkit</th></tr>")
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
            out.append("</table>")
    return "\n".join(out)


def _summary_section(rows: pd.DataFrame) -> str:
    out = ["<h2>Summary</h2><table id='summary'><tr><th class='l'>backend</th>"
           + "".join(f"<th>{s}</th>" for s in STATUSES) + "</tr>"]
    for label, part in rows.groupby("label", sort=False):
        counts = part["status"].value_counts()
        cells = "".join(f"<td class='{s if counts.get(s, 0) else ''}'>{int(counts.get(s, 0))}</td>" for s in STATUSES)
        out.append(f"<tr><td class='l'>{_e(str(label))}</td>{cells}</tr>")
    out.append("</table>")
    return "\n".join(out)


def _kernel_parts(r: Any) -> tuple[str, str]:
    """(the "; kernel NAME" a cell's title adds, the small line under its value) of a row that names its kernel."""
    if not r.kernel:
        return "", ""
    return f"; kernel {r.kernel}", f"<small class='kernel'>{_e(str(r.kernel))}</small>"


def _op_table(op: str, rows: pd.DataFrame) -> str:
    labels = list(dict.fromkeys(rows["label"]))
    timed = rows["median_ms"].notna().any()
    peak = rows["pct_of_peak"].notna().any()
    pspec = rows["pct_of_spec"].notna().any()
    speed = rows["speedup"].notna().any()
    sub = (["median ms", "GB/s"] + (["% peak"] if peak else []) + (["% spec"] if pspec else [])
           + (["speedup"] if speed else [])) if timed else ["status", "max rel err"]
    head1 = "<tr><th class='l' rowspan='2'>case</th><th class='l' rowspan='2'>shape</th>" \
            "<th class='l' rowspan='2'>dtype</th>" + "".join(
                f"<th colspan='{len(sub)}'>{_e(str(lab))}</th>" for lab in labels) + "</tr>"
    head2 = "<tr>" + "".join(f"<th>{s}</th>" for _ in labels for s in sub) + "</tr>"
    out = [f"<table class='op' data-op='{_e(op)}'>", head1, head2]
    keyed: dict[tuple[Any, Any, Any], Any] = {(r.case, r.dtype, r.label): r for r in rows.itertuples(index=False)}
    for case, dtype in dict.fromkeys(zip(rows["case"], rows["dtype"])):
        first = next(r for r in rows.itertuples(index=False) if r.case == case and r.dtype == dtype)
        cells = [f"<td class='l'>{_e(str(case))}</td><td class='l'>{_e(str(first.shape))}</td>"
                 f"<td class='l'>{_e(str(dtype))}</td>"]
        for label in labels:
            r = keyed.get((case, dtype, label))
            if r is None:
                cells.append(f"<td colspan='{len(sub)}'></td>")
            elif r.status != "ok" or not timed:
                # a failed or untimed row keeps the kernel it ran (which kernel got the numbers wrong)
                note, kernel = _kernel_parts(r)
                title = (str(r.message) + note).removeprefix("; ")
                if timed:
                    cells.append(f"<td class='{_e(r.status)}' colspan='{len(sub)}' title='{_e(title)}'>"
                                 f"{_e(r.status)}{kernel}</td>")
                else:
                    cells.append(f"<td class='{_e(r.status)}' title='{_e(title)}'>{_e(r.status)}{kernel}</td>"
                                 f"<td>{_fmt(r.max_rel_err, '.2e')}</td>")
            else:
                note, kernel = _kernel_parts(r)
                spread = f"p10 {_fmt(r.p10_ms, '.4g')} / p90 {_fmt(r.p90_ms, '.4g')}, n={_fmt(r.samples, '.0f')}" + note
                marks = _markers(r.flags)
                cells.append(f"<td title='{_e(spread)}' class='{'flagged' if marks else ''}' "
                             f"data-flags='{_e(str(r.flags))}' data-kernel='{_e(str(r.kernel))}'>"
                             f"{_fmt(r.median_ms, '.4g')}{marks}<br>"
                             f"<small>{_fmt(r.p10_ms, '.3g')}&ndash;{_fmt(r.p90_ms, '.3g')}</small>{kernel}</td>"
                             f"<td>{_fmt_gbps(r.gbps)}</td>")
                if peak:
                    cells.append(f"<td>{_fmt(r.pct_of_peak, '.1f')}</td>")
                if pspec:
                    cells.append(f"<td>{_fmt(r.pct_of_spec, '.1f')}</td>")
                if speed:
                    s = r.speedup
                    cls = "" if s != s else ("faster" if s > 1.05 else "slower" if s < 0.95 else "")
                    cells.append(f"<td class='{cls}'>{_fmt(s, '.2f')}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _problem_section(rows: pd.DataFrame) -> str:
    bad = rows[rows["status"].isin(["failed", "error"])]
    out = [f"<h2 id='failures'>Failures and errors ({len(bad)})</h2>"]
    if bad.empty:
        out.append("<p>None: every row is ok or unsupported.</p>")
    else:
        out.append("<table id='failures-table'><tr><th class='l'>op</th><th class='l'>case</th><th class='l'>dtype</th>"
                   "<th class='l'>backend</th><th class='l'>status</th><th class='l'>message</th></tr>")
        r: Any  # a row of the frame (itertuples): its cells are str after normalize_rows
        for r in bad.itertuples(index=False):
            out.append(f"<tr><td class='l'>{_e(r.op)}</td><td class='l'>{_e(r.case)}</td><td class='l'>{_e(r.dtype)}"
                       f"</td><td class='l'>{_e(r.label)}</td><td class='l {_e(r.status)}'>{_e(r.status)}</td>"
                       f"<td class='l'><code>{_e(str(r.message))}</code></td></tr>")
        out.append("</table>")
    unsup = rows[rows["status"] == "unsupported"]
    if not unsup.empty:
        out.append(f"<details><summary>Unsupported ({len(unsup)})</summary><table><tr><th class='l'>op</th>"
                   "<th class='l'>case</th>"
                   "<th class='l'>dtype</th><th class='l'>backend</th><th class='l'>reason</th></tr>")
        u: Any
        for u in unsup.itertuples(index=False):
            out.append(f"<tr><td class='l'>{_e(u.op)}</td><td class='l'>{_e(u.case)}</td><td class='l'>{_e(u.dtype)}"
                       f"</td><td class='l'>{_e(u.label)}</td><td class='l'>{_e(str(u.message))}</td></tr>")
        out.append("</table></details>")
    return "\n".join(out)


def render_report(runs: Sequence[Run], title: str = "oprt-bench report") -> str:
    """The whole report as one HTML document."""
    rows = label_rows(runs)
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
             f"<meta name='viewport' content='width=device-width, initial-scale=1'><style>{CSS}</style></head><body>",
             f"<h1>{_e(title)}</h1><p><small>generated {utc_now().strftime('%Y-%m-%d %H:%M:%S')} UTC from "
             f"{len(runs)} run(s), {len(rows)} row(s). Times are medians in milliseconds; speedup = baseline median / "
             f"row median; GB/s from the op's ideal bytes moved; % peak against the backend's measured "
             f"device-to-device copy bandwidth, % spec against its spec peak.</small></p>",
             _env_section(runs)]
    if rows.empty:
        parts.append("<p>No rows were measured.</p>")
    else:
        parts.append(_summary_section(rows))
        if rows["median_ms"].notna().any():
            parts.append(_legend_section(rows))
        peaks = backend_peaks(runs)
        for i, (op, part) in enumerate(rows.groupby("op", sort=False)):
            parts.append(f"<h2 id='op-{_e(str(op))}'>{_e(str(op))}</h2>")
            parts.append(_op_table(str(op), part))
            svg = _roofline_plot(str(op), part, i, peaks)
            if svg:
                parts.append(f"<div class='plot roofline' id='roofline-{_e(str(op))}'>{svg}</div>")
        parts.append(_problem_section(rows))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(runs: Sequence[Run], path: Path, title: str = "oprt-bench report") -> Path:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(render_report(runs, title), encoding="utf-8")
    tmp.replace(path)
    return path
