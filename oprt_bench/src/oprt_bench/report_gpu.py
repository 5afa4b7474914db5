"""The report's GPU telemetry and Nsight Compute parts (:mod:`oprt_bench.report` places them).

- a ``CD`` marker on a row's median where its clocks dropped (``clock_drop``), the row's clocks, power and
  throttle reasons in the cell's tooltip, and its ncu figures (DRAM bytes, % of peak DRAM throughput) on a
  line under the median where the row was profiled;
- a section per report: per backend the rows with telemetry, clock drops, the SM clock range, mean power
  and the throttle reasons seen, and a table of the profiled rows with their reports.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .peaks import finite_float

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CLOCK_DROP", "GPU_CSS", "has_clock_drop", "cell_marker", "cell_note", "cell_ncu", "clock_drops",
           "gpu_section"]

_e = html.escape

CLOCK_DROP = ("CD", "clock drop: the SM clock fell below 90% of its start value while the row was timed, or a "
                    "power or thermal throttle reason was set (NVML)")
GPU_CSS = ".flag-clock-drop{background:#c0392b}small.ncu{display:block;font-size:.75em;color:#1f5f3b;text-align:left}"


def has_clock_drop(r: Any) -> bool:
    return finite_float(getattr(r, "clock_drop", None)) == 1


def cell_marker(r: Any) -> str:
    """The ``CD`` badge of a row whose clocks dropped, else ""."""
    if not has_clock_drop(r):
        return ""
    short, meaning = CLOCK_DROP
    return f"<span class='flag flag-clock-drop' title='{_e(meaning)}'>{short}</span>"


def cell_note(r: Any) -> str:
    """``; SM 1980-1965 MHz (min 1410), mem 3201 MHz, 512 W, 1.25 J, throttle sw_power_cap`` for a cell's tooltip
    ("" without telemetry)."""
    start, end, low = (finite_float(getattr(r, k, None)) for k in ("sm_mhz_start", "sm_mhz_end", "sm_mhz_min"))
    if start is None:
        return ""
    sm = f"SM {start:.0f}" + (f"-{end:.0f}" if end is not None else "") + " MHz"
    if low is not None and low < min(start, end if end is not None else start):
        sm += f" (min {low:.0f})"
    parts = [sm]
    mem = finite_float(getattr(r, "mem_mhz_start", None))
    if mem is not None:
        parts.append(f"mem {mem:.0f} MHz")
    power, energy = finite_float(getattr(r, "power_w", None)), finite_float(getattr(r, "energy_j", None))
    if power is not None:
        parts.append(f"{power:.0f} W")
    if energy is not None:
        parts.append(f"{energy:.3g} J")
    reasons = str(getattr(r, "throttle_reasons", "") or "")
    if reasons:
        parts.append("throttle " + reasons.replace(";", ", "))
    return "; " + ", ".join(parts)


def cell_ncu(r: Any) -> str:
    """The line under a profiled row's median: ncu's DRAM bytes and throughput; "" for other rows."""
    dram, pct = finite_float(getattr(r, "ncu_dram_bytes", None)), finite_float(getattr(r, "ncu_dram_pct", None))
    if dram is None:
        return ""
    t = finite_float(getattr(r, "ncu_time_ms", None))
    title = f"Nsight Compute: {getattr(r, 'ncu_report', '')}" + (f", kernels {t:.4g} ms" if t is not None else "")
    pct_text = f", {pct:.1f}% DRAM peak" if pct is not None else ""
    return f"<small class='ncu' title='{_e(title)}'>ncu {dram / 1e6:.1f} MB{pct_text}</small>"


def clock_drops(part: pd.DataFrame) -> int | None:
    """How many of the rows dropped their clocks; None when none of them has telemetry."""
    if "clock_drop" not in part or not part["clock_drop"].notna().any():
        return None
    return int((part["clock_drop"] == 1).sum())


def gpu_section(rows: pd.DataFrame, filter_box: Callable[[str], str]) -> str:
    """The GPU telemetry and profiles section ("" when no row has either); ``filter_box(what)`` is the search box
    the report puts before each table."""
    out = []
    has_tel = "sm_mhz_start" in rows and rows["sm_mhz_start"].notna().any()
    profiled = rows[rows["ncu_dram_bytes"].notna()] if "ncu_dram_bytes" in rows else rows.iloc[0:0]
    if not has_tel and profiled.empty:
        return ""
    out.append("<h2 id='gpu'>GPU telemetry</h2>")
    if has_tel:
        short, meaning = CLOCK_DROP
        out.append("<p><small>Read through NVML while each row was timed: the clocks at its start and end (a "
                   "median's tooltip), every 10 ms between (min SM clock), power, energy and throttle reasons "
                   f"(run.json <code>backends.*.telemetry</code>: the device and its limits). <span class='flag "
                   f"flag-clock-drop'>{short}</span> on a median: {_e(meaning)}.</small></p>")
        out.append(filter_box("backends") + "<table id='telemetry' class='sortable'><thead><tr>"
                   "<th class='l'>backend</th><th>rows</th>"
                   "<th>clock drops</th><th>SM MHz min</th><th>SM MHz max</th><th>mean W</th>"
                   "<th class='l'>throttle reasons seen</th></tr></thead><tbody>")
        for label, part in rows.groupby("label", sort=False):
            tel = part[part["sm_mhz_start"].notna()]
            if tel.empty:
                continue
            reasons = sorted({x for v in tel["throttle_reasons"] for x in str(v or "").split(";") if x})
            drops = clock_drops(tel) or 0
            lo = tel[["sm_mhz_min", "sm_mhz_start", "sm_mhz_end"]].min().min()
            hi = tel[["sm_mhz_start", "sm_mhz_end"]].max().max()
            power = tel["power_w"].mean()
            out.append(f"<tr><td class='l'>{_e(str(label))}</td><td>{len(tel)}</td>"
                       f"<td class='{'slower' if drops else ''}'>{drops}</td><td>{lo:.0f}</td><td>{hi:.0f}</td>"
                       f"<td>{'' if power != power else f'{power:.0f}'}</td>"
                       f"<td class='l'>{_e(', '.join(reasons))}</td></tr>")
        out.append("</tbody></table>")
    if not profiled.empty:
        out.append("<h3 id='profiles'>Nsight Compute profiles</h3><p><small><code>--profile ncu</code>: one launch "
                   "of each row under ncu (the report file is in the run folder).</small></p>"
                   + filter_box("profiled rows") + "<table id='profiles-table' class='sortable'><thead><tr>"
                   "<th class='l'>op</th><th class='l'>case</th><th class='l'>dtype</th><th class='l'>backend</th>"
                   "<th>median ms</th><th>ncu kernels ms</th>"
                   "<th>DRAM MB</th><th>DRAM % of peak</th><th>% peak (sweep)</th><th class='l'>report</th>"
                   "</tr></thead><tbody>")
        r: Any
        for r in profiled.itertuples(index=False):
            out.append(f"<tr><td class='l'>{_e(str(r.op))}</td><td class='l'>{_e(str(r.case))}</td>"
                       f"<td class='l'>{_e(str(r.dtype))}</td><td class='l'>{_e(str(r.label))}</td>"
                       f"<td>{_fmt(r.median_ms, '.4g')}</td><td>{_fmt(r.ncu_time_ms, '.4g')}</td>"
                       f"<td>{_fmt((finite_float(r.ncu_dram_bytes) or 0.0) / 1e6, '.1f')}</td>"
                       f"<td>{_fmt(r.ncu_dram_pct, '.1f')}</td>"
                       f"<td>{_fmt(r.pct_of_peak, '.1f')}</td><td class='l'><code>{_e(str(r.ncu_report))}</code>"
                       "</td></tr>")
        out.append("</tbody></table>")
    return "\n".join(out)


def _fmt(value: Any, spec: str) -> str:
    v = finite_float(value)
    return "" if v is None else format(v, spec)
