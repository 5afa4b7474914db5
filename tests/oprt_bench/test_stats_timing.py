"""Statistics and the measurement loop, on synthetic samples and a scripted fake device."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oprt_bench.stats import median_ci, relative_ci_halfwidth, summarize
from oprt_bench.timing import TimingConfig, measure


def test_summarize_quantiles():
    s = summarize([float(v) for v in range(1, 101)])
    assert s.median_ms == pytest.approx(50.5)
    assert s.p10_ms == pytest.approx(10.9)
    assert s.p90_ms == pytest.approx(90.1)
    assert s.min_ms == 1.0 and s.samples == 100


def test_median_ci_is_whole_range_for_few_samples_and_narrows_with_more():
    assert median_ci([3.0, 1.0, 2.0, 5.0, 4.0]) == (1.0, 5.0)
    x = np.random.default_rng(0).normal(100, 1, 400)
    lo, hi = median_ci(x)
    assert lo < np.median(x) < hi
    assert relative_ci_halfwidth(x) < 0.005
    assert relative_ci_halfwidth([0.0, 0.0, 0.0]) == math.inf


class FakeDevice:
    """A backend whose 'kernel' takes scripted times on a fake clock."""

    def __init__(self, durations):
        self.durations = iter(durations)
        self.now = 0.0
        self.flushes = 0
        self.launches = 0

    def clock(self) -> float:
        return self.now

    def launch(self) -> None:
        self.launches += 1
        self.now += next(self.durations) / 1e3

    def synchronize(self) -> None:
        pass

    def flush_cache(self) -> None:
        self.flushes += 1

    def event(self):
        dev = self

        class Ev:
            def record(self):
                self.t = dev.now

            def elapsed_ms(self, end):
                return (end.t - self.t) * 1e3

        return Ev()


def test_stops_when_median_converges():
    dev = FakeDevice([1.0] * 10_000)
    m = measure(dev, dev.launch, TimingConfig(time_budget_s=10, warmup_s=0), clock=dev.clock)
    assert m.stopped_by == "converged"
    assert m.summary.samples == 5 and m.summary.median_ms == pytest.approx(1.0)
    assert dev.flushes == 5  # cold: one flush per sample


def test_noisy_samples_run_until_the_budget():
    rng = np.random.default_rng(1)
    dev = FakeDevice(list(rng.uniform(1, 3, 10_000)))
    m = measure(dev, dev.launch, TimingConfig(time_budget_s=0.1, warmup_s=0), clock=dev.clock)
    assert m.stopped_by == "budget"
    assert 5 <= m.summary.samples < 100
    assert m.summary.p10_ms < m.summary.median_ms < m.summary.p90_ms


def test_min_samples_even_past_the_budget_and_max_samples_cap():
    dev = FakeDevice([500.0] * 100)
    m = measure(dev, dev.launch, TimingConfig(time_budget_s=0.001, warmup_s=0, min_samples=5), clock=dev.clock)
    assert m.summary.samples == 5
    rng = np.random.default_rng(2)
    dev = FakeDevice(list(rng.uniform(1, 3, 10_000)))
    m = measure(dev, dev.launch, TimingConfig(time_budget_s=1e9, warmup_s=0, max_samples=50), clock=dev.clock)
    assert m.stopped_by == "max_samples" and m.summary.samples == 50


def test_warm_mode_never_flushes_and_warms_up_first():
    dev = FakeDevice([1.0] * 10_000)
    m = measure(dev, dev.launch, TimingConfig(cold=False, warmup_s=0.01, time_budget_s=1), clock=dev.clock)
    assert dev.flushes == 0
    assert m.warmup_calls == 10  # 10 ms of 1 ms calls
    assert dev.launches == m.warmup_calls + m.summary.samples
