"""oprt-triton: backend ``triton``, the five core oprt ops as Triton kernels on torch tensors.

Importing this package is cheap: neither triton nor torch is imported until the backend is asked
for its availability, and the kernels (:mod:`oprt_triton.kernels`) only when an op is prepared.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
