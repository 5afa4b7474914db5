#!/usr/bin/env python3
"""Markdown table of a run's nvidia rows against the performance targets.

    python scripts/perf_table.py results/<run>/results.csv [--backend nvidia] [--peak GBPS] [--all] [--kernel]
    python scripts/perf_table.py RUN_A/results.csv RUN_B/results.csv ...   # several sweeps of the same cases
    python scripts/perf_table.py --union OPS_A/results.csv OPS_B/results.csv  # one sweep split by op group
    python scripts/perf_table.py --format markdown --op softmax DEFAULT/results.csv LARGE/results.csv  # docs tables

Reads oprt-bench's results.csv (columns op, case, shape, dtype, backend, status, median_ms, gbps,
pct_of_peak, baseline, speedup; pct_of_peak may be empty) and prints, for every row of the backend,
op | case | dtype | GB/s | % of peak | speedup over the baseline (3 decimals: a 0.998 that misses
>= 1.00 shows as such; 4 where 3 would round a miss up to its target, 0.9996) | target | met.

% of peak: the CSV's pct_of_peak (oprt-bench's: against the run's calibrated device-to-device copy; empty where a
backend was not calibrated), or 100 * gbps / --peak when --peak is given (e.g. --peak 4190 on the H200). Targets
(tensor size = the first input's bytes in the row's dtype, "tensors of 256 MiB and more"; with --size-rule f32 its
elements x 4 bytes, so that a shape that qualifies in f32 carries the same target in f16 and bf16):
- copy, vector_add, relu, contiguous, >= 256 MiB: >= 95% of peak;
- reduce_sum over axis -1 or axis 0 of a 2-D contiguous tensor, >= 256 MiB: >= 95%;
- softmax over the last axis, widths 128..16384, >= 256 MiB: >= 90%; width 65536: >= 80%;
  softmax over axis 0 of a 2-D tensor: >= 80%;
- copy of a transposed 2-D view, >= 64 MiB: >= 80%;
- speedup over the baseline >= 1.00 on every `large` case and >= 0.95 on every `default` case.
A row's case set comes from oprt_core's case sets when oprt_core imports (else, said on stderr, `large`
for tensors of >= 2^26 elements, 256 MiB as f32, and no speedup target otherwise). Rows without a target
show "-" under "met". Without --all only rows with a target are listed. --kernel adds the row's `kernel` cell (which
of the backend's kernels ran, results schema 3 on). --op keeps the rows of the named ops (comma-separated). Exit
status 0 either way (a report, not a gate).

Several CSVs (sweeps of the same cases, e.g. of one commit on several machines): one row per (op, case, dtype), each
number the median over the runs that timed it with its range in parentheses, the targets judged on the medians; a row
is ok only where every run has it ok: a way to read rows whose run-to-run spread is wider than their margin, beside
each sweep's own table. --union: the CSVs sweep different cases (one op group each, or a cut sweep and the rest): a
row is judged on the runs that have it.

--format markdown (the tables of docs/kernels.md): every row of the backend, targeted or not, one table per CSV in
the order given (each CSV its own run, typically one per case set; nothing is combined), each under its run's line
(below), with the kernel each row ran and the target in short ("95%, 1.00x"); an op column only where the rows hold
more than one op.

When the run's run.json lies beside the CSV (every oprt-bench run folder), a line above the table says where
the figures come from: device, date, commit, case sets, flush, and the calibrated peak the % column is against.
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import math
import re
import statistics
import sys
from pathlib import Path

MIB = 1 << 20
STREAMING = {"copy", "vector_add", "relu"}


@functools.cache  # once a process: several CSVs share it (and its stderr note)
def _case_sets() -> dict[tuple[str, str], str]:
    """(op, case name) -> case set, from oprt_core when it is importable."""
    try:
        from oprt_core.core_ops import CORE_OPS
    except Exception as exc:  # noqa: BLE001 - any import failure: fall back to sizes
        # said on stderr: without the case sets every `default` row loses its speedup target, and a default run
        # would read as judged when it is not
        print(f"perf_table: oprt_core does not import ({exc}); case sets guessed from sizes: `large` for >= 2^26 "
              "elements (256 MiB as f32), no `default` speedup targets", file=sys.stderr)
        return {}
    found: dict[tuple[str, str], str] = {}
    for spec in CORE_OPS:
        for case_set in ("smoke", "edge", "default", "large"):
            try:
                cases = spec.cases(case_set)
            except Exception:  # noqa: BLE001
                continue
            for case in cases:
                found.setdefault((spec.name, case.name), case_set)
    return found


def _first_shape(shape: str) -> tuple[int, ...]:
    first = (shape or "").split(",")[0].strip()
    if first in ("", "scalar"):
        return ()
    try:
        return tuple(int(v) for v in first.split("x"))
    except ValueError:
        return ()


def _float(text: str | None) -> float | None:
    try:
        v = float(text) if text not in (None, "") else None
    except ValueError:
        return None
    return v if v is None or math.isfinite(v) else None


ITEMSIZE = {"f32": 4, "f16": 2, "bf16": 2}


def pct_target(op: str, case: str, shape: tuple[int, ...], itemsize: int = 4) -> tuple[float | None, str]:
    """(minimum % of peak, why) for a row whose first input has ``shape`` elements of ``itemsize`` bytes, or
    (None, '') where no target applies."""
    nbytes = math.prod(shape) * itemsize if shape else 0
    axis_m = re.search(r"-axis(-?\d+|all)", case)
    axis = axis_m.group(1) if axis_m else None
    plain = re.fullmatch(r"[\dx]+(-leaky)?", case) is not None  # contiguous, no layout suffix
    if op in STREAMING and plain and nbytes >= 256 * MIB:
        return 95.0, "streaming >= 256 MiB"
    if op == "copy" and "transposed" in case and len(shape) == 2 and nbytes >= 64 * MIB:
        return 80.0, "transposed copy >= 64 MiB"
    if (
        op == "reduce_sum"
        and len(shape) == 2
        and axis in ("-1", "1", "0")
        and "transposed" not in case
        and re.fullmatch(r"[\dx]+-axis-?\d+", case)
        and nbytes >= 256 * MIB
    ):
        return 95.0, "reduce_sum 2-D >= 256 MiB"
    if op == "softmax" and re.fullmatch(r"[\dx]+-axis-?\d+", case):
        last = axis is not None and (axis == "-1" or (shape and int(axis) == len(shape) - 1))
        if last and shape and nbytes >= 256 * MIB:
            width = shape[-1]
            if width == 65536:
                return 80.0, "softmax width 65536"
            if 128 <= width <= 16384:
                return 90.0, "softmax widths 128..16384"
        if axis == "0" and len(shape) == 2 and nbytes >= 256 * MIB:
            return 80.0, "softmax axis 0"
    return None, ""


def speedup_target(op: str, case_set: str | None) -> float | None:
    if op not in STREAMING | {"reduce_sum", "softmax"}:
        return None
    return {"large": 1.00, "default": 0.95}.get(case_set or "")


def build_rows(path: str, backend: str, peak: float | None, show_all: bool, size_rule: str = "bytes") -> list[dict]:
    sets = _case_sets()
    rows = []
    with open(path, newline="") as fh:
        for r in csv.DictReader(fh):
            if r.get("backend") != backend:
                continue
            op, case, dtype = r.get("op", ""), r.get("case", ""), r.get("dtype", "")
            shape = _first_shape(r.get("shape", ""))
            gbps = _float(r.get("gbps"))
            pct = 100.0 * gbps / peak if (peak and gbps is not None) else _float(r.get("pct_of_peak"))
            speedup = _float(r.get("speedup"))
            case_set = sets.get((op, case))
            if case_set is None and not sets:
                nbytes = math.prod(shape) * 4 if shape else 0
                case_set = "large" if nbytes >= 256 * MIB else None
            itemsize = 4 if size_rule == "f32" else ITEMSIZE.get(dtype, 4)
            tp, why = pct_target(op, case, shape, itemsize)
            ts = speedup_target(op, case_set)
            if tp is None and ts is None and not show_all:
                continue
            ok = r.get("status", "") == "ok"
            target = "; ".join(
                t
                for t in (
                    f">= {tp:.0f}% ({why})" if tp is not None else "",
                    f"speedup >= {ts:.2f} ({case_set})" if ts is not None else "",
                )
                if t
            )
            rows.append(
                {
                    "op": op,
                    "case": case,
                    "dtype": dtype,
                    "status": r.get("status", ""),
                    "gbps": gbps,
                    "pct": pct,
                    "speedup": speedup,
                    "baseline": r.get("baseline", ""),
                    "target": target or "-",
                    "met": _judge(ok, pct, speedup, tp, ts),
                    "kernel": r.get("kernel") or "",  # schema 3 on; older runs have no such column
                    "tp": tp,
                    "ts": ts,
                }
            )
    return rows


def _judge(ok: bool, pct: float | None, speedup: float | None, tp: float | None, ts: float | None) -> str:
    checks = []
    if tp is not None:
        checks.append(ok and pct is not None and pct >= tp)
    if ts is not None:
        checks.append(ok and speedup is not None and speedup >= ts)
    return ("yes" if all(checks) else "no") if checks else "-"


def combine(runs: list[list[dict]], union: bool = False) -> list[dict]:
    """The rows of several runs of the same cases, one per (op, case, dtype) in first-seen order: GB/s, % of peak and
    speedup as the median over the runs that timed the row (with their range), the target judged on those medians;
    status ok only where every run has the row ok (else the first other status, or "in k of n runs"). union: the runs
    are sweeps of different cases (e.g. one op group each), so a row is ok where every run that has it has it ok."""
    n = len(runs)
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for rows in runs:
        for r in rows:
            groups.setdefault((r["op"], r["case"], r["dtype"]), []).append(r)
    out = []
    for rs in groups.values():
        first = rs[0]
        bad = [r["status"] for r in rs if r["status"] != "ok"]
        status = bad[0] if bad else ("ok" if len(rs) == n or union else f"in {len(rs)} of {n} runs")
        vals = {}
        for key in ("gbps", "pct", "speedup"):
            xs = sorted(r[key] for r in rs if r[key] is not None)
            vals[key] = statistics.median(xs) if xs else None
            vals[key + "_range"] = (xs[0], xs[-1]) if len(xs) > 1 else None
        kernels = list(dict.fromkeys(r["kernel"] for r in rs if r["kernel"]))
        out.append({
            **{k: first[k] for k in ("op", "case", "dtype", "baseline", "target", "tp", "ts")},
            "status": status, **vals, "runs": len(rs), "kernel": " / ".join(kernels),
            "met": _judge(status == "ok", vals["pct"], vals["speedup"], first["tp"], first["ts"]),
        })
    return out


def _fmt(v: float | None, spec: str) -> str:
    return "" if v is None else format(v, spec)


def _fmt_speedup(v: float | None) -> str:
    """Three decimals, or four where three would round a miss of a speedup target (0.95, 1.00) up to it."""
    if v is None:
        return ""
    if any(v < t <= round(v, 3) for t in (0.95, 1.0)):
        return format(v, ".4f")
    return format(v, ".3f")


def render(rows: list[dict], kernel: bool = False, nruns: int = 1) -> str:
    baselines = sorted({r["baseline"] for r in rows if r["baseline"]})
    base = "/".join(baselines) or "baseline"
    out = [
        f"| op | case | dtype | GB/s | % of peak | speedup vs {base} | target | met |"
        + (" kernel |" if kernel else ""),
        "| --- | --- | --- | ---: | ---: | ---: | --- | --- |" + (" --- |" if kernel else ""),
    ]
    runs = nruns  # the CSVs given
    # --union: rows judged on fewer runs (without it such rows are not ok: "in k of n runs")
    upto = "up to " if any(r["status"] == "ok" and r.get("runs", 1) < runs for r in rows) else ""

    def spread(r: dict, key: str, fmt) -> str:  # a combined row: "median (min-max)"
        lohi = r.get(key + "_range")
        return fmt(r[key]) + (f" ({fmt(lohi[0])}-{fmt(lohi[1])})" if lohi else "")

    for r in rows:
        status = "" if r["status"] == "ok" else f" ({r['status']})"
        out.append(
            f"| {r['op']} | {r['case']}{status} | {r['dtype']} | {_fmt(r['gbps'], '.0f')} | "
            f"{spread(r, 'pct', lambda v: _fmt(v, '.1f'))} | {spread(r, 'speedup', _fmt_speedup)} | {r['target']} | "
            f"{r['met']} |" + (f" {r['kernel'].replace('|', '/')} |" if kernel else "")
        )
    judged = [r for r in rows if r["met"] != "-"]
    met = sum(r["met"] == "yes" for r in judged)
    out.append("")
    out.append(f"{met} of {len(judged)} rows with a target meet it"
               + (f" (judged on the medians of {upto}{runs} runs; ranges in parentheses)." if runs > 1 else "."))
    return "\n".join(out)


def _short_target(tp: float | None, ts: float | None) -> str:
    """A row's targets in short: "95%, 1.00x", "0.95x", or "-"."""
    parts = ([f"{tp:.0f}%"] if tp is not None else []) + ([f"{ts:.2f}x"] if ts is not None else [])
    return ", ".join(parts) or "-"


