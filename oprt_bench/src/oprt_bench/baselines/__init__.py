"""Vendor-library baseline backends (``torch``, ``cupy``, ``torch-compile``, ``liger``), and the base a third-party
backend may build on.

``oprt_bench.baselines`` is a public, stable package: the names in ``__all__`` keep their meaning across
releases. The code lives in oprt-core, package ``oprt_core.baselines`` (modules ``base``, ``host_layout``,
``torch_backend``, ``torch_compile_backend``, ``cupy_backend``, ``liger_backend``), so that a backend package
can build on it without oprt-bench; this package re-exports it and holds the plugins that register the
backends. Other names of those modules are internal.

The backends, registered through the ``oprt`` entry-point group (``torch =
"oprt_bench.baselines.torch_plugin"``, ``cupy = "oprt_bench.baselines.cupy_plugin"``, ``torch-compile``,
``liger``) and available where the library imports and sees a CUDA device. Importing this package (or
registering the backends) never imports torch, cupy, triton or liger_kernel: they are imported lazily, on the
first ``availability()`` or device call.

A backend starts with no op: each op's implementation for it is in the op's folder,
``oprt_core/operators/<op>/baselines.py`` (``IMPLS``: backend name -> implementation, in the signature that
backend's ``add_op`` documents), registered by oprt-core's built-in plugin through ``oprt_register_impls`` and
handed to the backend by the registry. A backend made by hand gets them from
``oprt_core.operators.equip(backend)`` (``equip(TorchBackend(device="cpu"))`` in tests).

- :class:`TorchBackend`: every op it is given (the core, model and compute ops) through torch's own kernels.
  Subclass it to run your own kernels on torch tensors: memory (``to_device`` keeps a host view's strides,
  offset and zero strides), CUDA events, cache flushing and device facts come with it; override discovery
  (``_probe``), ``supports`` and ``prepare`` (``examples/oprt-triton`` does). ``TorchBackend(device="cpu")``
  runs on torch's CPU kernels, for tests.
- :class:`CupyBackend`: the ops whose folders give it an implementation, through CuPy's functions.
- :class:`TorchCompileBackend`: ``torch.compile`` of the torch baseline's code, compiled per case at ``prepare``
  (its launcher's ``compile_s``: oprt-bench's ``compile_s`` column); needs Triton on CUDA.
- :class:`LigerBackend`: Liger-Kernel's Triton kernels, for the ops whose folders name one.

Building blocks (module ``oprt_core.baselines.base``), for a backend over another library:

- :class:`BaselineBackend`: a subclass sets ``name``, ``impl_name`` (the backend name its implementations are
  registered under) and ``_library`` (the module its first ``availability()`` imports), and writes
  ``_probe_device(lib)``; it gets ``add_op(spec, impl)`` (op name -> :data:`Impl`, in ``_impls``), a cached
  ``availability()`` that never raises, ``_require()`` (the library, or BackendUnavailable), ``_impl(op)``
  and the argument checks of ``supports`` (``_op_dtype``) and ``prepare`` (``_check_call``, through
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

Host layouts (module ``oprt_core.baselines.host_layout``): :func:`host_span` copies the memory of a host view (any
strides) into a :class:`HostSpan` that rebuilds the same view on a device; :func:`element_strides`.

torch helpers (module ``oprt_core.baselines.torch_backend``): :func:`torch_dtype` (oprt's dtype name -> torch's),
:func:`tensor_dtype_name` (a tensor's dtype -> oprt's name), :func:`tensor_layout`, and
:data:`NEGATIVE_STRIDES` (the reason a torch-based backend refuses a reversed view).
"""

from __future__ import annotations

from oprt_core.baselines import (
    NEGATIVE_STRIDES,
    BaselineBackend,
    CudaEvent,
    CupyBackend,
    HostSpan,
    Impl,
    Launcher,
    LigerBackend,
    MiB,
    TorchBackend,
    TorchCompileBackend,
    TorchEvent,
    cuda_version_text,
    element_strides,
    flush_bytes,
    host_span,
    import_library,
    is_installed,
    positive_nbytes,
    spec_peak_gbps,
    tensor_dtype_name,
    tensor_layout,
    torch_dtype,
)

__all__ = [
    "TorchBackend", "CupyBackend", "TorchCompileBackend", "LigerBackend",
    "BaselineBackend", "Impl", "Launcher", "CudaEvent", "TorchEvent",
    "is_installed", "import_library", "spec_peak_gbps", "cuda_version_text", "flush_bytes", "MiB",
    "positive_nbytes",
    "HostSpan", "host_span", "element_strides",
    "torch_dtype", "tensor_dtype_name", "tensor_layout", "NEGATIVE_STRIDES",
]
