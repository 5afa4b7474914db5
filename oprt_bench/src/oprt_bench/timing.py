"""The measurement loop: warm-up, then timed samples until the median is known well enough.

Every sample is bracketed by two device events of the backend (host timestamps on numpy);
in cold mode ``backend.flush_cache()`` runs before each sample, outside the events, so each
sample starts with the op's data evicted from the last-level cache; with ``flush="clean"`` it is
``backend.flush_cache(clean=True)``, which also has the flush's own dirty lines written back before
the sample (they are otherwise written back during it). See docs/measurement.md.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .stats import Summary, relative_ci_halfwidth, summarize

__all__ = ["TimingConfig", "Measurement", "measure", "FLUSHES", "TIMERS", "flush", "flush_supports_clean"]

# the cold flushes: dirty (the default: a write of 2x L2, as triton's do_bench) and clean (then a read)
FLUSHES = ("dirty", "clean")
# what brackets a sample: events (an event pair around the launch) or graph (an event pair around one CUDA-graph
# replay of the launch, buffers rotated past the L2: oprt_bench.graph)
TIMERS = ("events", "graph")


def flush(backend: Any, kind: str) -> None:
    """One cold flush of ``kind`` (FLUSHES): ``flush_cache()`` for dirty (as every backend takes it),
    ``flush_cache(clean=True)`` for clean."""
    if kind == "clean":
        backend.flush_cache(clean=True)
    else:
        backend.flush_cache()


def flush_supports_clean(backend: Any) -> bool:
    """Whether ``backend.flush_cache`` takes the ``clean`` argument (the protocol's optional part)."""
    try:
        params = inspect.signature(backend.flush_cache).parameters
    except (TypeError, ValueError, AttributeError):
        return False
    return "clean" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


@dataclass(frozen=True)
class TimingConfig:
    """How long and how precisely to time one case on one backend.

    ``time_budget_s`` bounds the sampling phase (wall time, flushes included); ``min_samples``
    are always taken, even past the budget; sampling stops early once the 95% CI half-width of
    the median is below ``target_rel_ci`` of the median (never with 0: the whole budget is sampled), and never
    exceeds ``max_samples``.
    """

    cold: bool = True
    flush: str = "dirty"  # cold mode's flush: dirty | clean (FLUSHES)
    time_budget_s: float = 0.5
    target_rel_ci: float = 0.01
    min_samples: int = 5
    max_samples: int = 1000
    warmup_s: float = 0.05  # after at least ``warmup_calls`` calls
    warmup_calls: int = 1
    timer: str = "events"  # events | graph (TIMERS)

    def __post_init__(self) -> None:
        if self.flush not in FLUSHES:
            raise ValueError(f"flush must be one of {', '.join(FLUSHES)}, got {self.flush!r}")
        if self.timer not in TIMERS:
            raise ValueError(f"timer must be one of {', '.join(TIMERS)}, got {self.timer!r}")

    @property
    def label(self) -> str:
        """The rows' ``timing`` text: cold, cold-clean (the clean flush) or warm."""
        if not self.cold:
            return "warm"
        return "cold" if self.flush == "dirty" else "cold-clean"

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass
class Measurement:
    summary: Summary
    samples_ms: list[float] = field(repr=False)
    stopped_by: str  # converged | budget | max_samples
    warmup_calls: int
    elapsed_s: float


def _should_check(n: int) -> bool:
    # the CI costs a sort: check every sample while n is small, then every 10th
    return n <= 100 or n % 10 == 0


def measure(backend: Any, launch: Callable[[], None], config: TimingConfig,
            clock: Callable[[], float] = time.perf_counter,
            sampler: Callable[[], float] | None = None) -> Measurement:
    """Time ``launch`` (a prepared launcher) on ``backend`` following ``config``.

    ``sampler``: takes one whole sample and returns its milliseconds, in place of the flush and the event pair
    around ``launch`` (graph timing, :mod:`oprt_bench.graph`); the warm-up still calls ``launch``."""
    t0 = clock()
    calls = 0
    while calls < config.warmup_calls or (clock() - t0 < config.warmup_s and calls < config.max_samples):
        launch()
        backend.synchronize()
        calls += 1

    start, end = backend.event(), backend.event()
    samples: list[float] = []
    t_start = clock()
    stopped_by = "max_samples"
    while len(samples) < config.max_samples:
        if sampler is not None:
            samples.append(float(sampler()))
        else:
            if config.cold:
                flush(backend, config.flush)
            start.record()
            launch()
            end.record()
            backend.synchronize()
            samples.append(float(start.elapsed_ms(end)))
        n = len(samples)
        if n < config.min_samples:
            continue
        if config.target_rel_ci > 0 and _should_check(n) and relative_ci_halfwidth(samples) <= config.target_rel_ci:
            stopped_by = "converged"
            break
        if clock() - t_start >= config.time_budget_s:
            stopped_by = "budget"
            break
    return Measurement(summarize(samples), samples, stopped_by, calls, clock() - t0)
