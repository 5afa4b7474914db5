"""oprt-gelu: the ``gelu_tanh`` operator (GELU, tanh approximation) for oprt, with numpy, Triton and CUDA kernels.

Importing this package is cheap (numpy and oprt_core only); the Triton kernel lives in
:mod:`oprt_gelu.triton_impl`, imported when the triton backend first runs the op; the CUDA kernel is
``csrc/gelu_tanh.cu``, behind the C header ``include/oprt_gelu_tanh.h`` generated from the spec.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .numpy_impl import gelu_tanh_numpy
from .spec import gelu_tanh_case, gelu_tanh_reference, gelu_tanh_spec

__all__ = ["__version__", "gelu_tanh_spec", "gelu_tanh_reference", "gelu_tanh_case", "gelu_tanh_numpy"]
