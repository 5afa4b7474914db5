"""Asking a plugin's backend whether it is available and what its device is, without trusting it to return.

Both calls run plugin code the parent process must call (outside any worker), so each runs in a daemon
thread with a timeout: a backend that hangs or raises is reported unavailable with the reason, never a crash.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from .model import AVAILABILITY_TIMEOUT_S

__all__ = ["call_with_timeout", "availability", "device_info"]

MAX_WAIT_S = 3600.0  # one wait's slice: a huge (finite) timeout is waited for in slices the OS accepts


def call_with_timeout(fn: Callable[[], Any], timeout_s: float) -> Any:
    """``fn()`` in a daemon thread; TimeoutError when it does not return within ``timeout_s`` (the thread is
    abandoned), its exception re-raised otherwise. Guards plugin code the parent must call (availability)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True, name="oprt-bench availability")
    t.start()
    deadline = time.monotonic() + timeout_s
    while t.is_alive():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        t.join(min(left, MAX_WAIT_S, threading.TIMEOUT_MAX))
    if t.is_alive():
        raise TimeoutError(f"timed out after {timeout_s:g} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def availability(backend: Any, timeout_s: float | None = None) -> tuple[bool, str, str]:
    """(available, reason, device) of ``backend``; never raises."""
    timeout_s = AVAILABILITY_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        a = call_with_timeout(backend.availability, timeout_s)
        return bool(a.ok), str(a.reason), str(a.device)
    except TimeoutError:
        return False, f"availability check timed out after {timeout_s:g} s", ""
    except Exception as exc:  # noqa: BLE001 - availability must never crash the tool
        return False, f"availability check raised {type(exc).__name__}: {exc}", ""


def device_info(backend: Any, timeout_s: float | None = None) -> dict[str, Any]:
    """``backend.device_info().to_dict()``, or ``{"error": why}``; never raises."""
    timeout_s = AVAILABILITY_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        info: dict[str, Any] = call_with_timeout(lambda: backend.device_info().to_dict(), timeout_s)
        return info
    except TimeoutError:
        return {"error": f"device_info() timed out after {timeout_s:g} s"}
    except Exception as exc:  # noqa: BLE001 - recorded, not raised
        return {"error": f"{type(exc).__name__}: {exc}"}
