"""Comparing two runs row by row, with each row's noise taken into account, and refusing to pass what cannot be
judged.

Rows pair by (op, case, dtype, backend). Two timed rows (status ok in both) are judged by their medians and
bounds: a row's bounds are its p10..p90 spread stretched SPREAD_K = 3 times about its median, widened to the
median's 95% CI (median x (1 +- ci_rel)) where that is wider. With t the threshold (default 5%):

- ``slower``: new median > old median x (1 + t), and the new low bound > the old high bound;
- ``faster``: new median < old median / (1 + t), and the new high bound < the old low bound;
- ``same``: otherwise, where the pair could have shown a change of t: ``~`` marks a median that moved beyond t
  within the bounds;
- ``noisy``: otherwise, where the pair's bounds are so wide that only a change larger than t could have turned it
  slower (its ``min_change``): the pair cannot be judged at this threshold.

A change that moves many rows one way is found even where each row alone is too noisy: in the whole run and in
each (op, backend) of at least SHIFT_MIN_ROWS timed pairs, a sign test on the ratios (one-sided binomial, p <
SHIFT_P) whose geometric mean is beyond t marks a shift; the rows of a shifted group that moved beyond t its way
are ``slower`` (``faster``) whatever their own bounds, with ``shift`` naming the group. A uniform 2x slowdown is
never ``same``.

A row's bounds see the noise within one run, not what differs between the two runs (a load spike on a shared host
that lasts one row's whole sampling moves its median and leaves its spread tight). The pair of runs measures that
itself: with at least SHIFT_MIN_ROWS timed pairs outside shifted ops, their log ratios' median and robust spread
(1.4826 x the median absolute deviation, ``scatter``) say how far rows move between these two runs when nothing
happened to them; a row alone is ``slower`` (``faster``) only beyond SCATTER_K = 3 scatters above (below) that
median ratio, and its ``min_change`` is at least that. Identical code on a quiet GPU scatters by tenths of a percent
(no effect at 5%); on a loaded CPU host by tens of percent, where a row alone then needs a change of 2x or more. A
change that moves most rows is a shift (above), not a row's.

SPREAD_K = 1 would be the p10..p90 spreads as measured; runs of identical code on one host differ by more than
that (the spread of one run does not see what changes between runs), see docs/measurement.md for the
measurement behind 3.

Status changes are classified too: ``broken`` (ok -> failed or error), ``fixed`` (failed or error -> ok),
``changed`` (any other status change); rows in only one run are ``added`` / ``removed``; a pair whose timing
cannot be read is ``unreadable``, one that was not timed (``--mode test``) ``untimed``.
Regressions are ``slower`` and ``broken`` rows.

What cannot be judged is a :class:`Problem` of a kind (``PROBLEM_FLAGS``): rows missing in NEW, rows ok in OLD and
not in NEW (other than broken), a NEW run that did not finish (or has no run.json), unreadable rows or lines,
different modes, different provenance (device, dtype set, cold/warm and flush, concurrency: rows timed by one
process against several workers on one host, or a cluster), rows too noisy to judge. Each is named in the output and
fails ``--fail-on-regression`` unless its ``--allow-*`` flag accepts it.

A pair whose ``kernel`` cells (results schema 3) both name a kernel and differ is marked ``kernel_changed``
whatever its verdict: the row took another path (a launcher's rule, a size threshold), which explains a
median that moved and is worth seeing when it did not. An empty cell (a backend that cannot say, a run of
schema 2 or older) or a failed lookup (``unknown (...)``) is no change.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported where rows are built: `oprt-bench --help` stays quick
    import pandas as pd

from .errors import UsageError
from .results import COLUMNS, CSV_NAME, RESULTS_JSON, Run

__all__ = ["KEY", "Verdict", "Problem", "Comparison", "PROBLEM_FLAGS", "SPREAD_K", "TIMED_MODES", "parse_threshold",
           "classify", "compare_runs", "judge", "timing_mismatch", "csv_damage", "REGRESSIONS", "UNJUDGED", "Shift",
           "find_shift", "apply_shifts", "concurrency", "Scatter", "run_scatter", "SCATTER_K"]

KEY = ("op", "case", "dtype", "backend")
REGRESSIONS = ("slower", "broken")
SPREAD_K = 3.0
SHIFT_MIN_ROWS = 8  # timed pairs a group needs before its ratios are tested for a shift
SHIFT_P = 1e-3  # the sign test's one-sided p below which a group's ratios moved one way
SCATTER_K = 3.0  # scatters beyond the run pair's median ratio a row alone must move (see the module doc)
TIMED_MODES = ("bench", "all")  # modes whose ok rows carry a median
# verdicts of rows that were not judged, with the reason the summary gives
UNJUDGED = {"removed": "missing in NEW", "lost": "no longer ok in NEW", "unreadable": "unreadable",
            "untimed": "not timed", "noisy": "too noisy for the threshold"}
# what cannot be judged, and the flag that accepts it
PROBLEM_FLAGS = {"missing": "--allow-missing", "status": "--allow-status", "incomplete": "--allow-incomplete",
                 "unreadable": "--allow-unreadable", "mode": "--allow-mode-mismatch",
                 "provenance": "--allow-provenance", "noisy": "--allow-noisy"}
_TIMING_FIELDS = ("median_ms", "p10_ms", "p90_ms")


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
    # faster | slower | same | noisy | broken | fixed | changed | lost | added | removed | untimed | unreadable
    verdict: str
    ratio: float | None  # new median / old median
    noisy: bool = False  # the median moved beyond the threshold but within the noise
    min_change: float | None = None  # the relative change this pair's noise allows (see the module doc)


def _num(value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return math.nan
    return x


def _bounds(row: Any, get: Any) -> tuple[float, float]:
    """The row's p10..p90 spread stretched SPREAD_K times about its median, joined with the median's 95% CI."""
    m, p10, p90 = (_num(get(row, k)) for k in _TIMING_FIELDS)
    c = _ci(row, get)
    return min(m - SPREAD_K * (m - p10), m * (1 - c)), max(m + SPREAD_K * (p90 - m), m * (1 + c))


def _ci(row: Any, get: Any) -> float:
    try:
        c = _num(get(row, "ci_rel"))
    except (KeyError, AttributeError):  # rows without the column (older runs, hand-made rows)
        return 0.0
    return c if math.isfinite(c) and c >= 0 else 0.0


def classify(old: Any, new: Any, threshold: float) -> Verdict:
    """Classify one pair of rows (anything with status, median_ms, p10_ms, p90_ms and optionally ci_rel, as
    attributes or keys).

    ``slower``: new median > old median x (1 + t) and the new row's low bound > the old row's high bound, where a
    row's bounds are its p10..p90 spread stretched SPREAD_K times about its median, widened to the median's 95%
    CI (median x (1 +- ci_rel)) where that is wider; ``faster`` mirrored; else ``same``, or ``noisy`` where the
    bounds ask more than the threshold. ``min_change`` is the ratio - 1 at which the pair would turn slower (the
    threshold or the bounds, whichever asks more)."""
    get = (lambda r, k: r[k]) if isinstance(old, dict) else getattr
    os_, ns = get(old, "status"), get(new, "status")
    if os_ != ns:
        if os_ == "ok" and ns in ("failed", "error"):
            return Verdict("broken", None)
        if os_ in ("failed", "error") and ns == "ok":
            return Verdict("fixed", None)
        return Verdict("lost" if os_ == "ok" else "changed", None)
    if os_ != "ok":
        return Verdict("same", None)
    values = [_num(get(r, k)) for r in (old, new) for k in _TIMING_FIELDS]
    if not all(math.isfinite(v) and v >= 0 for v in values) or values[0] <= 0 or values[3] <= 0:
        return Verdict("unreadable", None)
    om, nm = values[0], values[3]
    ratio = nm / om
    (o_lo, o_hi), (n_lo, n_hi) = _bounds(old, get), _bounds(new, get)
    # the ratio at which the new row's low bound (which scales with its median) clears the old high bound
    low_share = n_lo / nm
    need = max(threshold, (o_hi / om) / low_share - 1 if low_share > 0 else math.inf)
    moved = ratio > 1 + threshold or 1 / ratio > 1 + threshold
    if ratio > 1 + threshold and n_lo > o_hi:
        return Verdict("slower", ratio, min_change=need)
    if 1 / ratio > 1 + threshold and n_hi < o_lo:
        return Verdict("faster", ratio, min_change=need)
    # the bounds ask more than the threshold: a change of t would not have shown (a float's rounding is no excess)
    judged = need <= threshold * (1 + 1e-9)
    return Verdict("same" if judged else "noisy", ratio, noisy=moved, min_change=need)


def timing_mismatch(old: Run, new: Run) -> str:
    """A warning when the rows the two runs share were timed differently (cold / cold-clean / warm: the clean
    flush and warm timing change the medians by themselves), else ""."""
    pairs = _shared_pairs(old, new, "timing")
    if not pairs:
        return ""
    kinds = sorted({f"{o} -> {n}" for o, n in pairs})
    return (f"warning: {len(pairs)} shared row(s) were timed differently ({', '.join(kinds)}): their medians "
            "differ by the method as well as by the code")


def _shared_pairs(old: Run, new: Run, column: str) -> list[tuple[str, str]]:
    """(old, new) cells of ``column`` for the shared rows where both are set and differ."""
    if column not in old.rows or column not in new.rows:
        return []
    cols = [*KEY, column]
    a = old.rows[cols].drop_duplicates(list(KEY), keep="last")
    b = new.rows[cols].drop_duplicates(list(KEY), keep="last")
    both = a.merge(b, on=list(KEY), suffixes=("_old", "_new"))
    o, n = both[f"{column}_old"].astype(str), both[f"{column}_new"].astype(str)
    keep = (o != n) & (o != "") & (n != "")
    return list(zip(o[keep], n[keep]))


# -- damaged files -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Damage:
    """A line of results.csv that cannot be read as a whole row."""

    line: int
    key: tuple[str, ...] | None  # the row's key when the line holds it
    reason: str


def csv_damage(source: Path | str) -> list[Damage]:
    """Lines of the results.csv ``source`` stands for (a run folder or the file; none for results.json) that are
    not whole rows: a line with fewer or more cells than the header (a file cut mid-row), a line the file does
    not end (no newline after it), an ok row of a timed mode whose median, p10 or p90 is not a number."""
    path = Path(source)
    if path.is_dir():
        path = path / CSV_NAME if (path / CSV_NAME).is_file() else path / RESULTS_JSON
    if path.suffix == ".json" or not path.is_file():
        return []
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = list(csv.reader(text.splitlines(keepends=True)))
    if not lines:
        return []
    header, out = lines[0], []
    ends_cut = not text.endswith("\n")
    idx = {c: i for i, c in enumerate(header)}
    key_at = [idx.get(c, len(header)) for c in KEY]  # a column the header lacks: no key
    for n, cells in enumerate(lines[1:], start=2):
        key = tuple(cells[i] for i in key_at) if all(i < len(cells) for i in key_at) else None
        if len(cells) != len(header) or (ends_cut and n == len(lines)):
            why = (f"cut: {len(cells)} of {len(header)} cells" if len(cells) < len(header)
                   else f"{len(cells)} cells, the header has {len(header)}" if len(cells) > len(header)
                   else "cut: the file ends inside it")
            out.append(Damage(n, key, why))
            continue
        row = dict(zip(header, cells))
        if row.get("status") == "ok" and row.get("mode") != "test":
            bad = [f"{c} {row.get(c)!r}" for c in _TIMING_FIELDS if not _number_text(row.get(c))]
            if bad:
                out.append(Damage(n, key, "not a number: " + ", ".join(bad)))
    return out


def _number_text(text: str | None) -> bool:
    x = _num(text)
    return math.isfinite(x) and x >= 0


# -- judging two runs ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Problem:
    """Something that keeps the comparison from being a judgement of every row."""

    kind: str  # a key of PROBLEM_FLAGS
    message: str
    rows: int = 0  # rows it concerns (0: the run as a whole)
    allowed: bool = False

    @property
    def flag(self) -> str:
        return PROBLEM_FLAGS[self.kind]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "rows": self.rows, "allowed": self.allowed,
                "flag": self.flag}


@dataclass
class Comparison:
    table: pd.DataFrame
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    scatter: Scatter | None = None  # the run pair's (None: too few timed rows to measure it)

    @property
    def regressions(self) -> int:
        return int(self.table["verdict"].isin(REGRESSIONS).sum())

    @property
    def blocking(self) -> list[Problem]:
        return [p for p in self.problems if not p.allowed]

    @property
    def unjudged(self) -> dict[str, int]:
        """Rows not judged, by reason."""
        counts = Counter(UNJUDGED[v] for v in self.table["verdict"] if v in UNJUDGED)
        return dict(counts)

    def failed(self) -> bool:
        """What ``--fail-on-regression`` fails on: a regression, or a problem no flag accepted."""
        return bool(self.regressions or self.blocking)


def judge(old: Run, new: Run, threshold: float, allow: Iterable[str] = (), old_source: Path | str | None = None,
          new_source: Path | str | None = None) -> Comparison:
    """Compare two runs and list what cannot be judged; ``allow`` holds the problem kinds accepted knowingly,
    the sources (what ``load_run`` read) are checked for damaged lines."""
    allowed = set(allow)
    unknown = allowed - set(PROBLEM_FLAGS)
    if unknown:
        raise ValueError(f"unknown problem kind(s): {', '.join(sorted(unknown))}")
    damage = {"OLD": csv_damage(old_source) if old_source is not None else [],
              "NEW": csv_damage(new_source) if new_source is not None else []}
    bad_keys = {k: {d.key for d in ds if d.key is not None} for k, ds in damage.items()}
    table, scatter = _table(old, new, threshold, bad_keys["OLD"] | bad_keys["NEW"])
    problems: list[Problem] = []

    def add(kind: str, message: str, rows: int = 0) -> None:
        problems.append(Problem(kind, message, rows, kind in allowed))

    notes: list[str] = []
    for side, run in (("NEW", new), ("OLD", old)):
        status = run.meta.get("status") if run.meta else None
        if status == "complete":
            continue
        what = (f"{side} has no run.json: whether the run finished is unknown" if not run.meta
                else f"{side} did not finish: run.json status {status!r}")
        if side == "NEW":
            add("incomplete", what)
        else:
            notes.append(what + " (its missing rows show as added)")
    verdicts = table["verdict"]
    removed = int((verdicts == "removed").sum())
    if removed:
        add("missing", f"{removed} row(s) of OLD are missing in NEW", removed)
    lost = table[verdicts == "lost"]
    if len(lost):
        kinds = ", ".join(f"{n} {s}" for s, n in sorted(Counter(lost["new_status"]).items()))
        add("status", f"{len(lost)} row(s) ok in OLD are not ok in NEW ({kinds})", len(lost))
    for side, ds in damage.items():
        for d in ds:
            add("unreadable", f"{side} results.csv line {d.line}: {d.reason}", 1)
    keys = table[list(KEY)].astype(str).apply(tuple, axis=1) if len(table) else []
    other = int(sum(v == "unreadable" and k not in bad_keys["OLD"] | bad_keys["NEW"] for v, k in zip(verdicts, keys)))
    if other:
        add("unreadable", f"{other} row(s) ok in both lack a median, p10 or p90 that is a number", other)
    noisy = table[verdicts == "noisy"]
    if len(noisy):
        need = noisy["min_change"].astype(float)
        finite = need[need < math.inf]
        span = (f"only a change of {finite.min():.1%} to {finite.max():.1%} (median {finite.median():.1%}) would have "
                "shown" if len(finite) else "")
        unbounded = len(need) - len(finite)
        if unbounded:  # a low bound at or below 0: no slowdown at all could clear it
            span += ("; " if span else "") + f"{unbounded} row(s) so noisy that no change would show"
        add("noisy", f"{len(noisy)} row(s) too noisy to judge at {threshold:.1%}: {span}; time them longer "
                     "(--time-budget, --target-ci) or raise --threshold", len(noisy))
    if scatter is not None and scatter.up - 1 > threshold:
        notes.append(scatter.describe())
    for shift in sorted({s for s in table["shift"] if s}):
        notes.append(f"shift in {shift}")
    problems.extend(_mode_problems(old, new, table, allowed))
    problems.extend(_provenance_problems(old, new, allowed))
    return Comparison(table, problems, notes, scatter)


def _modes(run: Run) -> set[str]:
    plan = run.meta.get("plan") if isinstance(run.meta.get("plan"), dict) else None
    mode = (plan or {}).get("mode") or (run.meta.get("options") or {}).get("mode")
    if mode:
        return {str(mode)}
    return {m for m in run.rows["mode"].astype(str) if m} if "mode" in run.rows else set()


def _mode_problems(old: Run, new: Run, table: pd.DataFrame, allowed: set[str]) -> list[Problem]:
    a, b = _modes(old), _modes(new)
    timed_a, timed_b = bool(a & set(TIMED_MODES)), bool(b & set(TIMED_MODES))
    untimed = int((table["verdict"] == "untimed").sum())
    if a and b and timed_a != timed_b:
        return [Problem("mode", f"modes differ: OLD {'/'.join(sorted(a))}, NEW {'/'.join(sorted(b))}: "
                                f"no timing to judge ({untimed} row(s) untimed)", untimed, "mode" in allowed)]
    return []


def _provenance_problems(old: Run, new: Run, allowed: set[str]) -> list[Problem]:
    out = []
    ok = "provenance" in allowed
    devices = sorted(set(_shared_pairs(old, new, "device")))
    for o, n in devices:
        out.append(Problem("provenance", f"device differs: {o!r} -> {n!r}", 0, ok))
    da, db = _dtypes(old), _dtypes(new)
    if da and db and da != db:
        out.append(Problem("provenance", f"dtype set differs: {','.join(da)} -> {','.join(db)}", 0, ok))
    ca, cb = concurrency(old), concurrency(new)
    if ca and cb and ca != cb:
        out.append(Problem("provenance", f"concurrency differs: {ca} -> {cb}: rows timed beside others on one host "
                                         "contend for it", 0, ok))
    ta, tb = _timing_options(old), _timing_options(new)
    if ta and tb and ta != tb:
        out.append(Problem("provenance", f"timing differs: {ta} -> {tb}", 0, ok))
    else:
        timing = _shared_pairs(old, new, "timing")
        if timing:
            kinds = ", ".join(sorted({f"{o} -> {n}" for o, n in timing}))
            out.append(Problem("provenance", f"{len(timing)} shared row(s) were timed differently ({kinds})",
                               len(timing), ok))
    return out


def concurrency(run: Run) -> str:
    """How many rows the run timed at once on one host: "one process" (a sweep without --cluster), "N worker(s)
    per host on a cluster" (run.json's ``cluster``: its most crowded host); "" where run.json does not say."""
    if not run.meta or ("options" not in run.meta and "cluster" not in run.meta):
        return ""
    cluster = run.meta.get("cluster")
    if not isinstance(cluster, dict):
        return "one process"
    per_host = Counter(str(w.get("host", "")) for w in (cluster.get("workers") or {}).values() if isinstance(w, dict))
    most = max(per_host.values(), default=0)
    return f"{most} worker(s) per host on a cluster"