def render_markdown(rows: list[dict]) -> str:
    """One run's rows as docs/kernels.md shows them: kernel, GB/s, % of peak, speedup over the baseline, the target
    in short and whether it is met; an op column only where the rows hold more than one op."""
    many = len({r["op"] for r in rows}) > 1
    baselines = sorted({r["baseline"] for r in rows if r["baseline"]})
    base = "/".join(baselines) or "baseline"
    head = ["op"] * many + ["case", "dtype", "kernel", "GB/s", "% of peak", f"speedup vs {base}", "target", "met"]
    align = ["---"] * many + ["---", "---", "---", "---:", "---:", "---:", "---", "---"]
    out = ["| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |"]
    for r in rows:
        status = "" if r["status"] == "ok" else f" ({r['status']})"
        cells = [r["op"]] * many + [
            f"{r['case']}{status}",
            r["dtype"],
            r["kernel"].replace("|", "/") or "-",
            _fmt(r["gbps"], ".0f"),
            _fmt(r["pct"], ".1f"),
            _fmt_speedup(r["speedup"]),
            _short_target(r["tp"], r["ts"]),
            r["met"],
        ]
        out.append("| " + " | ".join(cells) + " |")
    judged = [r for r in rows if r["met"] != "-"]
    out.append("")
    out.append(f"{sum(r['met'] == 'yes' for r in judged)} of {len(judged)} rows with a target meet it.")
    return "\n".join(out)


