"""The peak bandwidth each backend's ``pct_of_peak`` is measured against.

For now: the device's spec peak (``DeviceInfo.spec_peak_gbps``) where the backend knows it,
else none (the column stays empty). A calibrated peak (a device-to-device copy measured once
per run) replaces :func:`peak_gbps` and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Peak", "peak_gbps"]


@dataclass(frozen=True)
class Peak:
    gbps: float | None
    source: str  # "spec" | "none" (later: "measured")

    def to_dict(self) -> dict[str, Any]:
        return {"gbps": self.gbps, "source": self.source}


def peak_gbps(backend: Any, device_info: dict[str, Any] | None) -> Peak:
    """The peak bandwidth of ``backend``'s device in GB/s (10^9 bytes/s), and where it came from."""
    spec = (device_info or {}).get("spec_peak_gbps")
    if spec:
        return Peak(float(spec), "spec")
    return Peak(None, "none")