def _dtypes(run: Run) -> list[str]:
    """The dtypes the run set out to sweep (run.json's plan; rows a run lacks are missing rows, not another set)."""
    plan = run.meta.get("plan")
    if isinstance(plan, dict) and isinstance(plan.get("dtypes"), list):
        return sorted(str(d) for d in plan["dtypes"])
    return []


def _timing_options(run: Run) -> str:
    plan = run.meta.get("plan")
    timing = plan.get("timing") if isinstance(plan, dict) else None
    if not isinstance(timing, dict) or "cold" not in timing:
        return ""
    return ("cold, flush " + str(timing.get("flush") or "dirty")) if timing["cold"] else "warm"


def compare_runs(old: Run, new: Run, threshold: float, bad_keys: set[tuple[str, ...]] | None = None
                 ) -> pd.DataFrame:
    """One row per key in either run: old/new status and median, ratio, verdict, noisy, min_change. Keys in
    ``bad_keys`` (damaged lines) are ``unreadable`` whatever their cells say."""
    return _table(old, new, threshold, bad_keys or set())[0]


def _table(old: Run, new: Run, threshold: float, bad_keys: set[tuple[str, ...]]) -> tuple[pd.DataFrame,
                                                                                             Scatter | None]:
    """compare_runs' table and the run pair's scatter (None where too few rows are timed in both)."""
    import pandas as pd

    cols = [*KEY, "status", "median_ms", "p10_ms", "p90_ms", "ci_rel", "mode", "kernel"]
    a = old.rows[cols].drop_duplicates(list(KEY), keep="last")
    b = new.rows[cols].drop_duplicates(list(KEY), keep="last")
    merged = a.merge(b, on=list(KEY), how="outer", suffixes=("_old", "_new"), indicator=True, sort=False)
    out = []
    fields_ = ("status", "median_ms", "p10_ms", "p90_ms", "ci_rel")
    for r in merged.to_dict("records"):
        if r["_merge"] == "left_only":
            v = Verdict("removed", None)
        elif r["_merge"] == "right_only":
            v = Verdict("added", None)
        elif tuple(str(r[k]) for k in KEY) in bad_keys:
            v = Verdict("unreadable", None)
        elif r["status_old"] == r["status_new"] == "ok" and "test" in (r["mode_old"], r["mode_new"]):
            v = Verdict("untimed", None)  # --mode test on a side: there is no timing to judge
        else:
            v = classify({k: r[f"{k}_old"] for k in fields_}, {k: r[f"{k}_new"] for k in fields_}, threshold)
        ok_, nk = _kernel_cell(r.get("kernel_old")), _kernel_cell(r.get("kernel_new"))
        out.append({**{k: r[k] for k in KEY}, "old_status": r.get("status_old"), "new_status": r.get("status_new"),
                    "old_median_ms": r.get("median_ms_old"), "new_median_ms": r.get("median_ms_new"),
                    "ratio": v.ratio, "min_change": v.min_change, "verdict": v.verdict, "noisy": v.noisy,
                    "old_kernel": ok_, "new_kernel": nk, "kernel_changed": bool(ok_ and nk and ok_ != nk)})
    shifts = _shifts(_timed(out), threshold)
    scatter = apply_scatter(out, threshold, shifts)
    apply_shifts(out, threshold, shifts)
    return pd.DataFrame(out, columns=[*KEY, "old_status", "new_status", "old_median_ms", "new_median_ms", "ratio",
                                      "min_change", "verdict", "noisy", "shift", "old_kernel", "new_kernel",
                                      "kernel_changed"]), scatter


