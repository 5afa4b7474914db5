"""The functional op API: call a kernel without writing a benchmark.

    >>> import numpy as np, oprt_core.ops as ops
    >>> ops.softmax(np.ones((2, 3), np.float32), axis=-1)        # numpy backend

On GPU backends the inputs may be the backend's own arrays, CuPy arrays or torch
tensors (zero-copy through ``__cuda_array_interface__``); numpy arrays are copied
to the device. An ``out`` must be writable in place: on a GPU backend a numpy ``out`` is refused
(it would be copied and the caller's array never written). Prepared descriptors are cached per
(backend object, op, shapes, strides, dtype, params), so repeated calls pay only the launch; the
cache is shared by threads (a lock guards it).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .errors import BackendUnavailable, InvalidArgumentError
from .plugins import Registry, get_registry

__all__ = ["run", "copy", "vector_add", "relu", "reduce_sum", "softmax", "clear_cache"]

_CACHE_SIZE = 256
_cache: OrderedDict[tuple, tuple[Any, Any]] = OrderedDict()  # key -> (backend, launcher)
_cache_lock = threading.Lock()


def _layout_key(array: Any) -> tuple:
    shape = tuple(getattr(array, "shape", ()))
    strides = getattr(array, "strides", None)
    if callable(strides):  # torch.Tensor.stride is a method
        strides = None
    if strides is None and hasattr(array, "stride"):
        strides = tuple(array.stride())
    return shape, tuple(strides) if strides is not None else None, str(getattr(array, "dtype", ""))


def clear_cache() -> None:
    with _cache_lock:
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
        out = _as_out(be, backend, out)
    # id(be): two registries may hold different backends of one name; the cached entry keeps ``be``
    # alive, so its id is not reused while the entry exists
    key = (backend, op, tuple(_layout_key(a) for a in arrays), _layout_key(out), tuple(sorted(full.items())),
           id(be))
    with _cache_lock:
        entry = _cache.get(key)
        if entry is not None:
            _cache.move_to_end(key)
    if entry is None:
        launcher = be.prepare(op, arrays, out, full)
        with _cache_lock:
            _cache[key] = (be, launcher)
            if len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
        launcher()
    else:
        entry[1].run(arrays, out)
    return out


def _as_out(be: Any, backend: str, out: Any) -> Any:
    """The backend's view of the caller's ``out``; a host numpy array the backend would copy (so the
    caller's array would never be written) is refused."""
    if isinstance(out, (np.ndarray, np.generic)):
        dev = be.asarray(out)
        if not isinstance(dev, np.ndarray) or (isinstance(out, np.ndarray) and not np.may_share_memory(dev, out)):
            raise InvalidArgumentError(f"out must be a device array of backend {backend!r} "
                                       f"(or a CuPy array / torch tensor); got {type(out).__module__}."
                                       f"{type(out).__name__}")
        return dev
    return be.asarray(out)


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
