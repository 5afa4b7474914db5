"""The functional op API: call a kernel without writing a benchmark.

    >>> import numpy as np, oprt_core.ops as ops
    >>> ops.softmax(np.ones((2, 3), np.float32), axis=-1)        # numpy backend

On GPU backends the inputs may be the backend's own arrays, CuPy arrays or torch
tensors (zero-copy through ``__cuda_array_interface__``; on the backend's CUDA device: one on another
device is refused); numpy arrays are copied to the device. Without an ``out``, what goes in comes out: torch
tensors give a torch tensor (on their device), CuPy arrays a CuPy array, numpy arrays (and Python lists) a numpy
array, the backend's own arrays one of its own; with mixed inputs the first input that is an array decides (see
"what goes in comes out" below; no copy on the device). An ``out`` must be writable in place: on a
GPU backend a numpy ``out`` is refused (it would be copied and the caller's array never written).
Prepared descriptors are cached per (backend object, op, shapes, strides, dtype, params), so repeated
calls pay only the launch; the cache is shared by threads (a lock guards it).

Repeated calls with an ``out`` on a compiled backend take a fast path: for the backend's own device
arrays, CuPy arrays and torch CUDA tensors the layout (type, shape, strides, dtype, device) and the data pointer
are read directly, and a layout seen before (and accepted by the full path) launches the cached
descriptor on the new pointers without rebuilding views or re-validating: one signature per array (the
arrays of a call with three or more read in one batch where they are of one type), one dict lookup and one C
call (``oprt_ptrs_<op>`` with the descriptor bound). The op functions (``ops.relu``
and the rest) key their params without building a dict; :func:`run` keys its ``params`` mapping. Anything
else (numpy arrays, other array types, ``out=None``, an explicit ``registry``) takes the full path.
Measured on the H200: results/h200/tune/host-overhead.log (scripts/host_overhead.py); the pieces of
one call: scripts/host_profile.py.

What the inputs may be (checked on the full path, before the backend sees them): arrays (anything with a
``dtype``, or with ``__cuda_array_interface__`` / ``__array_interface__``) of one of the op's dtypes (f32, f16 or
bf16 for the core ops); anything else is refused with an :class:`~oprt_core.errors.InvalidArgumentError` that
names the op, the argument and what is accepted, e.g. ``softmax: x must be an array of f32, f16 or bf16, got
int32``. A Python list, tuple or scalar is converted as ``numpy.asarray`` converts it, and then Python floats
(numpy's float64) become float32, the backends' default float dtype: ``ops.relu([-1.0, 2.0])`` is an f32
call. A list of ints or bools stays int64 or bool and is refused, as are numpy arrays of float64, int32 or
bool (convert them yourself: ``x.astype(np.float32)``).
"""

from __future__ import annotations

import keyword
import re
import struct
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from . import operators
from .device_array import DeviceArray
from .dlpack import host_view
from .dtypes import DTYPES
from .errors import BackendUnavailable, InvalidArgumentError
from .plugins import Registry, get_registry
from .spec import empty_output
from .validate import check_overlap

__all__ = ["run", *operators.names(), "clear_cache"]

_CACHE_SIZE = 256
_cache: OrderedDict[tuple, tuple[Any, Any]] = OrderedDict()  # key -> (backend, launcher)
_cache_lock = threading.Lock()
# fast path: (op, backend name, params key, the arrays' signatures) -> (registry, launcher, the launcher's backend,
# its ptr_call()); the signatures (_fast_launch): out's then each input's for one or two inputs, else one
# _signatures() of out and the inputs; a multi-output op's (_fast_launch_outputs): the outputs' count, then one
# _signatures() of the outputs and the inputs
_fast: dict[tuple, tuple[Any, Any, Any, Any]] = {}
_FAST_MAX = _CACHE_SIZE
_available: weakref.WeakSet = weakref.WeakSet()  # backends found available once (availability() can be slow)


def _sig_device_array(a: Any) -> tuple[tuple, int]:
    return (DeviceArray, id(a.backend), a._shape, a._strides, a.dtype_info.name, a.readonly), a.ptr


