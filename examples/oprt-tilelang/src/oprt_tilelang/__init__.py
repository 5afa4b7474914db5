"""oprt-tilelang: backend ``tilelang``, the five core oprt ops as TileLang kernels on torch tensors.

Importing this package is cheap: neither tilelang nor torch is imported until the backend is asked
for its availability, and the kernel factories (:mod:`oprt_tilelang.kernels`) only when a kernel is compiled.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
