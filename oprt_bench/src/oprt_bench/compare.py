"""Comparing two runs row by row, with each row's noise taken into account.

Rows pair by (op, case, dtype, backend). Two timed rows (status ok in both) are classified
with the threshold t (default 5%) and each row's p10..p90 spread:

- ``slower``: new median > old median x (1 + t), and new p10 > old p90 (the spreads do not overlap);
- ``faster``: new median < old median / (1 + t), and new p90 < old p10;
- ``same``: otherwise. ``~`` marks a median that moved beyond t while the spreads overlap:
  a difference the noise cannot tell from none.

Status changes are classified too: ``broken`` (ok -> failed or error), ``fixed`` (failed or error
-> ok), ``changed`` (any other status change); rows in only one run are ``added`` / ``removed``.
Regressions are ``slower`` and ``broken`` rows; ``--fail-on-regression`` exits 1 when there is one.

A pair whose ``kernel`` cells (results schema 3) both name a kernel and differ is marked ``kernel_changed``
whatever its verdict: the row took another path (a launcher's rule, a size threshold), which explains a
median that moved and is worth seeing when it did not. An empty cell (a backend that cannot say, a run of
schema 2 or older) or a failed lookup (``unknown (...)``) is no change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported where rows are built: `oprt-bench --help` stays quick
    import pandas as pd

from .errors import UsageError
from .results import Run

__all__ = ["KEY", "Verdict", "parse_threshold", "classify", "compare_runs", "timing_mismatch", "REGRESSIONS"]

KEY = ("op", "case", "dtype", "backend")
REGRESSIONS = ("slower", "broken")


def parse_threshold(text: str) -> float:
    """``"5%"`` -> 0.05, ``"0.05"`` -> 0.05; UsageError when it is neither."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise UsageError(f"--threshold {text!r} is not a number: give a percentage like 5% or a fraction like 0.05"
                         ) from None
    if not (math.isfinite(value) and value >= 0):
        raise UsageError(f"--threshold {text!r} must be a non-negative percentage (5%) or fraction (0.05)")
    return value


@dataclass(frozen=True)
class Verdict:
    verdict: str  # faster | slower | same | broken | fixed | changed | added | removed | untimed
    ratio: float | None  # new median / old median
    noisy: bool = False  # the median moved beyond the threshold but the spreads overlap


def classify(old: Any, new: Any, threshold: float) -> Verdict:
    """Classify one pair of rows (anything with status, median_ms, p10_ms, p90_ms attributes or keys)."""
    get = (lambda r, k: r[k]) if isinstance(old, dict) else getattr
    os_, ns = get(old, "status"), get(new, "status")
    if os_ != ns:
        if os_ == "ok" and ns in ("failed", "error"):
            return Verdict("broken", None)
        if os_ in ("failed", "error") and ns == "ok":
            return Verdict("fixed", None)
        return Verdict("changed", None)
    om, nm = get(old, "median_ms"), get(new, "median_ms")
    if os_ != "ok" or not (om == om and nm == nm) or om is None or nm is None or om <= 0:
        return Verdict("untimed" if os_ == "ok" else "same", None)
    o10, o90, n10, n90 = get(old, "p10_ms"), get(old, "p90_ms"), get(new, "p10_ms"), get(new, "p90_ms")
    ratio = nm / om
    if ratio > 1 + threshold:
        return Verdict("slower", ratio) if n10 > o90 else Verdict("same", ratio, noisy=True)
    if ratio < 1 / (1 + threshold):
        return Verdict("faster", ratio) if n90 < o10 else Verdict("same", ratio, noisy=True)
    return Verdict("same", ratio)


def timing_mismatch(old: Run, new: Run) -> str:
    """A warning when the rows the two runs share were timed differently (cold / cold-clean / warm: the clean
    flush and warm timing change the medians by themselves), else ""."""
    cols = [*KEY, "timing"]
    if "timing" not in old.rows or "timing" not in new.rows:
        return ""
    a = old.rows[cols].drop_duplicates(KEY, keep="last")
    b = new.rows[cols].drop_duplicates(KEY, keep="last")
    both = a.merge(b, on=list(KEY), suffixes=("_old", "_new"))
    pairs = both[(both["timing_old"] != both["timing_new"]) & both["timing_old"].astype(bool)
                 & both["timing_new"].astype(bool)]
    if pairs.empty:
        return ""
    kinds = sorted({f"{o} -> {n}" for o, n in zip(pairs["timing_old"], pairs["timing_new"])})
    return (f"warning: {len(pairs)} shared row(s) were timed differently ({', '.join(kinds)}): their medians "
            "differ by the method as well as by the code")


def compare_runs(old: Run, new: Run, threshold: float) -> pd.DataFrame:
    """One row per key in either run: old/new status and median, ratio, verdict, noisy."""
    import pandas as pd

    cols = [*KEY, "status", "median_ms", "p10_ms", "p90_ms", "kernel"]
    a = old.rows[cols].drop_duplicates(KEY, keep="last")
    b = new.rows[cols].drop_duplicates(KEY, keep="last")
    merged = a.merge(b, on=list(KEY), how="outer", suffixes=("_old", "_new"), indicator=True, sort=False)
    out = []
    for r in merged.to_dict("records"):
        if r["_merge"] == "left_only":
            v = Verdict("removed", None)
        elif r["_merge"] == "right_only":
            v = Verdict("added", None)
        else:
            fields = ("status", "median_ms", "p10_ms", "p90_ms")
            v = classify({k: r[f"{k}_old"] for k in fields}, {k: r[f"{k}_new"] for k in fields}, threshold)
        ok_, nk = _kernel_cell(r.get("kernel_old")), _kernel_cell(r.get("kernel_new"))
        out.append({**{k: r[k] for k in KEY}, "old_status": r.get("status_old"), "new_status": r.get("status_new"),
                    "old_median_ms": r.get("median_ms_old"), "new_median_ms": r.get("median_ms_new"),
                    "ratio": v.ratio, "verdict": v.verdict, "noisy": v.noisy, "old_kernel": ok_, "new_kernel": nk,
                    "kernel_changed": bool(ok_ and nk and ok_ != nk)})
    return pd.DataFrame(out, columns=[*KEY, "old_status", "new_status", "old_median_ms", "new_median_ms", "ratio",
                                      "verdict", "noisy", "old_kernel", "new_kernel", "kernel_changed"])


def _kernel_cell(value: Any) -> str:
    """A kernel cell as a name: "" for a missing one (a row in one run only, NaN from the merge) and for a failed
    lookup (``unknown (...)``: nothing is known of the path, so it cannot have changed)."""
    return value if isinstance(value, str) and not value.startswith("unknown (") else ""
