"""The calibration cache: a backend's measured peak and timer floor, kept between runs.

Calibrating a GPU backend (a cold device-to-device copy of at least 512 MiB, the timer floor) costs one
to three seconds per backend: most of a quick look at a few rows. A calibration is a property of the
device and the backend's build, so a run reuses one measured within :data:`MAX_AGE_S` by an earlier run
with the same key:

- the backend's name and its full ``device_info`` (device name, memory, L2, driver, toolkit, build flavour
  and whatever ``extra`` the backend reports, e.g. a device UUID),
- the host name, the oprt-bench version (the calibration method) and the timing the rows use
  (cold or warm, the flush).

Only a complete calibration (a measured peak and a timer floor) is stored. ``--recalibrate`` measures
again and replaces the entry. The file is ``calibration.json`` in ``$OPRT_CACHE_DIR``, else
``$XDG_CACHE_HOME/oprt``, else ``~/.cache/oprt``; an unreadable or foreign file is ignored (and rewritten),
never an error: the cache only saves time.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__
from .calibrate import Calibration, TimerCheck

__all__ = ["CalibrationCache", "CachedCalibration", "cache_dir", "cache_key", "MAX_AGE_S", "FILE_NAME"]

MAX_AGE_S = 12 * 3600.0  # a calibration older than this is measured again (clocks, firmware, a noisy neighbour)
FILE_NAME = "calibration.json"
SCHEMA = 1


def cache_dir() -> Path:
    """``$OPRT_CACHE_DIR``, else ``$XDG_CACHE_HOME/oprt``, else ``~/.cache/oprt``."""
    explicit = os.environ.get("OPRT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "oprt"


def cache_key(backend: str, device_info: dict[str, Any], cold: bool, flush: str) -> str:
    """A stable digest of everything a calibration depends on (see the module docstring)."""
    material = {"backend": backend, "device_info": device_info, "host": platform.node(),
                "oprt_bench": __version__, "cold": bool(cold), "flush": flush if cold else ""}
    text = json.dumps(material, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class CachedCalibration:
    calibration: Calibration
    timer: TimerCheck
    measured_at: float  # time.time() of the measurement

    def age_s(self, now: float | None = None) -> float:
        return (time.time() if now is None else now) - self.measured_at


def _fields(cls: Any, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise TypeError("not an object")
    return {k: v for k, v in data.items() if k in cls.__dataclass_fields__}


class CalibrationCache:
    """The calibrations of earlier runs in one JSON file (``path``), read once and written on :meth:`put`."""

    def __init__(self, path: Path | None = None, max_age_s: float = MAX_AGE_S):
        self.path = Path(path) if path is not None else cache_dir() / FILE_NAME
        self.max_age_s = max_age_s
        self._entries: dict[str, Any] | None = None

    def _load(self) -> dict[str, Any]:
        if self._entries is None:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                entries = data.get("entries") if isinstance(data, dict) and data.get("schema") == SCHEMA else None
                self._entries = entries if isinstance(entries, dict) else {}
            except (OSError, ValueError):
                self._entries = {}
        return self._entries

    def get(self, key: str, now: float | None = None) -> CachedCalibration | None:
        """The entry of ``key`` when it is complete and younger than ``max_age_s``; else None."""
        raw: Any = self._load().get(key)
        try:
            found = CachedCalibration(Calibration(**_fields(Calibration, raw["calibration"])),
                                      TimerCheck(**_fields(TimerCheck, raw["timer"])), float(raw["measured_at"]))
        except (TypeError, KeyError, ValueError):
            return None
        if not 0 <= found.age_s(now) <= self.max_age_s:  # too old, or from a clock that ran ahead
            return None
        if found.calibration.measured_peak_gbps is None or found.timer.floor_ms is None:
            return None
        return found

    def put(self, key: str, calibration: Calibration, timer: TimerCheck, now: float | None = None) -> bool:
        """Store a complete calibration (atomically); False when it is incomplete or the file cannot be written."""
        if calibration.measured_peak_gbps is None or timer.floor_ms is None:
            return False
        entries = dict(self._load())
        stamp = time.time() if now is None else now
        entries[key] = {"calibration": calibration.to_dict(), "timer": timer.to_dict(), "measured_at": stamp}
        # entries past their age are dropped as the file is rewritten
        entries = {k: v for k, v in entries.items()
                   if isinstance(v, dict) and 0 <= stamp - float(v.get("measured_at") or 0) <= self.max_age_s}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".calibration-", suffix=".json", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"schema": SCHEMA, "entries": entries}, fh, indent=1)
            os.replace(tmp, self.path)
        except OSError:
            return False
        self._entries = entries
        return True
