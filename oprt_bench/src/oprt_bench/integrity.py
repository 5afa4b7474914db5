"""Whether a run read back is whole, and its rows in the order its plan lists them.

``oprt-bench table`` and ``oprt-bench report`` check a run as ``compare`` does before showing it: lines of
results.csv that are not whole rows (:func:`oprt_bench.compare.csv_damage`: a file cut mid-row, a malformed line,
an ok row whose timing is not a number), a run.json status other than ``complete`` (interrupted, failed, still
running), and rows run.json's plan lists (every op's cases x dtypes x backends) that the rows lack: a results.csv
that lost its last rows. The rows of damaged lines are left out of the tables (their cells cannot be trusted).

Rows are listed in plan order (op, case, dtype, backend as run.json's plan lists them), whatever the order they
were written in (a ``--cluster`` run writes them as they complete, a resumed run after the kept ones).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oprt_core.dtypes import OPT_IN_DTYPES

from .compare import KEY, Damage, csv_damage

if TYPE_CHECKING:
    import pandas as pd

    from .results import Run

__all__ = ["RunCheck", "check_run", "readable_rows", "plan_key", "plan_order", "planned_keys"]

SHOWN_KEYS = 8  # missing rows named in a message; the rest are counted


def _sweep_plan(meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """run.json's plan where it is a sweep's (ops, their case names, dtypes and backends), else {} (a merged run's
    plan lists no cases)."""
    plan = (meta or {}).get("plan")
    if not isinstance(plan, dict) or not isinstance(plan.get("cases"), dict):
        return {}
    if not all(isinstance(plan.get(k), list) for k in ("ops", "dtypes", "backends")):
        return {}
    return plan


def plan_key(meta: Mapping[str, Any] | None) -> Callable[[Mapping[Any, Any]], tuple[int, int, int, int]]:
    """The sort key of a row in the order run.json's plan lists its op, case (among its op's), dtype and backend;
    what the plan does not list sorts after what it does (a stable sort keeps their order)."""
    plan = _sweep_plan(meta)

    def index(values: Any) -> dict[str, int]:
        return {str(v): i for i, v in enumerate(values)} if isinstance(values, list) else {}

    ops, dtypes, backends = index(plan.get("ops")), index(plan.get("dtypes")), index(plan.get("backends"))
    cases = {str(op): index(names) for op, names in (plan.get("cases") or {}).items()}

    def key(row: Mapping[Any, Any]) -> tuple[int, int, int, int]:
        op = str(row.get("op"))
        of_op = cases.get(op, {})
        return (ops.get(op, len(ops)), of_op.get(str(row.get("case")), len(of_op)),
                dtypes.get(str(row.get("dtype")), len(dtypes)), backends.get(str(row.get("backend")), len(backends)))

    return key


def plan_order(rows: Sequence[Mapping[Any, Any]], meta: Mapping[str, Any] | None) -> list[int]:
    """The positions of ``rows`` in plan order (:func:`plan_key`)."""
    key = plan_key(meta)
    return sorted(range(len(rows)), key=lambda i: key(rows[i]))


def planned_keys(meta: Mapping[str, Any] | None, present: set[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The (op, case, dtype, backend) of every row run.json's plan lists, in plan order; an opt-in dtype (e4m3)
    only for the ops with a row of it in ``present`` (the plan does not say which ops declare it)."""
    plan = _sweep_plan(meta)
    opted = {(k[0], k[2]) for k in present}
    return [(str(op), str(case), str(dtype), str(backend))
            for op in plan.get("ops", []) for case in (plan["cases"].get(op) or [])
            for dtype in plan.get("dtypes", []) if dtype not in OPT_IN_DTYPES or (str(op), str(dtype)) in opted
            for backend in plan.get("backends", [])]


@dataclass
class RunCheck:
    """What is wrong with a run read back; nothing when it is whole."""

    lines: list[Damage] = field(default_factory=list)  # results.csv lines that are not whole rows
    missing: list[tuple[str, ...]] = field(default_factory=list)  # rows the plan lists that the run lacks
    unfinished: str = ""  # why run.json says the run did not finish, "" when it did (or there is no run.json)
    counted: tuple[int, int] | None = None  # (rows present, rows run.json counts) where fewer are present

    @property
    def damaged(self) -> bool:
        return bool(self.lines or self.missing or self.unfinished or self.counted)

    def messages(self) -> list[str]:
        """One line per kind of damage, naming the lines and the missing rows."""
        out = []
        if self.unfinished:
            out.append(self.unfinished)
        for d in self.lines:
            where = f" ({' '.join(d.key)})" if d.key else ""
            out.append(f"results.csv line {d.line}{where}: {d.reason}; left out")
        if self.missing:
            named = ", ".join(" ".join(k) for k in self.missing[:SHOWN_KEYS])
            more = f" and {len(self.missing) - SHOWN_KEYS} more" if len(self.missing) > SHOWN_KEYS else ""
            out.append(f"{len(self.missing)} row(s) of run.json's plan missing from the results: {named}{more}")
        if self.counted:
            out.append(f"{self.counted[0]} row(s) in the results, run.json counts {self.counted[1]}")
        return out


def check_run(run: Run, source: Path | str) -> RunCheck:
    """Check ``run``, read from ``source`` (what :func:`oprt_bench.results.load_run` read), as ``compare`` checks
    a run: its damaged lines, its run.json status, the rows its plan lists and its counts against the rows."""
    check = RunCheck(lines=csv_damage(source))
    status = run.meta.get("status") if run.meta else None
    if run.meta and status != "complete":
        check.unfinished = f"did not finish: run.json status {status!r}"
    rows = run.rows
    present = set(zip(*(rows[k].astype(str) for k in KEY))) if len(rows) else set()
    check.missing = [k for k in planned_keys(run.meta, present) if k not in present]
    counts = run.meta.get("counts") if run.meta else None
    if isinstance(counts, dict) and not check.missing:
        total = sum(int(n) for n in counts.values() if isinstance(n, (int, float)))
        if len(rows) < total:
            check.counted = (len(rows), total)
    return check


def readable_rows(run: Run, check: RunCheck) -> pd.DataFrame:
    """The run's rows less those of damaged lines, in plan order. A line's row is the one at its position (line - 2:
    the header is line 1) where that row has the line's key, else the rows of that key."""
    records = run.rows.to_dict("records")
    keys = [tuple(str(r[k]) for k in KEY) for r in records]
    drop: set[int] = set()
    for d in check.lines:
        at = d.line - 2
        if 0 <= at < len(keys) and (d.key is None or keys[at] == d.key):
            drop.add(at)
        else:
            drop.update(i for i, k in enumerate(keys) if k == d.key)
    kept = [i for i in range(len(records)) if i not in drop]
    order = plan_order([records[i] for i in kept], run.meta)
    return run.rows.iloc[[kept[i] for i in order]].reset_index(drop=True)
