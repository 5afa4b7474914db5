"""``oprt-bench ab A B``: two backends timed interleaved in one process, a speedup with a bootstrap interval.

Per (op, case, dtype): both backends are checked against the float64 reference on copies of the same inputs, then
timed in pairs of samples ordered A,B then B,A (ABBA blocks: a drift of clock or temperature weighs on both alike),
each side alternating between two buffer sets every two pairs (one backend against itself: the two sides swap the same
two sets), each sample as a sweep row's (the cold flush before it, an event pair around the launch). Sampling stops
once both medians' 95% intervals are within ``target_rel_ci`` (after ``min_samples`` pairs), at the time budget, or at
``max_samples`` pairs.

speedup = the median of the pairs' ratios A_i / B_i (above 1: B is faster), taken per stratum (order x buffer set, 4
strata) and the strata medians' geometric mean: two samples taken next to each other share the host's and the device's
state, so a load that comes and goes moves both and leaves their ratio, and an effect of the order (the second sample
of a pair slower or faster) or of the buffers' placement cancels instead of leaving one median on one hump; its 95%
interval is a percentile bootstrap that resamples the pairs within each stratum (seeded, ``resamples`` times). Verdict
of B against A: ``same`` when the interval holds 1.0 or the speedup is within +-:data:`SAME_WITHIN` (a difference
under the tie threshold is a tie however sure it is: the same build against itself can differ by a few tenths of a
percent), else ``faster`` or ``slower``.
See docs/measurement.md.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from oprt_core import UnsupportedCase
from oprt_core.spec import Case, OpSpec, as_outputs

from .errors import UsageError, one_line
from .execute import prepare_case
from .model import BackendEntry, SweepOptions
from .plan import make_plan
from .results import json_safe, provenance, write_json
from .stats import relative_ci_halfwidth
from .sweep import case_seed
from .timing import TimingConfig, flush

__all__ = ["SAME_WITHIN", "MIN_RESAMPLES", "AbRow", "bootstrap_ratio", "verdict", "interleave", "run_ab",
           "write_ab", "AB_CSV", "AB_JSON", "AB_COLUMNS"]

SAME_WITHIN = 0.01  # a speedup within 1% of 1.0 is "same" even when its interval excludes 1.0
MIN_RESAMPLES = 2000
AB_CSV = "ab.csv"
AB_JSON = "ab.json"
AB_COLUMNS = ("op", "case", "shape", "dtype", "a", "b", "status", "message", "a_median_ms", "b_median_ms", "speedup",
              "ci_low", "ci_high", "verdict", "pairs", "stopped_by", "timing", "seed")


def bootstrap_ratio(a: Sequence[float], b: Sequence[float], resamples: int = MIN_RESAMPLES, seed: int = 0,
                    level: float = 0.95, strata: int = 1) -> tuple[float, float, float]:
    """``(median of a_i / b_i, low, high)``: the median ratio of paired samples and its percentile-bootstrap
    interval at ``level``, resampling the pairs ``resamples`` times with a generator seeded by ``seed``.

    ``strata`` > 1: pair i belongs to stratum i % strata (:func:`interleave` alternates the order every pair and
    the buffer sets every two pairs: 4 strata); the ratio is then the geometric mean of the strata's medians, each
    resampled within its stratum, so an effect of the order (the second sample of a pair slower or faster) or of
    the buffers' placement cancels instead of leaving the median on one hump of a many-humped distribution."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or x.size == 0:
        raise ValueError(f"bootstrap_ratio needs two equally long, non-empty sample lists, got {x.size} and {y.size}")
    if strata < 1:
        raise ValueError(f"bootstrap_ratio needs strata >= 1, got {strata}")
    if resamples < 1 or not 0 < level < 1:
        raise ValueError(f"bootstrap_ratio needs resamples >= 1 and 0 < level < 1, got {resamples} and {level}")
    if np.any(y <= 0) or np.any(x <= 0):
        raise ValueError("bootstrap_ratio needs positive times")
    ratios = x / y
    rng = np.random.default_rng(seed)
    if strata > 1 and ratios.size >= strata:
        groups = [ratios[j::strata] for j in range(strata)]
        ratio = float(np.exp(np.mean([np.log(np.median(g)) for g in groups])))
        boots = np.exp(np.mean([np.log(np.median(g[rng.integers(0, g.size, size=(int(resamples), g.size))], axis=1))
                                for g in groups], axis=0))
    else:
        ratio = float(np.median(ratios))
        boots = np.median(ratios[rng.integers(0, x.size, size=(int(resamples), x.size))], axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(boots, [tail, 100 - tail])
    return ratio, float(low), float(high)


def verdict(ratio: float, low: float, high: float, same_within: float = SAME_WITHIN) -> str:
    """B against A from the speedup and its interval: same (the interval holds 1.0, or the speedup is within
    +-``same_within``), faster or slower."""
    if low <= 1.0 <= high or abs(ratio - 1.0) <= same_within:
        return "same"
    return "faster" if low > 1.0 else "slower"


@dataclass
class AbRow:
    """One (op, case, dtype) of an A/B: both medians, the speedup with its interval and the verdict."""

    op: str
    case: str
    shape: str
    dtype: str
    a: str
    b: str
    status: str = ""  # ok | unsupported | failed | error (the first side's problem names its side)
    message: str = ""
    a_median_ms: float | None = None
    b_median_ms: float | None = None
    speedup: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    verdict: str = ""
    pairs: int = 0
    stopped_by: str = ""
    timing: str = ""
    seed: int = 0
    a_samples_ms: list[float] = field(default_factory=list, repr=False)
    b_samples_ms: list[float] = field(default_factory=list, repr=False)

    def to_dict(self, samples: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not samples:
            d.pop("a_samples_ms")
            d.pop("b_samples_ms")
        return d


# -- sampling -------------------------------------------------------------------------------------------------

Side = tuple[Any, Sequence[Callable[[], None]]]  # (backend, its prepared launches: one per buffer set)
STRATA = 4  # pair i: A first when i is even, buffer set (i // 2) % 2 (see interleave)


def _sample(backend: Any, launch: Callable[[], None], events: tuple[Any, Any], config: TimingConfig) -> float:
    if config.cold:
        flush(backend, config.flush)
    start, end = events
    start.record()
    launch()
    end.record()
    backend.synchronize()
    return float(start.elapsed_ms(end))


def interleave(a: Side, b: Side, config: TimingConfig,
               clock: Callable[[], float] = time.perf_counter) -> tuple[list[float], list[float], str]:
    """Warm both sides up, then time pairs in ABBA blocks: ``(A samples, B samples, stopped_by)``, sample i of each
    list taken next to the other's (``stopped_by``: converged, budget or max_samples). Each side's launches are
    its buffer sets: pair i runs set (i // 2) % len(launches), so the order and the set cycle every 4 pairs."""
    t0 = clock()
    calls = 0
    while calls < config.warmup_calls or (clock() - t0 < config.warmup_s and calls < config.max_samples):
        for backend, launches in (a, b):
            for launch in launches:
                launch()
            backend.synchronize()
        calls += 1
    events = [(a[0].event(), a[0].event()), (b[0].event(), b[0].event())]
    xs: list[float] = []
    ys: list[float] = []
    t_start = clock()
    while len(xs) < config.max_samples:
        order = (0, 1) if len(xs) % 2 == 0 else (1, 0)
        got = [0.0, 0.0]
        for i in order:
            backend, launches = (a, b)[i]
            got[i] = _sample(backend, launches[(len(xs) // 2) % len(launches)], events[i], config)
        xs.append(got[0])
        ys.append(got[1])
        n = len(xs)
        if n < config.min_samples:
            continue
        if config.target_rel_ci > 0 and (n <= 100 or n % 10 == 0) and \
                max(relative_ci_halfwidth(xs), relative_ci_halfwidth(ys)) <= config.target_rel_ci:
            return xs, ys, "converged"
        if clock() - t_start >= config.time_budget_s:
            return xs, ys, "budget"
    return xs, ys, "max_samples"


def _setup(entry: BackendEntry, spec: OpSpec, case: Case, dtype: str, prepared: Any) -> tuple[Any, str, str]:
    """``(launch, "", "")`` for one buffer set of one side, checked against the reference on its own copy of the
    inputs; else ``(None, status, message)``. The launch holds its buffers."""
    inputs, ref, setup_error, inputs64 = prepared
    if setup_error:
        return None, "error", setup_error
    if inputs is None or ref is None:
        return None, "unsupported", f"op {spec.name} does not define dtype {dtype}"
    backend, params = entry.backend, case.param_dict
    try:
        support = backend.supports(spec.name, dtype, case)
        if not support:
            return None, "unsupported", support.reason or "unsupported by the backend"
        arrays = [backend.to_device(x) for x in inputs]
        out = spec.new_outputs(backend, [x.shape for x in inputs], params, dtype)  # a tuple for several outputs
        outs = as_outputs(out)
        for o in outs:
            backend.fill_nan(o)
        launch = backend.prepare(spec.name, arrays, out, params)
        launch()
        backend.synchronize()
        host = tuple(backend.to_host(o) for o in outs)
        check = spec.check(host if spec.multi_output else host[0], inputs, dtype, params, ref, inputs64)
        if not check.ok:
            return None, "failed", check.message
    except UnsupportedCase as exc:
        return None, "unsupported", one_line(exc)
    except Exception as exc:  # noqa: BLE001 - one broken case is a row, the A/B goes on
        return None, "error", one_line(exc)

    def run() -> None:
        launch()

    run.buffers = (arrays, out)  # type: ignore[attr-defined]  # alive as long as the launch
    return run, "", ""


def _case_row(a: BackendEntry, b: BackendEntry, spec: OpSpec, case: Case, dtype: str, seed: int,
              config: TimingConfig, resamples: int) -> AbRow:
    row = AbRow(spec.name, case.name, case.shape_str, dtype, a.name, b.name, timing=config.label, seed=seed)
    prepared = prepare_case(spec, case, dtype, seed)
    # two buffer sets a side: where a buffer sits in memory moves a kernel's time by up to ~2% (H200), so each side
    # alternates between two; one backend against itself shares them, each side taking the set the other does not
    sets: list[list[Any]] = []
    for side, entry in (("A", a), ("B", b)) if a.name != b.name else (("A", a),):
        sets.append([])
        for _ in range(2):
            launch, status, message = _setup(entry, spec, case, dtype, prepared)
            if launch is None:
                row.status, row.message = status, f"{side} ({entry.name}): {message}"
                return row
            sets[-1].append(launch)
    if len(sets) == 1:
        sets.append(sets[0][::-1])
    try:
        xs, ys, row.stopped_by = interleave((a.backend, sets[0]), (b.backend, sets[1]), config)
        row.speedup, row.ci_low, row.ci_high = bootstrap_ratio(xs, ys, resamples, seed, strata=STRATA)
    except Exception as exc:  # noqa: BLE001 - a row, the A/B goes on
        row.status, row.message = "error", one_line(exc)
        return row
    row.status, row.pairs = "ok", len(xs)
    row.a_median_ms, row.b_median_ms = float(np.median(xs)), float(np.median(ys))
    row.verdict = verdict(row.speedup, row.ci_low, row.ci_high)
    row.a_samples_ms, row.b_samples_ms = xs, ys
    return row


def run_ab(registry: Any, a: str, b: str, opts: SweepOptions, resamples: int = MIN_RESAMPLES,
           emit: Callable[[AbRow], None] | None = None) -> tuple[list[AbRow], dict[str, BackendEntry]]:
    """Every (op, case, dtype) of ``opts`` (its ops, cases, shapes, dtypes, timing; its backends are ``a`` and
    ``b``), A against B; ``emit`` sees each row as it is done. Returns the rows and the two backends' entries."""
    if resamples < MIN_RESAMPLES:
        raise UsageError(f"--resamples must be at least {MIN_RESAMPLES}, got {resamples}")
    names = list(dict.fromkeys([a, b]))
    plan = make_plan(registry, SweepOptions(**{**vars(opts), "backends": ",".join(names), "baseline": "none",
                                               "isolation": "none", "calibrate": False, "mode": "bench"}))
    entries = {e.name: e for e in plan.backends}
    config = plan.timing
    rows = []
    for spec, case, dtype in plan.jobs():
        seed = case_seed(plan.seed, spec.name, case.name, dtype)
        row = _case_row(entries[a], entries[b], spec, case, dtype, seed, config, resamples)
        rows.append(row)
        if emit is not None:
            emit(row)
    return rows, entries


# -- output ---------------------------------------------------------------------------------------------------

def write_ab(out: Path, rows: Sequence[AbRow], meta: dict[str, Any]) -> None:
    """``ab.csv`` (one line per row, :data:`AB_COLUMNS`) and ``ab.json`` (provenance, rows and their samples)."""
    with open(out / AB_CSV, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=AB_COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.to_dict().items()})
    write_json(out / AB_JSON, {"run": meta, "rows": [json_safe(r.to_dict(samples=True)) for r in rows]})


def ab_meta(argv: Sequence[str], seed: int, options: dict[str, Any], entries: dict[str, BackendEntry],
            resamples: int) -> dict[str, Any]:
    """The A/B's provenance: as a sweep's run.json, with the two backends' devices and the bootstrap settings."""
    meta = provenance(argv, seed, options)
    meta["backends"] = {name: e.to_dict() for name, e in entries.items()}
    meta["ab"] = {"speedup": "median of the pairs' A / B; above 1: B is faster", "resamples": resamples,
                  "interval": "95% percentile bootstrap over the sample pairs", "same_within": SAME_WITHIN}
    return meta


def format_table(rows: Sequence[AbRow]) -> str:
    """The rows as a plain-text table (one line per case)."""
    head = ("op", "case", "dtype", "A ms", "B ms", "speedup", "95% CI", "verdict", "pairs")
    lines = []
    for r in rows:
        if r.status != "ok":
            lines.append((r.op, r.case, r.dtype, "", "", "", "", r.status, r.message))
            continue
        lines.append((r.op, r.case, r.dtype, f"{r.a_median_ms:.4g}", f"{r.b_median_ms:.4g}", f"{r.speedup:.4f}",
                      f"{r.ci_low:.4f}-{r.ci_high:.4f}", r.verdict, str(r.pairs)))
    widths = [max([len(h)] + [len(line[i]) for line in lines]) for i, h in enumerate(head)]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip()]
    out += ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines]
    return "\n".join(out)
