"""Vendor-library baseline backends (``torch``, ``cupy``, ``torch-compile``, ``liger``), and the base a third-party
backend may build on.

``oprt_bench.baselines`` is a public, stable package: the names in ``__all__`` keep their meaning across
releases; its modules' other names are internal.

The backends, registered through the ``oprt`` entry-point group (``torch =
"oprt_bench.baselines.torch_plugin"``, ``cupy = "oprt_bench.baselines.cupy_plugin"``, ``torch-compile``,
``liger``) and available where the library imports and sees a CUDA device. Importing this package (or
registering the backends) never imports torch, cupy, triton or liger_kernel: they are imported lazily, on the
first ``availability()`` or device call.

- :class:`TorchBackend`: every core op through torch's own kernels. Subclass it to run your own kernels
  on torch tensors: memory (``to_device`` keeps a host view's strides, offset and zero strides), CUDA
  events, cache flushing and device facts come with it; override discovery (``_probe``), ``supports``
  and ``prepare`` (``examples/oprt-triton`` does). ``TorchBackend(device="cpu")`` runs on torch's CPU
  kernels, for tests.
- :class:`CupyBackend`: every core op through CuPy's functions, and silu_mul as one elementwise kernel.
- :class:`TorchCompileBackend`: ``torch.compile`` of the torch baseline's code, compiled per case at ``prepare``
  (its launcher's ``compile_s``: oprt-bench's ``compile_s`` column); needs Triton on CUDA.
- :class:`LigerBackend`: Liger-Kernel's Triton kernels for rms_norm, layer_norm, silu_mul and softmax.

Building blocks (module :mod:`.base`), for a backend over another library:

- :class:`BaselineBackend`: a subclass sets ``name``, ``_library`` (the module its first ``availability()``
  imports) and ``_impls`` (op name -> :data:`Impl`), and writes ``_probe_device(lib)``; it gets a cached
  ``availability()`` that never raises, ``_require()`` (the library, or BackendUnavailable) and the
  argument checks of ``supports`` (``_op_dtype``) and ``prepare`` (``_check_call``, through
  ``oprt_core.validate.check_call``).
- :data:`Impl`: an op implementation, ``(library, inputs, out, params) -> a zero-argument call``.
- :class:`Launcher`: what ``prepare`` returns: the bound call, and ``run(inputs, output)`` rebinding it to
  other arrays of the same layout (``layout_of``: :func:`tensor_layout` for torch tensors).
- :class:`CudaEvent`: an event's record/elapsed bookkeeping; a subclass makes ``event`` and writes
  ``_record`` and ``_elapsed`` (:class:`TorchEvent` is one).
- :func:`is_installed`, :func:`import_library`: a library's presence, and its import as an Availability
  reason instead of an exception.
- :func:`spec_peak_gbps`, :func:`cuda_version_text`: device facts for ``device_info``.
- :func:`flush_bytes`, :data:`MiB`: the size of a cache-flushing buffer; :func:`positive_nbytes`:
  ``copy_probe``'s argument check.

Host layouts (module :mod:`.host_layout`): :func:`host_span` copies the memory of a host view (any
strides) into a :class:`HostSpan` that rebuilds the same view on a device; :func:`element_strides`.

torch helpers (module :mod:`.torch_backend`): :func:`torch_dtype` (oprt's dtype name -> torch's),
:func:`tensor_dtype_name` (a tensor's dtype -> oprt's name), :func:`tensor_layout`, and
:data:`NEGATIVE_STRIDES` (the reason a torch-based backend refuses a reversed view).
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
from .liger_backend import LigerBackend
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
    "TorchBackend", "CupyBackend", "TorchCompileBackend", "LigerBackend",
    "BaselineBackend", "Impl", "Launcher", "CudaEvent", "TorchEvent",
    "is_installed", "import_library", "spec_peak_gbps", "cuda_version_text", "flush_bytes", "MiB",
    "positive_nbytes",
    "HostSpan", "host_span", "element_strides",
    "torch_dtype", "tensor_dtype_name", "tensor_layout", "NEGATIVE_STRIDES",
]
