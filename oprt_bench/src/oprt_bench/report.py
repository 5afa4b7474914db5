"""The HTML report: one self-contained file (inline CSS and SVG, no script, nothing fetched).

Sections: environment (per run: host, versions, git commit, options; per backend: device),
a status summary, per op a table with the backends side by side (median, p10-p90, GB/s,
% of peak, speedup against the baseline) and a bandwidth-against-size plot, then failures
and errors with their messages, and unsupported cases. Several runs (e.g. from several
machines) merge into one report: their backends then read ``backend@host``.
"""

from __future__ import annotations

import html
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .results import STATUSES, Run, utc_now

__all__ = ["render_report", "write_report", "label_rows"]

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em;color:#222;max-width:110em}
h1{font-size:1.5em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ccc}h3{font-size:1.05em}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:.85em}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:right;vertical-align:top}
th{background:#f3f3f3}td.l,th.l{text-align:left}
td.ok{}td.failed,td.error{background:#fde2e2;color:#8a1c1c}td.unsupported{background:#f6f1dc;color:#6b5a12}
td.faster{color:#116611;font-weight:bold}td.slower{color:#a31515}
small{color:#666}.plot svg{max-width:100%;height:auto}code{font-size:.9em}
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


def label_rows(runs: Sequence[Run]) -> pd.DataFrame:
    """All runs' rows in one frame with a ``label`` column: the backend, or ``backend@run`` when merging."""
    frames = []
    names = [r.label for r in runs]
    for i, run in enumerate(runs):
        rows = run.rows.copy()
        name = names[i] if names.count(names[i]) == 1 else f"{names[i]}#{i + 1}"
        rows["label"] = rows["backend"] if len(runs) == 1 else rows["backend"] + "@" + name
        rows["run"] = name
        frames.append(rows)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    # no RDF metadata block: a date would make reports differ run to run for nothing
    fig.savefig(buf, format="svg", bbox_inches="tight",
                metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _bandwidth_plot(op: str, rows: pd.DataFrame, index: int) -> str:
    """GB/s against bytes moved, a line per (backend, dtype); '' when nothing was timed."""
    timed = rows[(rows["status"] == "ok") & rows["gbps"].notna() & (rows["bytes"] > 0)]
    if timed.empty:
        return ""
    import matplotlib
    from matplotlib.figure import Figure

    markers = {"f32": "o", "f16": "s", "bf16": "^"}
    # a distinct salt per figure keeps the ids of inlined SVGs from colliding in one page
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": f"oprt-{op}-{index}"}):
        fig = Figure(figsize=(7.5, 3.8))
        ax = fig.add_subplot()
        labels = list(dict.fromkeys(timed["label"]))
        colors = matplotlib.colormaps["tab10"]
        for li, label in enumerate(labels):
            for dtype, part in timed[timed["label"] == label].groupby("dtype", sort=False):
                part = part.sort_values("bytes")
                ax.plot(part["bytes"], part["gbps"], marker=markers.get(str(dtype), "d"), color=colors(li % 10),
                        linestyle="-" if dtype == "f32" else "--", label=f"{label} {dtype}")
        ax.set_xscale("log")
        ax.set_xlabel("bytes moved per call")
        ax.set_ylabel("GB/s")
        ax.set_title(f"{op}: bandwidth against size")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="x-small", loc="best")
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
                       "<th>memory GiB</th><th>L2 / LLC MiB</th><th>SMs / cores</th><th>peak GB/s</th>"
                       "<th class='l'>driver</th><th class='l'>toolkit</th></tr>")
            for name, b in backends.items():
                info = b.get("device_info") or {}
                peak = b.get("peak") or {}
                mem, l2 = info.get("memory_bytes"), info.get("l2_bytes")
                out.append(
                    f"<tr><td class='l'>{_e(name)}</td><td class='l'>{_e(str(b.get('device', '')))}</td>"
                    f"<td class='l'>{_e(str(info.get('flavour', '')))}</td>"
                    f"<td>{_fmt(mem / 2**30 if mem else None, '.1f')}</td><td>{_fmt(l2 / 2**20 if l2 else None, '.1f')}"
                    f"</td><td>{_e(str(info.get('sm_count') or ''))}</td>"
                    f"<td>{_fmt(peak.get('gbps'), '.0f')} <small>{_e(str(peak.get('source', '')))}</small></td>"
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


def _op_table(op: str, rows: pd.DataFrame) -> str:
    labels = list(dict.fromkeys(rows["label"]))
    timed = rows["median_ms"].notna().any()
    peak = rows["pct_of_peak"].notna().any()
    speed = rows["speedup"].notna().any()
    sub = (["median ms", "GB/s"] + (["% peak"] if peak else []) + (["speedup"] if speed else [])) if timed \
        else ["status", "max rel err"]
    head1 = "<tr><th class='l' rowspan='2'>case</th><th class='l' rowspan='2'>shape</th>" \
            "<th class='l' rowspan='2'>dtype</th>" + "".join(
                f"<th colspan='{len(sub)}'>{_e(str(lab))}</th>" for lab in labels) + "</tr>"
    head2 = "<tr>" + "".join(f"<th>{s}</th>" for _ in labels for s in sub) + "</tr>"
    out = [f"<table class='op' data-op='{_e(op)}'>", head1, head2]
    keyed = {(r.case, r.dtype, r.label): r for r in rows.itertuples(index=False)}
    for case, dtype in dict.fromkeys(zip(rows["case"], rows["dtype"])):
        first = next(r for r in rows.itertuples(index=False) if r.case == case and r.dtype == dtype)
        cells = [f"<td class='l'>{_e(str(case))}</td><td class='l'>{_e(str(first.shape))}</td>"
                 f"<td class='l'>{_e(str(dtype))}</td>"]
        for label in labels:
            r = keyed.get((case, dtype, label))
            if r is None:
                cells.append(f"<td colspan='{len(sub)}'></td>")
            elif r.status != "ok" or not timed:
                if timed:
                    cells.append(f"<td class='{_e(r.status)}' colspan='{len(sub)}' title='{_e(str(r.message))}'>"
                                 f"{_e(r.status)}</td>")
                else:
                    cells.append(f"<td class='{_e(r.status)}' title='{_e(str(r.message))}'>{_e(r.status)}</td>"
                                 f"<td>{_fmt(r.max_rel_err, '.2e')}</td>")
            else:
                spread = f"p10 {_fmt(r.p10_ms, '.4g')} / p90 {_fmt(r.p90_ms, '.4g')}, n={_fmt(r.samples, '.0f')}"
                cells.append(f"<td title='{_e(spread)}'>{_fmt(r.median_ms, '.4g')}<br>"
                             f"<small>{_fmt(r.p10_ms, '.3g')}&ndash;{_fmt(r.p90_ms, '.3g')}</small></td>"
                             f"<td>{_fmt(r.gbps, '.3g')}</td>")
                if peak:
                    cells.append(f"<td>{_fmt(r.pct_of_peak, '.1f')}</td>")
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
        for r in unsup.itertuples(index=False):
            out.append(f"<tr><td class='l'>{_e(r.op)}</td><td class='l'>{_e(r.case)}</td><td class='l'>{_e(r.dtype)}"
                       f"</td><td class='l'>{_e(r.label)}</td><td class='l'>{_e(str(r.message))}</td></tr>")
        out.append("</table></details>")
    return "\n".join(out)


def render_report(runs: Sequence[Run], title: str = "oprt-bench report") -> str:
    """The whole report as one HTML document."""
    rows = label_rows(runs)
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
             f"<meta name='viewport' content='width=device-width, initial-scale=1'><style>{CSS}</style></head><body>",
             f"<h1>{_e(title)}</h1><p><small>generated {utc_now().strftime('%Y-%m-%d %H:%M:%S')} UTC from "
             f"{len(runs)} run(s), {len(rows)} row(s). Times are medians in milliseconds; speedup = baseline median / "
             f"row median; GB/s from the op's ideal bytes moved.</small></p>",
             _env_section(runs)]
    if rows.empty:
        parts.append("<p>No rows were measured.</p>")
    else:
        parts.append(_summary_section(rows))
        for i, (op, part) in enumerate(rows.groupby("op", sort=False)):
            parts.append(f"<h2 id='op-{_e(str(op))}'>{_e(str(op))}</h2>")
            parts.append(_op_table(str(op), part))
            svg = _bandwidth_plot(str(op), part, i)
            if svg:
                parts.append(f"<div class='plot'>{svg}</div>")
        parts.append(_problem_section(rows))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(runs: Sequence[Run], path: Path, title: str = "oprt-bench report") -> Path:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(render_report(runs, title), encoding="utf-8")
    tmp.replace(path)
    return path
