"""Row flags: what a reader must know before trusting a row's time or bandwidth.

``results.csv`` has a ``flags`` column: these names, ``;``-separated, in the order of :data:`FLAGS`.
See docs/measurement.md for how each threshold was chosen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .calibrate import LAUNCH_BOUND_FACTOR

__all__ = ["FLAGS", "ABOVE_PEAK_TOLERANCE", "LAUNCH_BOUND_FACTOR", "row_flags", "split_flags"]

ABOVE_PEAK_TOLERANCE = 0.05

# name -> (short marker shown in the HTML tables, meaning)
FLAGS: dict[str, tuple[str, str]] = {
    "launch-bound": ("LB", f"median under {LAUNCH_BOUND_FACTOR:g}x the backend's timer floor (empty launch / event "
                           "resolution): the time is mostly launch overhead, not the kernel"),
    "fits-in-l2": ("L2", "measured warm (--warm) with a working set that fits in the device's L2 / last-level "
                         "cache: the bandwidth is the cache's, not DRAM's"),
    "above-peak": ("PK", f"bandwidth more than {ABOVE_PEAK_TOLERANCE:.0%} above the measured peak: cache hits, "
                         "a wrong byte count, or a timing problem"),
}


def _num(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if v == v else None


def row_flags(row: Mapping[str, Any], *, floor_ms: float | None, l2_bytes: int | None,
              measured_peak_gbps: float | None, cold: bool) -> list[str]:
    """The flags of one timed row (none for a row without a median).

    - ``launch-bound``: ``median_ms < 10 * floor_ms`` (strictly: exactly 10x is not flagged);
    - ``fits-in-l2``: warm timing only, ``bytes <= l2_bytes``;
    - ``above-peak``: ``gbps > 1.05 * measured_peak_gbps`` (strictly).
    """
    median = _num(row.get("median_ms"))
    if median is None:
        return []
    flags = []
    if floor_ms and median < LAUNCH_BOUND_FACTOR * floor_ms:
        flags.append("launch-bound")
    nbytes = _num(row.get("bytes"))
    if not cold and l2_bytes and nbytes is not None and 0 < nbytes <= l2_bytes:
        flags.append("fits-in-l2")
    gbps = _num(row.get("gbps"))
    if measured_peak_gbps and gbps is not None and gbps > measured_peak_gbps * (1 + ABOVE_PEAK_TOLERANCE):
        flags.append("above-peak")
    return flags


def split_flags(text: Any) -> list[str]:
    """``"launch-bound;fits-in-l2"`` -> ``["launch-bound", "fits-in-l2"]`` ("" / NaN / None -> [])."""
    if not isinstance(text, str):
        return []
    return [f for f in (p.strip() for p in text.split(";")) if f]