def _sig_function(t: type) -> Any:
    """The signature function of an array type (classified once per type), or None for "full path only"."""
    if t is DeviceArray:
        return _sig_device_array
    mod, name = t.__module__, t.__name__
    # the CUDA device index is in each signature: the full path refuses an array on another device than the
    # backend's (CompiledBackend._from_cai), so an entry filed for one device must not launch another's pointers
    if mod.startswith("cupy") and name == "ndarray":
        return lambda a: ((t, a.shape, a.strides, a.dtype, a.data.device_id), a.data.ptr)
    if mod.startswith("torch") and name in ("Tensor", "Parameter"):
        # requires_grad: torch refuses __cuda_array_interface__ for such tensors, so the full path does;
        # get_device(): the CUDA index (-1 on the CPU), as cheap as is_cuda (~40 ns)
        return lambda a: ((t, a.shape, a.stride(), a.dtype, a.get_device(), a.requires_grad), a.data_ptr())
    return None


class _TypeTable(dict):
    """array type -> what ``classify`` makes of it (a signature function, or None); a type is classified on its
    first lookup, and a known type costs one dict lookup."""

    def __init__(self, classify: Callable[[type], Any]):
        super().__init__()
        self._classify = classify

    def __missing__(self, t: type) -> Any:
        fn = self[t] = self._classify(t)
        return fn


_sig_of_type: dict[type, Any] = _TypeTable(_sig_function)


def _sigs_device_arrays(arrays: tuple) -> tuple[tuple, list[int]]:
    sigs, ptrs = [], []
    for a in arrays:
        sigs.append((id(a.backend), a._shape, a._strides, a.dtype_info.name, a.readonly))
        ptrs.append(a.ptr)
    return tuple(sigs), ptrs


def _sigs_cupy(arrays: tuple) -> tuple[tuple, list[int]]:
    sigs, ptrs = [], []
    for a in arrays:
        d = a.data
        sigs.append((a.shape, a.strides, a.dtype, d.device_id))
        ptrs.append(d.ptr)
    return tuple(sigs), ptrs


def _sigs_torch(arrays: tuple) -> tuple[tuple, list[int]]:
    return (tuple([(a.shape, a.stride(), a.dtype, a.get_device(), a.requires_grad) for a in arrays]),
            [a.data_ptr() for a in arrays])


def _sigs_function(t: type) -> Any:
    """The signatures of several arrays of type ``t`` at once (their type said once, one Python call), as the ops
    with three arrays or more take them; the same fields as :func:`_sig_function`'s, or None."""
    fn = _sig_function(t)
    if fn is None:
        return None
    if fn is _sig_device_array:
        return _sigs_device_arrays
    return _sigs_cupy if t.__module__.startswith("cupy") else _sigs_torch


_sigs_of_type: dict[type, Any] = _TypeTable(_sigs_function)


def _signatures(arrays: tuple) -> tuple[tuple, list[int]] | None:
    """(layout key, data pointers) of several arrays (three or more: the fast path's multi-array key): arrays of
    one type (the usual call) in one batch, ``(type, signatures)``; mixed types one signature each; None where an
    array is of a type the fast path does not know."""
    t = type(arrays[0])
    for a in arrays:
        if type(a) is not t:
            break
    else:
        many = _sigs_of_type[t]
        if many is None:
            return None
        sigs, ptrs = many(arrays)
        return (t, sigs), ptrs
    key, ptrs = [], []
    for a in arrays:
        fx = _sig_of_type[type(a)]
        if fx is None:
            return None
        sx, px = fx(a)
        key.append(sx)
        ptrs.append(px)
    return tuple(key), ptrs


def _signature(obj: Any) -> tuple[tuple, int] | None:
    """(layout signature, data pointer) of an array the fast path knows, else None."""
    fn = _sig_of_type[type(obj)]
    return fn(obj) if fn is not None else None


_PLAIN_KEY_TYPES = frozenset((int, bool, str, type(None)))
_f64_bytes = struct.Struct("d").pack


def _params_key(params: Mapping[str, Any] | None) -> tuple:
    """Params as a cache key: 1, 1.0 and True (or 0.0 and -0.0) are equal dict keys, not equal params, so
    each value goes in with its type, floats as their 8 bytes (-0.0 and NaN keep their identity) and
    anything else (lists, tuples) as its repr. The op functions below key their own params more cheaply
    (``_value_key``); this is for :func:`run`'s callers."""
    if not params:
        return ()
    key = []
    for k, v in params.items():
        t = type(v)
        if t not in _PLAIN_KEY_TYPES and t is not float and isinstance(v, np.generic):
            v = v.item()  # as validate_params takes it: a numpy scalar's repr may not tell two values apart
            t = type(v)
        key.append((k, t, v if t in _PLAIN_KEY_TYPES else _f64_bytes(v) if t is float else repr(v)))
    return tuple(key)