@dataclass(frozen=True)
class Scatter:
    """How far the timed rows of a run pair move between the two runs (see the module doc)."""

    pairs: int  # timed pairs it was measured on
    center: float  # their median ratio
    spread: float  # 1.4826 x the median absolute deviation of their log ratios

    @property
    def up(self) -> float:
        """The ratio a row alone must exceed to be slower."""
        return self.center * math.exp(SCATTER_K * self.spread)

    @property
    def down(self) -> float:
        """The ratio a row alone must fall below to be faster."""
        return self.center * math.exp(-SCATTER_K * self.spread)

    def to_dict(self) -> dict[str, Any]:
        return {"pairs": self.pairs, "center": self.center, "spread": self.spread, "down": self.down, "up": self.up}

    def describe(self) -> str:
        return (f"the runs' {self.pairs} timed rows scatter by {self.spread:.1%} about a median ratio of "
                f"{self.center:.3f} between these two runs: a row alone is judged only beyond {SCATTER_K:g} times "
                f"that (ratio < {self.down:.3f} or > {self.up:.3f})")


def run_scatter(ratios: list[float]) -> Scatter | None:
    """The scatter of a run pair's ratios, or None under SHIFT_MIN_ROWS of them."""
    logs = [math.log(r) for r in ratios if math.isfinite(r) and r > 0]
    if len(logs) < SHIFT_MIN_ROWS:
        return None
    center = statistics.median(logs)
    return Scatter(len(logs), math.exp(center), 1.4826 * statistics.median(abs(x - center) for x in logs))


