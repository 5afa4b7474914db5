#!/usr/bin/env python3
"""Check a sweep of a faulting test backend: every planned fault cost its own rows, nothing else failed.

    python scripts/check_faults.py RUN_DIR --plan "relu/1000:trap,copy/33x65-transposed:oob" --backend faultygpu

RUN_DIR is an oprt-bench run folder (its results.csv); ``--plan`` the ``OPRT_FAULTY_PLAN`` the sweep ran with
(tests/plugins/oprt-faultyplugin); ``--backend`` the faulting backend (``faulty`` or ``faultygpu``). Checked:

- each row of ``--backend`` at a planned ``op/case[/dtype]`` is ``error`` (``failed`` for ``wrong``) and its
  message names the fault: ``trap`` a launch failure, ``oob`` an illegal memory access (both sticky, with the
  worker replaced), ``gpuhang`` and ``hang`` a timeout, ``segv``/``abort`` the signal, ``raise`` the planned error;
- every other row, of every backend, is ``ok``: the rows after a fault ran in a fresh worker (a sticky device
  error left behind would fail them too).

Prints one line per planned row and a verdict; exit status 0 when every check holds, 1 when one does not,
2 on bad arguments or an unreadable run.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

# what the message of a planned row must contain, by action
EXPECTED = {
    "trap": ("launch failure", "sticky device error; worker replaced"),
    "oob": ("illegal memory access", "sticky device error; worker replaced"),
    "gpuhang": ("timed out after", "worker killed and replaced"),
    "hang": ("timed out after", "worker killed and replaced"),
    "segv": ("killed by SIGSEGV", "worker replaced"),
    "abort": ("killed by SIGABRT", "worker replaced"),
    "raise": ("planned failure",),
    "wrong": (),
}


def parse_plan(text: str) -> dict[str, str]:
    """``"relu/1000:trap,copy/1000/f16:oob"`` -> ``{"relu/1000": "trap", "copy/1000/f16": "oob"}``."""
    plan: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        where, sep, what = part.rpartition(":")
        if not sep or what not in EXPECTED or where.count("/") not in (1, 2):
            raise ValueError(f"bad plan entry {part!r}; expected OP/CASE[/DTYPE]:{'|'.join(EXPECTED)}")
        plan[where] = what
    return plan


def planned(plan: dict[str, str], row: dict[str, str]) -> str | None:
    for where in (f"{row['op']}/{row['case']}/{row['dtype']}", f"{row['op']}/{row['case']}"):
        if where in plan:
            return plan[where]
    return None


def check(rows: list[dict[str, str]], plan: dict[str, str], backend: str) -> list[str]:
    """The problems found (empty: every check holds); prints one line per planned row."""
    problems: list[str] = []
    hit: set[str] = set()
    if not any(r["backend"] == backend for r in rows):
        return [f"no row of backend {backend!r}"]
    for r in rows:
        name = f"{r['backend']} {r['op']}/{r['case']}/{r['dtype']}"
        what = planned(plan, r) if r["backend"] == backend else None
        if what is None:
            if r["status"] != "ok":
                problems.append(f"{name}: {r['status']} ({r['message']}), expected ok")
            continue
        hit.update(w for w in (f"{r['op']}/{r['case']}/{r['dtype']}", f"{r['op']}/{r['case']}") if w in plan)
        want = "failed" if what == "wrong" else "error"
        missing = [s for s in EXPECTED[what] if s not in (r["message"] or "")]
        verdict = "ok" if r["status"] == want and not missing else "WRONG"
        print(f"{verdict:5} {name} [{what}]: {r['status']}: {r['message']}")
        if r["status"] != want:
            problems.append(f"{name} [{what}]: {r['status']}, expected {want}")
        elif missing:
            problems.append(f"{name} [{what}]: the message does not name the fault ({', '.join(missing)})")
    for where in sorted(set(plan) - hit):
        problems.append(f"planned {where} ({plan[where]}) matched no row of {backend}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--plan", required=True, help="the OPRT_FAULTY_PLAN of the sweep")
    ap.add_argument("--backend", default="faultygpu", help="the faulting backend (default faultygpu)")
    args = ap.parse_args(argv)
    try:
        plan = parse_plan(args.plan)
        with (args.run_dir / "results.csv").open(newline="") as f:
            rows = list(csv.DictReader(f))
    except (OSError, ValueError) as exc:
        print(f"check_faults: {exc}", file=sys.stderr)
        return 2
    problems = check(rows, plan, args.backend)
    others = sum(1 for r in rows if r["status"] == "ok")
    for p in problems:
        print("FAIL " + p)
    print(f"{len(rows)} rows, {others} ok; {'FAILED: ' + str(len(problems)) + ' problem(s)' if problems else 'PASS'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
