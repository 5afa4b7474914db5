"""Vendor-library baseline backends: ``torch`` and ``cupy``.

Both are registered through the ``oprt`` entry-point group (entry points
``torch = "oprt_bench.baselines.torch_plugin"`` and
``cupy = "oprt_bench.baselines.cupy_plugin"``) and are available where the library
imports and sees a CUDA device. Importing this package (or registering the
backends) never imports torch or cupy: they are imported lazily, on the first
``availability()`` or device call.
"""

from __future__ import annotations

from .cupy_backend import CupyBackend
from .torch_backend import TorchBackend

__all__ = ["TorchBackend", "CupyBackend"]