def provenance(csv_path: str, backend: str, peak: float | None) -> str | None:
    """One line from the run.json beside ``csv_path`` (None when there is none or it does not parse)."""
    try:
        run = json.loads((Path(csv_path).parent / "run.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(run, dict):
        return None

    def obj(v: object) -> dict:  # a JSON object, or {} for anything else (a hand-edited or foreign run.json)
        return v if isinstance(v, dict) else {}

    be = obj(obj(run.get("backends")).get(backend))
    device = be.get("device") or obj(be.get("device_info")).get("name") or "unknown device"
    commit = str(obj(run.get("git")).get("commit") or "unknown")[:7]
    when = str(run.get("started_utc") or "")[:16].replace("T", " ") or "unknown date"
    opts = obj(run.get("options"))
    measured = obj(be.get("peak"))
    gbps = measured.get("gbps")
    if peak:
        against = f"% of {peak:.0f} GB/s (--peak)"
    elif isinstance(gbps, (int, float)):
        against = f"% of the calibrated copy peak, {gbps:.0f} GB/s ({measured.get('source', '')})"
    else:
        against = "% of peak as in the CSV"
    return (f"{device}, {when} UTC, commit {commit}, cases {opts.get('cases', '?')}, flush {opts.get('flush', '?')}; "
            f"{against}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="+", help="a run's results.csv; several: one row per case, the median over the runs")
    ap.add_argument("--backend", default="nvidia")
    ap.add_argument(
        "--peak",
        type=float,
        default=None,
        help="peak in GB/s for %% of peak (e.g. the calibrated D2D copy, 4190); default: the CSV's column",
    )
    ap.add_argument("--all", action="store_true", help="also list rows without a target")
    ap.add_argument(
        "--size-rule",
        choices=("bytes", "f32"),
        default="bytes",
        help="a tensor's size for the size-bound targets: its bytes in the row's dtype (default), or its elements x 4 "
        "(a 16-bit tensor held to the target of the f32 tensor of its shape)",
    )
    ap.add_argument(
        "--kernel",
        action="store_true",
        help="add the kernel column: which of the backend's kernels each row ran (results schema 3 on; empty before)",
    )
    ap.add_argument(
        "--union",
        action="store_true",
        help="several CSVs that sweep different cases (a sweep split by op group): a row is judged on the runs that "
        "have it instead of counting as missing from the others",
    )
    ap.add_argument("--op", default="", help="only the rows of these ops (comma-separated, e.g. softmax)")
    ap.add_argument(
        "--format",
        choices=("table", "markdown"),
        default="table",
        help="table: the judged table (default); markdown: docs/kernels.md's tables, every row, one table per CSV",
    )
    args = ap.parse_args(argv)
    ops = {o.strip() for o in args.op.split(",") if o.strip()}
    if args.format == "markdown" and args.union:
        ap.error("--union combines sweeps; --format markdown prints one table per CSV")
    show_all = args.all or args.format == "markdown"
    per_run = [
        [r for r in build_rows(p, args.backend, args.peak, show_all, args.size_rule) if not ops or r["op"] in ops]
        for p in args.csv
    ]
    if args.format == "markdown":
        blocks = []
        for p, rows in zip(args.csv, per_run):
            line = provenance(p, args.backend, args.peak) or p
            blocks.append(line + "\n\n" + (render_markdown(rows) if rows else f"no rows of backend {args.backend!r}"))
        print("\n\n".join(blocks))
        return 0
    rows = per_run[0] if len(per_run) == 1 else combine(per_run, args.union)
    if not rows:
        print(f"no rows of backend {args.backend!r} in {', '.join(args.csv)}", file=sys.stderr)
        return 0
    lines = [provenance(p, args.backend, args.peak) for p in args.csv]
    if len(args.csv) == 1:
        if lines[0]:
            print(lines[0] + "\n")
    else:
        for i, (p, line) in enumerate(zip(args.csv, lines), 1):
            print(f"run {i}: {line or p}")
        print()
    print(render(rows, args.kernel, len(args.csv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