def _value_key(v: Any) -> Any:
    """One param value as a key, as :func:`_params_key` keys it (type and value; a float's 8 bytes; a numpy scalar
    as its Python value), without its name: the op functions' keys are their values in a fixed order (a tuple of
    these), never equal to a non-empty ``_params_key`` tuple of (name, type, value) tuples (``()``, no params, is
    both: copy's and vector_add's)."""
    t = type(v)
    if t in _PLAIN_KEY_TYPES:
        return (t, v)
    if t is float:
        return _f64_bytes(v)
    if isinstance(v, np.generic):
        return _value_key(v.item())  # a numpy scalar's repr may not tell two values apart (legacy print mode)
    return (t, repr(v))


def _fast_launch(op: str, pkey: Any, backend: str, out: Any, inputs: Sequence[Any]) -> Any:
    """The op API's fast path: when ``out`` and the inputs are arrays of a layout launched before, launch the
    cached descriptor on their pointers and return True; else the key to file the full path's launcher
    under (None when these arrays cannot take the fast path). On the hot path of every call with an
    ``out``: one signature per array (batched for three arrays or more), one tuple, one dict lookup, one call into
    the library."""
    if type(out) is tuple:  # a multi-output op's outputs: one pointer each, before the inputs'
        return _fast_launch_outputs(op, pkey, backend, out, inputs)
    sig = _sig_of_type
    n = len(inputs)
    try:
        if n == 1:
            fo, fx = sig[type(out)], sig[type(inputs[0])]
            if fo is None or fx is None:
                return None
            (so, po), (sx, px) = fo(out), fx(inputs[0])
            key: Any = (op, backend, pkey, so, sx)
        elif n == 2:
            fo, fa, fb = sig[type(out)], sig[type(inputs[0])], sig[type(inputs[1])]
            if fo is None or fa is None or fb is None:
                return None
            (so, po), (sa, pa), (sb, pb) = fo(out), fa(inputs[0]), fb(inputs[1])
            key = (op, backend, pkey, so, sa, sb)
        else:  # out and the inputs in one batch
            got = _signatures((out, *inputs))
            if got is None:
                return None
            key, ptrs = (op, backend, pkey, got[0]), got[1]
        hit = _fast.get(key)
    except Exception:  # noqa: BLE001 - an odd array or an unhashable param: the full path decides
        return None
    # the entry's registry must still be the one in use and its backend still that registry's (a plugin may
    # have replaced either)
    if hit is None:
        return key
    reg, launcher, be, call = hit
    if reg is not get_registry() or reg.backends.get(backend) is not be:
        return key
    status = call(po, px) if n == 1 else call(po, pa, pb) if n == 2 else call(*ptrs)
    if status:
        launcher.backend.check(status)  # be, as the registry check above found
    return True


def _fast_launch_outputs(op: str, pkey: Any, backend: str, outs: tuple, inputs: Sequence[Any]) -> Any:
    """:func:`_fast_launch` of a multi-output op (``outs`` a tuple): the same key and test, every array's pointer
    passed in order (the outputs', then the inputs')."""
    try:
        got = _signatures((*outs, *inputs))
        if got is None:
            return None
        ptrs = got[1]
        fkey = (op, backend, pkey, len(outs), got[0])
        hit = _fast.get(fkey)
    except Exception:  # noqa: BLE001 - as in _fast_launch: the full path decides (a launch's failure is not caught)
        return None
    if hit is None:
        return fkey
    reg, launcher, be, call = hit
    if reg is not get_registry() or reg.backends.get(backend) is not be:
        return fkey
    status = call(*ptrs)
    if status:
        launcher.backend.check(status)
    return True


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
        _fast.clear()
    _available.clear()


def run(op: str, inputs: Sequence[Any], params: Mapping[str, Any] | None = None, *, backend: str = "numpy",
        out: Any | None = None, registry: Registry | None = None) -> Any:
    """Run ``op`` (a registered op's name: a core op or a plugin's) on ``inputs`` with ``backend``; returns
    ``out`` as given (a CuPy array stays one), or, when ``out`` is None, a new array of the first input's kind
    (torch, CuPy, numpy, else the backend's own), as the op functions do. For an op with several outputs
    ``out`` is a tuple of one array per output, and the result a tuple.

    ``params``: the op's params by name (defaults filled in). Inputs, ``out`` and the errors raised are as for
    the op functions (:func:`softmax` and the others): an input that is not an array of one of the op's dtypes
    is refused naming the op and the argument; a Python list or scalar is converted by ``numpy.asarray``, Python
    floats to f32. An op's optional inputs (matmul's ``c``) may be left out of ``inputs`` or given as None."""
    if not isinstance(inputs, (list, tuple)):
        inputs = list(inputs)  # an iterator is read once, by whichever path runs
    fast = None
    if isinstance(out, list):
        out = tuple(out)  # a multi-output op's outputs (the fast path keys on tuples)
    if out is not None and registry is None:
        try:
            pkey = _params_key(params)
        except Exception:  # noqa: BLE001 - params the full path will refuse
            pkey = None
        if pkey is not None:
            fast = _fast_launch(op, pkey, backend, out, inputs)
            if fast is True:
                return out
    return _full(op, inputs, params, backend, out, registry, fast)


