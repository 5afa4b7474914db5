"""What a row needs in memory, checked before its case is drawn: a case that cannot fit is a ``skipped`` row
naming both figures, never a worker killed by the kernel's out-of-memory killer or a device allocation failure.

A row's case lives on the host as its inputs, their float64 copies (the reference's and the check's), the float64
reference and, while it is checked, the backend's output fetched back with the error's float64 temporaries. A
backend whose device is the host (numpy: ``device_info`` without ``memory_bytes``) also holds its inputs, outputs
and the implementation's temporaries there; a device backend holds its inputs and outputs on the device.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from oprt_core.dtypes import get_dtype
from oprt_core.spec import Case, OpSpec

from .errors import UsageError

__all__ = ["Need", "case_need", "host_available", "memory_refusal", "parse_bytes", "DEVICE_SHARE"]

#: the share of a device's memory a row may plan to use: the rest holds the runtime's context, the timing's L2
#: flush buffer and a launch's workspace
DEVICE_SHARE = 0.9
_F64 = 8


@dataclass(frozen=True)
class Need:
    """Bytes one row of a case needs: on the host (``host``), and on the device (``device``: its inputs and outputs
    in the row's dtype)."""

    host: int
    device: int


def _elements(shape: Any) -> int:
    return int(math.prod(int(d) for d in shape))


def _output_shapes(spec: OpSpec, shapes: list[tuple[int, ...]], params: dict[str, Any]) -> list[tuple[int, ...]]:
    out = spec.output_shape(shapes, params)
    return list(out) if spec.multi_output else [out]


def case_need(spec: OpSpec, case: Case, dtype: str, on_host: bool) -> Need:
    """The memory a row of ``case`` in ``dtype`` needs (see the module doc); ``on_host``: the backend's device is
    the host. Shapes come from the case; a case whose output shape cannot be worked out counts its inputs alone."""
    shapes = [tuple(t.shape) for t in case.inputs]
    item = get_dtype(dtype).itemsize
    in_bytes = sum(_elements(s) * (_F64 if spec.is_index(i) else item) for i, s in enumerate(shapes))
    in_elems = sum(_elements(s) for s in shapes)
    try:
        out_elems = sum(_elements(s) for s in _output_shapes(spec, shapes, case.param_dict))
    except Exception:  # noqa: BLE001 - a case the op refuses: its row says why, the check counts no output
        out_elems = 0
    out_bytes = out_elems * item
    # the larger side: a reference's and a check's float64 temporaries scale with it (a loss over vocabulary logits
    # makes (tokens, vocabulary) temporaries for a (tokens,) output)
    widest = max(in_elems, out_elems)
    # inputs, their float64 copies, the float64 reference, the output fetched back and two float64 temporaries
    host = in_bytes + in_elems * _F64 + out_elems * _F64 + out_bytes + 2 * widest * _F64
    device = in_bytes + out_bytes
    if on_host:  # the backend's own arrays and an implementation's temporaries (one float32 array of the widest)
        host += device + widest * 4
        device = 0
    return Need(host, device)


def parse_bytes(text: str) -> int:
    """``"8G"`` -> 8 GiB, ``"512M"``, ``"1024"``; ValueError when it is not a size."""
    raw = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = 1
    if raw and raw[-1] in _UNITS:
        scale, raw = _UNITS[raw[-1]], raw[:-1]
    value = float(raw)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(text)
    return int(value * scale)


_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def host_available() -> int | None:
    """Bytes a row may use on the host: ``OPRT_HOST_MEMORY`` where set (a size: ``8G``, ``512M``, bytes), else what
    the host can still give (``MemAvailable`` of /proc/meminfo, else free pages); None where unknown."""
    cap = os.environ.get("OPRT_HOST_MEMORY", "").strip()
    if cap:
        try:
            return parse_bytes(cap)
        except ValueError:
            raise UsageError(f"OPRT_HOST_MEMORY={cap!r} is not a size (bytes, or a number with K, M, G or T)"
                             ) from None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def _gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB"


def memory_refusal(spec: OpSpec, case: Case, dtype: str, device_info: dict[str, Any] | None,
                   available: int | None = None) -> str | None:
    """Why the row cannot fit (its message: what it needs and what there is), or None where it fits or the
    figures are unknown. ``device_info``: the backend's (run.json's), whose ``memory_bytes`` is its device's
    memory (none: the device is the host); ``available``: the host's free bytes (default :func:`host_available`)."""
    raw = (device_info or {}).get("memory_bytes")
    device_total = raw if isinstance(raw, int) and raw > 0 else 0
    on_host = device_total == 0
    need = case_need(spec, case, dtype, on_host)
    if not on_host and need.device > DEVICE_SHARE * device_total:
        return (f"needs {_gib(need.device)} of device memory for its inputs and outputs; the device has "
                f"{_gib(device_total)} ({DEVICE_SHARE:.0%} of it usable for a row)")
    free = host_available() if available is None else available
    if free is not None and need.host > free:
        what = "its arrays, float64 reference and check" if on_host else "its inputs, float64 reference and check"
        return f"needs {_gib(need.host)} of host memory for {what}; {_gib(free)} is available"
    return None
