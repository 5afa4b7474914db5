"""The verify run in one table: the GPU tests by shard (junit XML), the sweep by op and backend (rows ok and
failed, median % of the calibrated peak, median and lowest speedup over the baseline), the comparison's last line.

    python scripts/verify_summary.py OUTDIR        (a `scripts/gpu-suite.sh OUTDIR verify` folder)

Exit 1 where no test ran, a test failed or errored, a shard's pytest exited non-zero (its `.rc` beside the XML), a
sweep row is not ok, or the comparison found a regression.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd


def tests_table(out: Path) -> tuple[list[str], bool]:
    lines = ["| shard | tests | passed | failed | errors | skipped | s |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    bad = False
    total = [0, 0, 0, 0, 0, 0.0]
    shards = sorted(out.glob("verify-shard-*.xml"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    for xml in shards:
        try:
            root = ET.parse(xml).getroot()
        except ET.ParseError as exc:
            lines.append(f"| {xml.stem} | unreadable: {exc} | | | | | |")
            bad = True
            continue
        suite = root if root.tag == "testsuite" else root.find("testsuite")
        a = suite.attrib if suite is not None else {}
        n, f, e, s = (int(a.get(k, 0)) for k in ("tests", "failures", "errors", "skipped"))
        t = float(a.get("time", 0))
        rc_file = xml.with_suffix(".rc")
        rc = rc_file.read_text().strip() if rc_file.is_file() else "0"
        note = "" if rc == "0" else f" (pytest exit {rc})"
        lines.append(f"| {xml.stem}{note} | {n} | {n - f - e - s} | {f} | {e} | {s} | {t:.0f} |")
        for i, v in enumerate((n, n - f - e - s, f, e, s, t)):
            total[i] += v
        bad |= f + e > 0 or rc != "0"
    if not shards:
        lines.append("| (no shard wrote its XML) | | | | | | |")
        bad = True
    n, p, f, e, s, t = total
    lines.append(f"| all | {n} | {p} | {f} | {e} | {s} | {t:.0f} |")
    return lines, bad or n == 0  # no test ran: nothing was verified


def sweep_table(out: Path) -> tuple[list[str], bool]:
    csv = out / "verify-sweep" / "results.csv"
    if not csv.is_file():
        return ["(no sweep: no op touched, or the sweep did not run)"], False
    rows = pd.read_csv(csv, dtype={"status": str})
    lines = ["| op | backend | rows | ok | not ok | median % of peak | median speedup | lowest speedup |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    bad = False
    for (op, backend), g in rows.groupby(["op", "backend"], sort=True):
        ok = g[g["status"] == "ok"]
        unsupported = (g["status"] == "unsupported").sum()
        not_ok = len(g) - len(ok) - unsupported
        bad |= not_ok > 0
        pct = ok["pct_of_peak"].dropna()
        sp = ok["speedup"].dropna()
        extra = f" (+{unsupported} unsupported)" if unsupported else ""
        cells = [op, backend, str(len(g)), str(len(ok)), f"{not_ok}{extra}",
                 f"{statistics.median(pct):.1f}" if len(pct) else "-",
                 f"{statistics.median(sp):.3f}" if len(sp) else "-", f"{min(sp):.3f}" if len(sp) else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines, bad


def compare_line(out: Path) -> tuple[list[str], bool]:
    log = out / "verify-compare.log"
    if not log.is_file():
        return ["(no comparison: no committed run of the case set)"], False
    text = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    last = next((ln for ln in reversed(text) if "regression" in ln), text[-1] if text else "(empty)")
    bad = "regression" in last and not last.split("regression")[0].rstrip().endswith(" 0")
    return [f"compare with the committed run: {last.strip()}"], bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", type=Path)
    args = ap.parse_args(argv)
    if not args.outdir.is_dir():
        print(f"verify_summary: {args.outdir} is not a folder", file=sys.stderr)
        return 2
    bad = False
    for title, (lines, b) in (("GPU tests", tests_table(args.outdir)), ("sweep", sweep_table(args.outdir)),
                              ("", compare_line(args.outdir))):
        if title:
            print(f"\n{title}")
        print("\n".join(lines))
        bad |= b
    print(f"\nverify: {'FAILED' if bad else 'passed'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
