"""The vendor-library baseline backends (``torch``, ``cupy``, ``torch-compile``, ``liger``) and the base a torch-tensor
(or other library's) backend builds on; ``oprt_bench.baselines`` is their public, stable face, and its package
docstring the guide.

- :mod:`.base`: :class:`BaselineBackend` (a library imported on the first ``availability()``, ops given through
  ``add_op``, the argument checks), :class:`Launcher`, :class:`CudaEvent` and device facts;
- :mod:`.host_layout`: a host view copied to a device as the same view;
- :mod:`.torch_backend`, :mod:`.torch_compile_backend`, :mod:`.cupy_backend`, :mod:`.liger_backend`: the backends.

A backend holds no op of its own: each op's implementation for it is in the op's folder,
``oprt_core/operators/<op>/baselines.py`` (``IMPLS``, by backend name), in the signature the backend's ``add_op``
documents; the registry hands them over (the built-in plugin registers them through ``oprt_register_impls``), and
``oprt_core.operators.equip(backend)`` does for a backend made by hand. The plugins that register the backends are
oprt-bench's (entry points ``torch``, ``cupy``, ``torch-compile``, ``liger``). Nothing here imports torch, cupy,
triton or liger_kernel: they are imported on the first ``availability()`` or device call.
"""

from __future__ import annotations

from .base import (
    BaselineBackend,
    CudaEvent,
    Impl,
    Launcher,
    MiB,
    cuda_version_text,
    flush_bytes,
    import_library,
    is_installed,
    positive_nbytes,
    spec_peak_gbps,
)
from .cupy_backend import CupyBackend
from .host_layout import HostSpan, element_strides, host_span
from .liger_backend import LigerBackend, LigerOp
from .torch_backend import (
    NEGATIVE_STRIDES,
    TorchBackend,
    TorchEvent,
    tensor_dtype_name,
    tensor_layout,
    torch_dtype,
)
from .torch_compile_backend import TorchCompileBackend

__all__ = [
    "TorchBackend", "CupyBackend", "TorchCompileBackend", "LigerBackend", "LigerOp",
    "BaselineBackend", "Impl", "Launcher", "CudaEvent", "TorchEvent",
    "is_installed", "import_library", "spec_peak_gbps", "cuda_version_text", "flush_bytes", "MiB",
    "positive_nbytes",
    "HostSpan", "host_span", "element_strides",
    "torch_dtype", "tensor_dtype_name", "tensor_layout", "NEGATIVE_STRIDES",
]