def _full(op: str, inputs: Sequence[Any], params: Mapping[str, Any] | None, backend: str, out: Any,
          registry: Registry | None, fast: tuple | None) -> Any:
    """The full path (:func:`_full_call`), its InvalidArgumentErrors naming the op: the checks shared by every op
    (a backend's output layout, a spec's shape checks) word what is wrong, the op API says of which op."""
    try:
        return _full_call(op, inputs, params, backend, out, registry, fast)
    except InvalidArgumentError as exc:
        text = str(exc)
        if not re.search(rf"(?<!\w){re.escape(op)}(?!\w)", text):
            exc.args = (f"{op}: {text}",)
        raise


def _full_call(op: str, inputs: Sequence[Any], params: Mapping[str, Any] | None, backend: str, out: Any,
               registry: Registry | None, fast: tuple | None) -> Any:
    """The full path: views, validation, the descriptor cache; files the launcher under ``fast`` (the fast
    path's key for these arrays, when they have one) once the call has succeeded."""
    caller_out = out
    reg = registry or get_registry()
    spec = reg.get_op(op)
    be = reg.get_backend(backend)
    names = spec.input_names
    if spec.optional_inputs and len(inputs) > spec.min_inputs:  # run([a, b, None]): c left out
        inputs = _given(tuple(inputs), spec.min_inputs, spec.name)
    spec.check_input_count(len(inputs))
    like = _result_kind(inputs) if out is None else None
    inputs = [_check_array(spec, names[i] if i < len(names) else f"input {i}", x) for i, x in enumerate(inputs)]
    multi = spec.multi_output
    if out is not None:
        if multi:
            if not isinstance(out, (tuple, list)) or len(out) != spec.n_outputs:
                raise InvalidArgumentError(f"{spec.name}: out must be a tuple of {spec.n_outputs} arrays "
                                           f"({', '.join(spec.output_names)}), got {type(out).__name__}")
            for name, o in zip(spec.output_names, out):
                _check_array(spec, name, o, is_out=True)
        else:
            _check_array(spec, "out", out, is_out=True)
    if be not in _available:
        avail = be.availability()
        if not avail.ok:
            raise BackendUnavailable(backend, avail.reason)
        try:
            _available.add(be)
        except TypeError:  # not weak-referenceable: checked on every call
            pass
    arrays = [be.asarray(x) for x in inputs]
    full = spec.validate_params(params, [tuple(a.shape) for a in arrays])
    if out is None:
        shapes = spec.output_shapes([a.shape for a in arrays], full)
        odt = spec.output_dtype(_dtype_name(arrays[0])).name if spec.output_dtypes else _dtype_name(arrays[0])
        made = [_new_out(be, like, shape, odt, spec.name, name) for name, shape in zip(spec.output_names, shapes)]
        caller_out, out = (tuple(m[0] for m in made), tuple(m[1] for m in made)) if multi else made[0]
    else:
        out = tuple(_as_out(be, backend, o) for o in out) if multi else _as_out(be, backend, out)
        check_overlap(spec, out, arrays, backend)  # compiled libraries check again at each launch, the fast path's too
    # id(be): two registries may hold different backends of one name; the cached entry keeps ``be``
    # alive, so its id is not reused while the entry exists
    out_key = tuple(_layout_key(o) for o in out) if multi else _layout_key(out)
    key = (backend, op, tuple(_layout_key(a) for a in arrays), out_key, _params_key(full), id(be))
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
        launcher = entry[1]
        launcher.run(arrays, out)
    if fast is not None and hasattr(launcher, "ptr_call"):
        with _cache_lock:
            _fast[fast] = (reg, launcher, launcher.backend, launcher.ptr_call())
            while len(_fast) > _FAST_MAX:  # oldest first (dicts keep insertion order)
                del _fast[next(iter(_fast))]
    if like is not None:
        return tuple(_hand_over(o, like) for o in caller_out) if multi else _hand_over(caller_out, like)
    return caller_out  # the caller's own object when an out was given, on either path


