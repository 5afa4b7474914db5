"""Statistics of timing samples: quantiles and a distribution-free confidence interval of the median."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Summary", "summarize", "median_ci", "relative_ci_halfwidth"]

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Summary:
    """What a row records of its samples (milliseconds)."""

    median_ms: float
    p10_ms: float
    p90_ms: float
    min_ms: float
    samples: int
    ci_rel: float  # half-width of the median's 95% CI relative to the median


def summarize(samples: Sequence[float] | np.ndarray) -> Summary:
    """Median, p10, p90 (linear interpolation between order statistics), min, count and CI half-width."""
    if not len(samples):
        raise ValueError("summarize needs at least one sample")
    x = np.asarray(samples, dtype=np.float64)
    p10, med, p90 = (float(v) for v in np.percentile(x, [10, 50, 90]))
    return Summary(med, p10, p90, float(x.min()), int(x.size), relative_ci_halfwidth(x))


def median_ci(samples: Sequence[float] | np.ndarray, z: float = Z95) -> tuple[float, float]:
    """A distribution-free CI of the median from order statistics.

    The number of samples below the true median is Binomial(n, 1/2); with the normal
    approximation, the CI runs from the j-th to the k-th smallest sample with
    j = floor((n - z*sqrt(n)) / 2) and k = ceil((n + z*sqrt(n)) / 2) + 1 (1-based, clamped to [1, n]).
    For small n this is the whole range [min, max]: conservative, so few samples never look converged.
    """
    x = np.sort(np.asarray(samples, dtype=np.float64))
    n = x.size
    if n == 0:
        raise ValueError("median_ci needs at least one sample")
    half = z * math.sqrt(n) / 2
    j = max(1, math.floor(n / 2 - half))
    k = min(n, math.ceil(n / 2 + half) + 1)
    return float(x[j - 1]), float(x[k - 1])


def relative_ci_halfwidth(samples: Sequence[float] | np.ndarray, z: float = Z95) -> float:
    """Half the median's CI width divided by the median (inf when the median is not positive)."""
    lo, hi = median_ci(samples, z)
    med = float(np.median(np.asarray(samples, dtype=np.float64)))
    if med <= 0:
        return math.inf
    return (hi - lo) / 2 / med
