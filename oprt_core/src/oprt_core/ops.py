"""The functional op API: call a kernel without writing a benchmark.

    >>> import numpy as np, oprt_core.ops as ops
    >>> ops.softmax(np.ones((2, 3), np.float32), axis=-1)        # numpy backend

On GPU backends the inputs may be the backend's own arrays, CuPy arrays or torch
tensors (zero-copy through ``__cuda_array_interface__``); numpy arrays are copied
to the device. Prepared descriptors are cached per (backend, op, shapes, strides,
dtype, params), so repeated calls pay only the launch.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import BackendUnavailable
from .plugins import Registry, get_registry

__all__ = ["run", "copy", "vector_add", "relu", "reduce_sum", "softmax", "clear_cache"]

_CACHE_SIZE = 256
_cache: OrderedDict[tuple, Any] = OrderedDict()


def _layout_key(array: Any) -> tuple:
    shape = tuple(getattr(array, "shape", ()))
    strides = getattr(array, "strides", None)
    if callable(strides):  # torch.Tensor.stride is a method
        strides = None
    if strides is None and hasattr(array, "stride"):
        strides = tuple(array.stride())
    return shape, tuple(strides) if strides is not None else None, str(getattr(array, "dtype", ""))


def clear_cache() -> None:
    _cache.clear()


def run(op: str, inputs: Sequence[Any], params: Mapping[str, Any] | None = None, *, backend: str = "numpy",
        out: Any | None = None, registry: Registry | None = None) -> Any:
    """Run ``op`` on ``inputs`` with ``backend``; returns ``out`` (allocated when not given)."""
    reg = registry or get_registry()
    spec = reg.get_op(op)
    be = reg.get_backend(backend)
    avail = be.availability()
    if not avail.ok:
        raise BackendUnavailable(backend, avail.reason)
    arrays = [be.asarray(x) for x in inputs]
    full = spec.validate_params(params, [tuple(a.shape) for a in arrays])
    if out is None:
        out = be.empty(spec.output_shape([a.shape for a in arrays], full), _dtype_name(arrays[0]))
    else:
        out = be.asarray(out)
    key = (backend, op, tuple(_layout_key(a) for a in arrays), _layout_key(out), tuple(sorted(full.items())))
    launcher = _cache.get(key)
    if launcher is None:
        launcher = be.prepare(op, arrays, out, full)
        _cache[key] = launcher
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
        launcher()
    else:
        _cache.move_to_end(key)
        launcher.run(arrays, out)
    return out


def _dtype_name(array: Any) -> str:
    from .dtypes import get_dtype

    dt = array.dtype
    if hasattr(dt, "itemsize") or isinstance(dt, str):
        return get_dtype(dt if not hasattr(dt, "name") or not str(dt).startswith("torch.") else str(dt)[6:]).name
    return get_dtype(str(dt).replace("torch.", "")).name


def copy(x: Any, *, backend: str = "numpy", out: Any | None = None) -> Any:
    return run("copy", [x], backend=backend, out=out)


def vector_add(a: Any, b: Any, *, backend: str = "numpy", out: Any | None = None) -> Any:
    return run("vector_add", [a, b], backend=backend, out=out)


def relu(x: Any, negative_slope: float = 0.0, *, backend: str = "numpy", out: Any | None = None) -> Any:
    return run("relu", [x], {"negative_slope": negative_slope}, backend=backend, out=out)


def reduce_sum(x: Any, axis: int | None = -1, keepdims: bool = False, *, backend: str = "numpy",
               out: Any | None = None) -> Any:
    return run("reduce_sum", [x], {"axis": axis, "keepdims": keepdims}, backend=backend, out=out)


def softmax(x: Any, axis: int = -1, *, backend: str = "numpy", out: Any | None = None) -> Any:
    return run("softmax", [x], {"axis": axis}, backend=backend, out=out)