# -- what goes in comes out ------------------------------------------------------------------------------------
# Without an ``out``, the result is of the first input's kind: a torch tensor for torch tensors, a CuPy array for
# CuPy arrays, a numpy array for numpy arrays (and for Python lists and scalars), and the backend's own array for
# anything else (a DeviceArray for a DeviceArray). Only the first input that is an array decides: Python lists and
# scalars count only when every input is one. No copy on the device, by one of two routes:
#
# * where the backend can write into the input library's memory (a CUDA-like compiled backend and a torch CUDA
#   tensor or CuPy array on its device), the output is allocated by that library (``torch.empty`` /
#   ``cupy.empty``, so its caching pool, not a cudaMalloc and a synchronising cudaFree per call) and passed to
#   the backend as its ``out``: the result is the library's own array, with nothing to hand over;
# * otherwise the backend's new array is handed over without a copy where both sides are on one device:
#   DLPack for a DeviceArray or a torch tensor, ``torch.from_numpy`` (DLPack for bf16, which torch.from_numpy
#   cannot take) for a host numpy result. A numpy input on a GPU backend gets a numpy result: copied back to the
#   host, as the input was copied to the device.

_KIND_MODULES = {"torch": "Tensor", "cupy": "ndarray"}


def _kind_of(x: Any) -> str:
    t = type(x)
    if isinstance(x, (np.ndarray, np.generic)):
        return "numpy"
    root = t.__module__.partition(".")[0]
    if root in _KIND_MODULES and any(c.__name__ == _KIND_MODULES[root] for c in t.__mro__):
        return root
    return "native"


def _result_kind(inputs: Sequence[Any]) -> tuple[str, Any]:
    """(kind, the input that decides it) of a call without ``out``: the first input that is not a Python list,
    tuple or scalar; ("numpy", None) when all are."""
    for x in inputs:
        if not isinstance(x, (list, tuple, float, int, bool)):
            return _kind_of(x), x
    return "numpy", None


def _new_out(be: Any, like: tuple[str, Any] | None, shape: Sequence[int], dtype: str, op: str,
             name: str) -> tuple[Any, Any]:
    """(the caller's result, the backend's view of it): the output allocated by the input's library where the
    backend writes into that library's memory (see above), else by the backend (a host allocation that fails is an
    error naming ``op``, output ``name`` and the bytes: :func:`~oprt_core.spec.empty_output`)."""
    kind, x = like if like is not None else ("native", None)
    if (x is not None and kind in ("torch", "cupy") and getattr(be, "cuda_interop", False) and _on_cuda(kind, x)
            and _oprt_name(x.dtype) == dtype):  # the input's dtype (not a mixed op's other output dtype)
        lib = sys.modules[kind]
        if kind == "torch":
            new = lib.empty(tuple(shape), dtype=x.dtype, device=x.device)
        else:
            with x.device:
                new = lib.empty(tuple(shape), dtype=x.dtype)
        return new, be.asarray(new)
    out = empty_output(be, op, name, shape, dtype)
    return out, out


def _on_cuda(kind: str, x: Any) -> bool:
    return bool(x.is_cuda) if kind == "torch" else True  # a CuPy array is always device memory


def _hand_over(result: Any, like: tuple[str, Any]) -> Any:
    """The backend's ``result`` as the input's kind (see above): as is when it already is one."""
    kind, x = like
    if kind == "native" or _kind_of(result) == kind:
        return result
    if kind == "numpy":
        if isinstance(result, DeviceArray):
            return result.get()
        to_host = getattr(result, "get", None) or getattr(result, "cpu", None)  # CuPy / torch arrays
        return _to_numpy(to_host() if to_host is not None else result)
    lib = sys.modules[kind]
    if isinstance(result, np.ndarray):
        if kind == "torch":
            if result.dtype == DTYPES["bf16"].numpy:
                return lib.from_dlpack(host_view(result))
            return lib.from_numpy(result)
        return lib.asarray(result)  # CuPy in, a host result: copied to CuPy's current device
    return lib.from_dlpack(result)


def _to_numpy(a: Any) -> np.ndarray:
    """A host array as numpy; a torch bf16 tensor through its int16 bits (torch's .numpy() refuses bfloat16)."""
    if isinstance(a, np.ndarray):
        return a
    if str(getattr(a, "dtype", "")) == "torch.bfloat16":
        return a.view(sys.modules["torch"].int16).numpy().view(DTYPES["bf16"].numpy)
    return a.numpy() if hasattr(a, "numpy") else np.asarray(a)