def apply_scatter(rows: list[dict[str, Any]], threshold: float,
                  shifts: list[tuple[Shift, list[dict[str, Any]]]]) -> Scatter | None:
    """Hold each timed row to the run pair's scatter, measured on the rows outside shifted ops (a change that moved
    an op is not noise): a slower (faster) row within it is no longer judged so alone, and every timed row's
    ``min_change`` is at least the scatter's; a row that then asks more than the threshold is ``noisy``. Returns the
    scatter (None: too few timed rows to measure it, nothing changed). ``shifts``: the rows' (``_shifts``)."""
    timed = _timed(rows)
    shifted = {shift.group for shift, _ in shifts}
    scatter = run_scatter([r["ratio"] for r in timed if _group(r) not in shifted])
    if scatter is None:
        return None
    for r in timed:
        need = max(r["min_change"], scatter.up - 1)
        r["min_change"] = need
        if (r["verdict"] == "slower" and r["ratio"] > scatter.up) or (r["verdict"] == "faster"
                                                                        and r["ratio"] < scatter.down):
            continue
        r["noisy"] = r["verdict"] in ("slower", "faster") or r["noisy"]  # moved beyond t, within the scatter
        r["verdict"] = "same" if need <= threshold * (1 + 1e-9) else "noisy"
    return scatter


