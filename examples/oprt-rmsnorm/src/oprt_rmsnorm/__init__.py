"""oprt-rmsnorm: the ``rms_norm_example`` operator for oprt, with numpy and Triton implementations.

Importing this package is cheap (numpy and oprt_core only); the Triton kernel lives in
:mod:`oprt_rmsnorm.triton_impl`, imported when the triton backend first runs the op.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .numpy_impl import rms_norm_numpy
from .spec import rms_norm_case, rms_norm_reference, rms_norm_spec

__all__ = ["__version__", "rms_norm_spec", "rms_norm_reference", "rms_norm_case", "rms_norm_numpy"]