def _as_out(be: Any, backend: str, out: Any) -> Any:
    """The backend's view of the caller's ``out``; a host numpy array the backend would copy (so the
    caller's array would never be written) is refused."""
    if isinstance(out, (np.ndarray, np.generic)):
        dev = be.asarray(out)
        # an empty out has no memory to share, and nothing is written to it
        if not isinstance(dev, np.ndarray) or (isinstance(out, np.ndarray) and out.size
                                               and not np.may_share_memory(dev, out)):
            raise InvalidArgumentError(f"out must be a device array of backend {backend!r} "
                                       f"(or a CuPy array / torch tensor); got {type(out).__module__}."
                                       f"{type(out).__name__}")
        return dev
    return be.asarray(out)


_ARRAY_PROTOCOLS = ("__cuda_array_interface__", "__array_interface__", "__array__", "__dlpack__")


def _accepted(spec: Any, name: str = "out") -> str:
    """The dtypes input ``name`` of the op accepts, in words: "f32, f16 or bf16" (an index input's: "i64")."""
    names = list(spec.input_dtypes(name)) if hasattr(spec, "input_dtypes") else list(spec.dtypes)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _dtype_label(dt: Any) -> str:
    """A dtype as the caller knows it: numpy's name (``int32``, ``float64``, ``bfloat16``), torch's without
    its ``torch.`` prefix."""
    if isinstance(dt, np.dtype):
        return dt.name
    text = str(dt)
    return text[6:] if text.startswith("torch.") else text


_oprt_names: dict[Any, str | None] = {}  # a dtype object -> its oprt name (f32...), None for one oprt lacks


def _oprt_name(dt: Any) -> str | None:
    """The oprt dtype name of a numpy / torch / other dtype object, or None; remembered per object (numpy's
    ``dtype.name`` alone costs microseconds)."""
    hashable = True
    try:
        return _oprt_names[dt]
    except KeyError:
        pass
    except TypeError:  # unhashable: not remembered
        hashable = False
    from .dtypes import get_dtype

    try:
        name: str | None = get_dtype(_dtype_label(dt), index=True).name
    except Exception:  # noqa: BLE001 - a dtype oprt does not know (int32, float64, bool, complex...)
        name = None
    if hashable and len(_oprt_names) < 256:  # bounded: dtype objects are few
        _oprt_names[dt] = name
    return name


def _check_array(spec: Any, name: str, x: Any, *, is_out: bool = False) -> Any:
    """``x`` as the full path takes it: an array of one of the op's dtypes as is, a Python list, tuple or
    scalar converted (numpy's float64 from Python floats to float32), anything else refused naming the op,
    the argument and what is accepted."""
    try:
        dt = getattr(x, "dtype", None)
    except Exception:  # noqa: BLE001 - an odd object: judged by its protocols below
        dt = None
    accepted = spec.input_dtypes(name) if hasattr(spec, "input_dtypes") else spec.dtypes
    if dt is not None:
        if _oprt_name(dt) in accepted:
            return x
        label = _dtype_label(dt)
    elif not is_out and (isinstance(x, (list, tuple)) or type(x) in (float, int, bool)):
        try:
            arr = np.asarray(x)
        except (ValueError, TypeError) as exc:
            raise InvalidArgumentError(f"{_must(spec, name, is_out)}, got a {type(x).__name__} numpy cannot make "
                                       f"an array of ({exc})") from None
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        if _oprt_name(arr.dtype) in accepted:
            return arr
        label = f"{type(x).__name__} of {_dtype_label(arr.dtype)}"
    elif any(hasattr(x, p) for p in _ARRAY_PROTOCOLS):
        return x  # an array without a dtype attribute: the backend reads its interface
    else:
        label = "None" if x is None else type(x).__name__
    raise InvalidArgumentError(f"{_must(spec, name, is_out)}, got {label}")


def _must(spec: Any, name: str, is_out: bool) -> str:
    return f"{spec.name}: {name} must be {'a writable' if is_out else 'an'} array of {_accepted(spec, name)}"


def _dtype_name(array: Any) -> str:
    """The oprt name of an array's dtype: numpy's, torch's (``torch.float32``: no ``name``, and numpy cannot read
    it) or a string."""
    from .dtypes import get_dtype

    dt = array.dtype
    if isinstance(dt, np.dtype):
        return get_dtype(dt).name
    return get_dtype(_dtype_label(dt)).name


# The op functions (``ops.relu`` and the rest) are made from their specs (``_op_function``): each tries the fast
# path itself, on a params key of its own (``_value_key`` of each param, in order; a float's 8 bytes straight away),
# and builds the params dict only for the full path.


