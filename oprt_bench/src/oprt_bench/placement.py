"""Where a backend's rows run: the variable that pins its device, and the ``host`` column a row gets.

A GPU backend's device is chosen by its vendor's visible-devices variable (``CUDA_VISIBLE_DEVICES`` for
NVIDIA backends and for MetaX's nvcc-shim build, ``MACA_VISIBLE_DEVICES`` for MetaX's MACA build), as
:data:`oprt_core.compiled.DRIVER_HINTS` names them; a host backend (numpy, torch on the CPU) has none.
A row's ``host`` is the machine's name, followed by ``:`` and that variable's value where it is set, so
the rows of two GPUs of one host (``h200-a:0``, ``h200-a:1``) are told apart.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any

from oprt_core.compiled import DRIVER_HINTS

from .calibrate import is_host

__all__ = ["visible_env", "host_label"]


def visible_env(device_info: Mapping[str, Any]) -> str | None:
    """The variable that pins the backend's device, or None for a host backend (no device to pin)."""
    if is_host(dict(device_info)):
        return None
    flavour = str(device_info.get("flavour", ""))
    vendor = str(device_info.get("vendor", "")).lower()
    # an nvcc build (nvidia's, or metax's nvcc-shim flavour) runs on the CUDA runtime whatever its backend's vendor
    key = "nvidia" if "nvcc" in flavour else "metax" if "mxcc" in flavour else vendor
    hint = DRIVER_HINTS.get(key)
    return hint.visible_env if hint is not None and hint.visible_env else None


def host_label(device_info: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> str:
    """The ``host`` column of a row run here on a backend with this ``device_info``."""
    env = os.environ if environ is None else environ
    host = socket.gethostname()
    var = visible_env(device_info)
    pinned = env.get(var, "").strip() if var else ""
    return f"{host}:{pinned}" if pinned else host