@dataclass(frozen=True)
class Shift:
    """A group of rows whose ratios moved one way together (see the module doc)."""

    group: str  # "the run" or "OP on BACKEND"
    direction: str  # slower | faster
    moved: int  # pairs whose ratio is on the shift's side of 1
    pairs: int  # timed pairs in the group
    geomean: float  # the group's geometric mean ratio
    p: float  # the sign test's one-sided p

    def describe(self) -> str:
        return (f"{self.group}: {self.moved} of {self.pairs} timed rows {self.direction}, geometric mean ratio "
                f"{self.geomean:.3f} (sign test p = {self.p:.1g})")


def _sign_p(k: int, n: int) -> float:
    """P(X >= k) for X ~ Binomial(n, 1/2)."""
    return sum(math.comb(n, i) for i in range(k, n + 1)) / 2.0 ** n


def find_shift(ratios: list[float], threshold: float, group: str) -> Shift | None:
    """A shift of the group, or None: at least SHIFT_MIN_ROWS ratios, the sign test below SHIFT_P and the geometric
    mean beyond the threshold, the same way."""
    rs = [r for r in ratios if math.isfinite(r) and r > 0]
    if len(rs) < SHIFT_MIN_ROWS:
        return None
    geo = math.exp(sum(math.log(r) for r in rs) / len(rs))
    up, down = sum(r > 1 for r in rs), sum(r < 1 for r in rs)
    for direction, k, beyond in (("slower", up, geo > 1 + threshold), ("faster", down, 1 / geo > 1 + threshold)):
        p = _sign_p(k, len(rs))
        if beyond and p < SHIFT_P:
            return Shift(group, direction, k, len(rs), geo, p)
    return None