_F = TypeVar("_F", bound=Callable[..., Any])

# The paragraphs every op function's docstring ends with: backend, out and aliasing, and what it raises.
_CALL_DOC = """

    ``backend``: a registered backend name: ``"numpy"`` (the default, on the CPU), ``"nvidia"``, ``"metax"`` or
    a plugin's. ``out``: None for a new array of the first input's kind (a torch tensor on its device for torch
    tensors, a CuPy array for CuPy arrays, a numpy array for numpy arrays and Python lists, else the backend's
    own array: a DeviceArray for a DeviceArray), or an array of the output's shape and dtype that is written
    and returned (any strides whose elements are distinct; on a GPU backend a device array: a
    numpy ``out`` is refused there). {aliasing}

    Raises :class:`~oprt_core.errors.InvalidArgumentError` for an input that is not an array of a dtype it
    accepts (above), naming the op, the argument and the dtypes accepted:
    ``{op}: {arg} must be an array of {accepted}, got int32``;
    and for mixed dtypes, a wrong ``out`` shape, a read-only or overlapping ``out`` or a bad param;
    :class:`~oprt_core.errors.BackendUnavailable` when the backend cannot run here (the reason says what is
    missing); :class:`~oprt_core.errors.UnsupportedCase` for what the backend does not implement.
    """
_IN_PLACE = """In place: ``out`` may be an input itself (the same memory, shape and strides; each element is read
    before it is written); any other overlap of ``out`` and an input is refused
    (:class:`~oprt_core.errors.OverlapError`)."""


def _call_doc(spec: Any, in_place: bool, aliasing: str | None = None) -> Callable[[_F], _F]:
    """Ends an op function's docstring with :data:`_CALL_DOC` for ``spec``'s op, its example naming the first input
    and the dtypes that input accepts."""
    arg = spec.input_names[0]
    if aliasing is None:
        aliasing = _IN_PLACE if in_place else ("``out`` must not share memory with an input, not even be one "
                                               "itself (refused: :class:`~oprt_core.errors.OverlapError`).")

    def decorate(fn: _F) -> _F:
        text = _CALL_DOC.format(op=spec.name, arg=arg, accepted=_accepted(spec, arg), aliasing=aliasing)
        fn.__doc__ = (fn.__doc__ or "").rstrip() + text
        return fn

    return decorate


def _annotation(p: Any) -> str:
    names = [t.__name__ for t in p.types if t is not int or float not in p.types]  # "float | int" reads "float"
    return " | ".join(names + (["None"] if p.allow_none else []))


def _op_function(spec: Any) -> Callable[..., Any]:
    """``oprt_core.ops.<op>`` made from the op's spec: its inputs positional, then its params with their defaults,
    then ``backend`` and ``out`` by keyword; the fast path keyed on the params, then the full path. Written as
    source and compiled (as dataclasses does), so it costs what a hand-written function costs and
    ``inspect.signature`` shows its real parameters."""
    names = [*spec.input_names, *(p.name for p in spec.params)]
    bad = [n for n in [spec.name, *names] if not n.isidentifier() or keyword.iskeyword(n) or n.startswith("_")
           or n in ("backend", "out")]
    if bad or len(set(names)) != len(names):
        raise InvalidArgumentError(f"op {spec.name!r}: no ops function for it: {', '.join(bad) or 'a name repeats'} "
                                   "cannot be a Python parameter name; call ops.run")
    keys = [f"_f64_bytes({p.name}) if type({p.name}) is float else _value_key({p.name})" if float in p.types
            else f"_value_key({p.name})" for p in spec.params]
    pkey = "()" if not keys else f"({keys[0]})" if len(keys) == 1 else "(" + ", ".join(f"({k})" for k in keys) + ")"
    pdict = "{" + ", ".join(f"{p.name!r}: {p.name}" for p in spec.params) + "}" if spec.params else "None"
    required, optional = spec.input_names[:spec.min_inputs], spec.optional_inputs
    args = "(" + ", ".join(required) + ",)"
    if len(optional) == 1:  # the inputs given: one test for the one optional input (matmul's c)
        args = f"({', '.join(required)},) if {optional[0]} is None else ({', '.join(spec.input_names)},)"
    elif optional:
        args = f"_given(({', '.join(spec.input_names)},), {spec.min_inputs}, {spec.name!r})"
    params = [*required, *(f"{n}=None" for n in optional), *(f"{p.name}=_defaults[{i}]" for i, p in
                                                             enumerate(spec.params)),
              "*", 'backend="numpy"', "out=None"]
    source = (f"def {spec.name}({', '.join(params)}):\n"
              + (f"    args = {args}\n" if optional else "")
              + f"    fast = _fast_launch({spec.name!r}, {pkey}, backend, out, {'args' if optional else args}) "
              "if out is not None else None\n"
              "    if fast is True:\n"
              "        return out\n"
              f"    return _full({spec.name!r}, {'args' if optional else args}, {pdict}, backend, out, None, fast)\n")
    # this module's globals: the body finds _fast_launch and _full as a hand-written function here would (and a
    # test's monkeypatch of them reaches it); the defaults are evaluated from the local namespace
    namespace: dict[str, Any] = {"_defaults": tuple(p.default for p in spec.params)}
    exec(compile(source, f"<oprt_core.ops.{spec.name}>", "exec"), globals(), namespace)  # noqa: S102 - made above
    fn = namespace[spec.name]
    fn.__module__ = __name__
    fn.__annotations__ = {**{n: "Any" for n in required}, **{n: "Any | None" for n in optional},
                          **{p.name: _annotation(p) for p in spec.params},
                          "backend": "str", "out": "Any | None", "return": "Any"}
    fn.__doc__ = spec.api_doc or f"{spec.doc}\n\n    Args:\n        " + "\n        ".join(
        [f"{n}: an array of {_accepted(spec, n)}" for n in required]
        + [f"{n}: None (left out), or an array of {_accepted(spec, n)}" for n in optional]
        + [f"{p.name}: {p.doc}" for p in spec.params])
    if spec.multi_output:
        return _call_doc_outputs(spec)(fn)
    aliasing = None
    if spec.inplace and set(spec.inplace) != set(spec.input_names):  # in place on some inputs only (matmul's c)
        allowed = " or ".join(f"``{n}``" for n in spec.inplace)
        aliasing = (f"In place: ``out`` may be {allowed} itself (the same memory, shape and strides; each element "
                    "is read before it is written); any other overlap of ``out`` and an input is refused "
                    "(:class:`~oprt_core.errors.OverlapError`).")
    return _call_doc(spec, bool(spec.inplace), aliasing)(fn)


