"""What the inspecting subcommands show: installed backends, registered ops, a comparison of two runs.

Each view is built as plain data first (``--json`` prints it as is), then rendered as rich tables.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from oprt_core import Registry

from .availability import availability, device_info
from .model import AVAILABILITY_TIMEOUT_S
from .results import frame_records, json_safe

if TYPE_CHECKING:  # pandas and rich are imported where they are used: `oprt-bench --help` stays quick
    from rich.console import Console

    from .compare import Comparison

__all__ = ["backend_rows", "op_rows", "backends_text", "ops_text", "comparison_json", "print_backends", "print_ops",
           "print_comparison", "console"]


def console(err: bool = False) -> Console:
    from rich.console import Console

    stream = sys.stderr if err else sys.stdout
    return Console(file=stream, width=None if stream.isatty() else 200, highlight=False)


def backend_rows(registry: Registry, timeout_s: float = AVAILABILITY_TIMEOUT_S) -> list[dict[str, Any]]:
    """Every registered backend: available or not and why, device, flavour, versions. A backend whose
    availability check raises or outlasts ``timeout_s`` is listed unavailable with that reason."""
    rows = []
    for name, backend in registry.backends.items():
        ok, reason, device = availability(backend, timeout_s)
        info = device_info(backend, timeout_s)
        rows.append({"name": name, "plugin": registry.owner.get(("backend", name)), "available": ok,
                     "reason": reason, "device": device or info.get("name", ""), "flavour": info.get("flavour", ""),
                     "driver": info.get("driver_version", ""), "toolkit": info.get("toolkit", ""),
                     "device_info": info})
    return rows


def op_rows(registry: Registry) -> list[dict[str, Any]]:
    """Every registered op: inputs (and which of them may be left out), dtypes, params with their defaults, case sets
    with their sizes."""
    rows = []
    for name, spec in registry.ops.items():
        rows.append({
            "name": name, "doc": spec.doc, "inputs": list(spec.input_names),
            "optional_inputs": list(getattr(spec, "optional_inputs", ())), "dtypes": list(spec.dtypes),
            "params": [{"name": p.name, "default": p.default, "types": [t.__name__ for t in p.types],
                        "allow_none": p.allow_none, "doc": p.doc} for p in spec.params],
            "case_sets": {k: {"count": len(v), "cases": [c.name for c in v]} for k, v in spec.case_sets.items()},
        })
    return rows


def backends_text(plugins: list[dict[str, Any]], backends: list[dict[str, Any]]) -> str:
    return json.dumps({"plugins": plugins, "backends": backends}, indent=2, default=str)


def ops_text(rows: list[dict[str, Any]]) -> str:
    return json.dumps({"ops": rows}, indent=2, default=str)


def print_backends(out: Console, plugins: list[dict[str, Any]], backends: list[dict[str, Any]]) -> None:
    from rich.table import Table

    t = Table(title="plugins", title_justify="left")
    for col in ("plugin", "distribution", "version", "backends", "ops", "load error"):
        t.add_column(col, overflow="fold")
    for p in plugins:
        t.add_row(p["name"], p["distribution"] or "", p["version"] or "", ", ".join(p["backends"]),
                  ", ".join(p["ops"]), p["error"] or "", style="red" if p["error"] else None)
    out.print(t)
    t = Table(title="backends", title_justify="left")
    for col in ("backend", "plugin", "available", "device", "flavour", "driver", "toolkit", "reason"):
        t.add_column(col, overflow="fold")
    for b in backends:
        t.add_row(b["name"], b["plugin"] or "", "yes" if b["available"] else "no", b["device"], b["flavour"],
                  b["driver"], b["toolkit"], b["reason"], style=None if b["available"] else "yellow")
    out.print(t)


def print_ops(out: Console, rows: list[dict[str, Any]]) -> None:
    from rich.table import Table

    t = Table(title="ops", title_justify="left")
    for col in ("op", "inputs", "params", "dtypes", "case sets", "doc"):
        t.add_column(col, overflow="fold")
    for r in rows:
        params = ", ".join(f"{p['name']}={p['default']!r}" for p in r["params"])
        sets = ", ".join(f"{k} {v['count']}" for k, v in r["case_sets"].items())
        inputs = ", ".join(f"{n}=None" if n in r["optional_inputs"] else n for n in r["inputs"])
        t.add_row(r["name"], inputs, params, ", ".join(r["dtypes"]), sets, r["doc"])
    out.print(t)


def comparison_json(cmp: Comparison, threshold: float, warning: str, kernels: int) -> str:
    table = cmp.table
    counts = table["verdict"].value_counts().to_dict()
    return json.dumps({"threshold": threshold, "counts": counts, "regressions": cmp.regressions, "warning": warning,
                       "kernel_changes": kernels, "unjudged": cmp.unjudged,
                       "problems": [p.to_dict() for p in cmp.problems], "notes": cmp.notes,
                       "scatter": cmp.scatter.to_dict() if cmp.scatter else None, "passed": not cmp.failed(),
                       "rows": json_safe(frame_records(table))},
                      indent=2, default=str)


def print_comparison(out: Console, cmp: Comparison, title: str, show_all: bool, kernels: int) -> None:
    """The changed rows (every row with ``show_all``), what could not be judged, and a count per verdict."""
    from rich.table import Table

    table = cmp.table
    counts = table["verdict"].value_counts().to_dict()
    shown = table if show_all else table[(table["verdict"] != "same") | table["noisy"] | table["kernel_changed"]]
    rt = Table(title=title, title_justify="left")
    for col in ("op", "case", "dtype", "backend", "old ms", "new ms", "new/old", "verdict") + (
            ("kernel",) if kernels else ()):
        rt.add_column(col, justify="right" if col in ("old ms", "new ms", "new/old") else "left")
    styles = {"slower": "red", "broken": "red", "faster": "green", "fixed": "green", "removed": "yellow",
              "lost": "yellow", "unreadable": "yellow", "noisy": "yellow"}
    for r in shown.to_dict("records"):
        ms = lambda v: "" if v != v or v is None else f"{v:.4g}"  # noqa: E731
        old_ms = ms(r["old_median_ms"]) if r["old_status"] == "ok" else str(r["old_status"] or "")
        new_ms = ms(r["new_median_ms"]) if r["new_status"] == "ok" else str(r["new_status"] or "")
        ratio = "" if r["ratio"] is None or r["ratio"] != r["ratio"] else f"{r['ratio']:.3f}"
        verdict = r["verdict"] + (" ~" if r["noisy"] else "") + (" (shift)" if r.get("shift") else "")
        need = r["min_change"]
        if r["verdict"] == "noisy" and need is not None and need == need:  # NaN: no figure
            verdict += f" (needs {need:.0%})" if need < float("inf") else " (no change would show)"
        kernel = (f"{r['old_kernel']} -> {r['new_kernel']}" if r["kernel_changed"] else "",) if kernels else ()
        rt.add_row(r["op"], r["case"], r["dtype"], r["backend"], old_ms, new_ms, ratio, verdict, *kernel,
                   style=styles.get(r["verdict"]))
    out.print(rt)
    for note in cmp.notes:
        out.print(f"note: {note}")
    for p in cmp.problems:
        out.print(f"{'accepted' if p.allowed else 'cannot judge'} ({p.kind}): {p.message}"
                  + ("" if p.allowed else f" [{p.flag} accepts it]"), style=None if p.allowed else "yellow")
    unjudged = cmp.unjudged
    blocking = cmp.blocking
    out.print(f"{len(table)} rows: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
              + f"; {cmp.regressions} regression(s)"
              + f"; {sum(unjudged.values())} not judged"
              + (" (" + ", ".join(f"{n} {why}" for why, n in sorted(unjudged.items())) + ")" if unjudged else "")
              + (f"; {len(blocking)} problem(s) unaccepted: "
                 + ", ".join(sorted({p.kind for p in blocking})) if blocking else "")
              + (f"; {kernels} took another kernel" if kernels else "")
              + ". '~' = moved beyond the threshold within the noise; 'noisy (needs X%)' = only a change of X% would "
                "have shown; '(shift)' = judged with its op's or the run's rows, which moved together.")