def _timed(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["verdict"] in ("same", "noisy", "slower", "faster") and r["ratio"] is not None]


def _group(row: dict[str, Any]) -> str:
    return f"{row['op']} on {row['backend']}"


def _shifts(timed: list[dict[str, Any]], threshold: float) -> list[tuple[Shift, list[dict[str, Any]]]]:
    """The shifted groups (the whole run, each op and backend) with their rows."""
    groups: dict[str, list[dict[str, Any]]] = {"the run": timed}
    for r in timed:
        groups.setdefault(_group(r), []).append(r)
    found = ((find_shift([r["ratio"] for r in members], threshold, name), members) for name, members in groups.items())
    return [(shift, members) for shift, members in found if shift is not None]


def apply_shifts(rows: list[dict[str, Any]], threshold: float,
                 shifts: list[tuple[Shift, list[dict[str, Any]]]] | None = None) -> list[Shift]:
    """Mark the rows of shifted groups (the whole run, each op and backend): a same or noisy row that moved beyond
    the threshold the group's way takes the group's verdict and ``shift`` its description. Returns the shifts.
    ``shifts``: the rows' (found when None)."""
    shifts = _shifts(_timed(rows), threshold) if shifts is None else shifts
    for shift, members in shifts:
        for r in members:
            moved = r["ratio"] > 1 + threshold if shift.direction == "slower" else 1 / r["ratio"] > 1 + threshold
            if moved and r["verdict"] in ("same", "noisy"):
                r["verdict"] = shift.direction
                r["shift"] = shift.describe()
    for r in rows:
        r.setdefault("shift", "")
    return [shift for shift, _ in shifts]


def _kernel_cell(value: Any) -> str:
    """A kernel cell as a name: "" for a missing one (a row in one run only, NaN from the merge) and for a failed
    lookup (``unknown (...)``: nothing is known of the path, so it cannot have changed)."""
    return value if isinstance(value, str) and not value.startswith("unknown (") else ""


assert set(_TIMING_FIELDS) <= set(COLUMNS)