def _given(inputs: tuple, required: int, op: str) -> tuple:
    """The inputs a call gives: ``inputs`` without its trailing Nones (optional inputs left out); an optional input
    left out before one given is refused."""
    n = len(inputs)
    while n > required and inputs[n - 1] is None:
        n -= 1
    if any(x is None for x in inputs[required:n]):
        raise InvalidArgumentError(f"{op}: an optional input is None while a later one is given; optional inputs "
                                   "are given in order")
    return inputs[:n]


def _call_doc_outputs(spec: Any) -> Callable[[_F], _F]:
    """:func:`_call_doc` of a multi-output op: returns and takes a tuple, each output's aliasing."""
    names = ", ".join(spec.output_names)
    allowed = "; ".join(f"``{o.name}`` may be exactly {' or '.join(f'``{i}``' for i in o.inplace)}" if o.inplace
                        else f"``{o.name}`` may share memory with no input" for o in spec.outputs)
    aliasing = (f"Returns a tuple ({names}); ``out`` is None or a tuple of one array per output, in that order. In "
                f"place: {allowed} (the same memory, shape and strides); any other overlap, and any overlap of two "
                "outputs, is refused (:class:`~oprt_core.errors.OverlapError`).")
    return _call_doc(spec, False, aliasing)


# the built-in ops' functions, made from their specs; an op folder's ``api(functions)``, where it has one, makes the
# function from the generated ones (an op folder's ``api``), looking them up in this module's namespace
for _spec in operators.specs():
    globals()[_spec.name] = _op_function(_spec)
for _spec in operators.specs():
    _api = getattr(operators.module(_spec.name), "api", None)
    if _api is not None:
        _fn = _api(globals())
        _fn.__module__, _fn.__qualname__ = __name__, _spec.name
        globals()[_spec.name] = _fn
        del _fn
del _spec, _api

_plugin_functions: dict[str, tuple[Any, Callable[..., Any]]] = {}  # op -> (its spec, its function)


def __getattr__(name: str) -> Callable[..., Any]:
    """``ops.<op>`` of a plugin's op (``ops.gelu_tanh``), made from its spec on first use, as the built-in ops'
    are."""
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        spec = get_registry().get_op(name)
    except Exception:  # noqa: BLE001 - an unknown name is an AttributeError, as for any module
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} (no op {name!r} is registered)") from None
    known = _plugin_functions.get(name)
    if known is None or known[0] is not spec:
        known = _plugin_functions[name] = (spec, _op_function(spec))
    return known[1]
