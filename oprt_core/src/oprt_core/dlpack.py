"""DLPack export: oprt's arrays handed to torch, CuPy, numpy or JAX without a copy, bf16 included.

The producer side of the DLPack protocol (https://dmlc.github.io/dlpack/latest/python_spec.html), in ctypes:
:func:`capsule` builds a ``DLManagedTensorVersioned`` (DLPack 1.x, capsule name ``"dltensor_versioned"``) or,
for a consumer that does not ask for a version, the legacy ``DLManagedTensor`` (``"dltensor"``) over a pointer,
shape, strides (in elements) and dtype, and keeps the owner (a :class:`~oprt_core.device_array.DeviceArray`, a
numpy array) alive until the consumer calls the tensor's deleter. A consumer renames the capsule
(``"used_dltensor"``...) and then owns the tensor; the tensor of a capsule dropped unconsumed (a consumer that
refused it: numpy for bf16) is released at the next export (see ``_sweep``: no capsule destructor, so the
consumer's own error reaches the caller).

The deleter is a ctypes callback. A consumer that calls it while an exception is being raised (its tensor freed
as a temporary of a failing expression, e.g. ``torch.from_dlpack(a) + 1 / 0``) still releases the array, but
Python then reports the callback's SystemError ("Exception ignored on calling ctypes callback function") in place
of that exception: a Python callback cannot run under a pending exception, and only a C deleter could.

dtypes: f32 and f16 are ``kDLFloat`` (code 2) of 32 and 16 bits; bf16 is ``kDLBfloat`` (code 4), 16 bits, which
torch and JAX read as bfloat16 (numpy and CuPy have no bfloat16 and refuse it); the index dtypes i32 and i64 are
``kDLInt`` (code 0) of 32 and 64 bits.

:func:`host_view` wraps a host numpy array (bf16 too: numpy's own ``__dlpack__`` refuses ml_dtypes' bfloat16)
as a kDLCPU exporter, so ``torch.from_dlpack(host_view(a))`` views a bf16 numpy result without a copy.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from .dtypes import DType, dtype_of
from .errors import InvalidArgumentError

__all__ = ["KDL_CPU", "KDL_CUDA", "KDL_FLOAT", "KDL_BFLOAT", "DLDevice", "DLDataType", "DLTensor",
           "DLManagedTensor", "DLManagedTensorVersioned", "DLPACK_VERSION", "FLAG_READ_ONLY", "dl_dtype",
           "capsule", "export", "host_view", "HostView"]

KDL_CPU = 1
KDL_CUDA = 2
KDL_INT = 0
KDL_FLOAT = 2
KDL_BFLOAT = 4
DLPACK_VERSION = (1, 0)  # the struct layout and flags this module writes
FLAG_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY

_DL_CODES = {"f32": (KDL_FLOAT, 32), "f16": (KDL_FLOAT, 16), "bf16": (KDL_BFLOAT, 16), "i32": (KDL_INT, 32),
             "i64": (KDL_INT, 64)}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


# both deleters take the managed tensor's address (void * here: one callback type serves both structs)
_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


def dl_dtype(dt: DType) -> tuple[int, int, int]:
    """(code, bits, lanes) of an oprt dtype: kDLFloat for f32 and f16, kDLBfloat for bf16, kDLInt for i32, i64;
    InvalidArgumentError for e4m3 (not exported: the fp8 codes are recent in DLPack and its consumers)."""
    if dt.name not in _DL_CODES:
        raise InvalidArgumentError(f"no DLPack export of {dt.name} arrays (f32, f16, bf16, i32 and i64 only)")
    code, bits = _DL_CODES[dt.name]
    return code, bits, 1


# managed tensor address -> what it needs alive (the struct, shape and strides arrays, the owner) until its deleter
# runs, and the capsules handed out and not yet seen dropped (see _sweep)
_live: dict[int, tuple[Any, ...]] = {}
_pending: dict[int, Any] = {}
_sweep_lock = threading.Lock()


@_Deleter
def _deleter(address: int) -> None:
    # Only statements, no calls: a consumer may call this while an exception is being raised (its tensor freed as
    # a temporary during the unwinding), and a Python callback's calls then fail; the release still happens.
    if address in _live:
        del _live[address]


_NAME = b"dltensor"
_NAME_VERSIONED = b"dltensor_versioned"
_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_PyCapsule_IsValid = ctypes.pythonapi.PyCapsule_IsValid
_PyCapsule_IsValid.restype = ctypes.c_int
_PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _refs_alone() -> int:
    """What ``sys.getrefcount(_pending[key])`` reads for an object only ``_pending`` holds (measured, as the
    interpreter counts its own temporary references)."""
    probe: dict[int, Any] = {0: object()}
    return sys.getrefcount(probe[0])


_ALONE = _refs_alone()


def _sweep() -> None:
    """Release the tensors of capsules dropped unconsumed. The capsules have no destructor (a Python one would run
    while the consumer that refused the capsule raises its error, and a Python callback cannot run then without
    replacing that error): this module holds each capsule until only it does; then one still under its first name
    was never consumed, and its tensor is released here; a renamed one belongs to its consumer, which calls the
    deleter. Runs at every export, so an unconsumed capsule keeps its array until the next export."""
    with _sweep_lock:
        for address in list(_pending):
            if sys.getrefcount(_pending[address]) > _ALONE:
                continue
            cap = _pending.pop(address)
            if _PyCapsule_IsValid(cap, _NAME) or _PyCapsule_IsValid(cap, _NAME_VERSIONED):
                _live.pop(address, None)
            del cap


def capsule(ptr: int, shape: Sequence[int], strides: Sequence[int], dtype: DType, owner: Any,
            device: tuple[int, int], *, readonly: bool = False, versioned: bool = True) -> Any:
    """A DLPack capsule over ``ptr`` (element ``[0, ..., 0]``), ``shape`` and ``strides`` in elements, keeping
    ``owner`` alive until the consumer's deleter call. ``versioned``: a DLPack 1.x ``DLManagedTensorVersioned``
    (with the read-only flag); else the legacy ``DLManagedTensor``, which cannot say read-only (refused then,
    with BufferError, as numpy does)."""
    if readonly and not versioned:
        raise BufferError("a read-only array cannot be exported as a legacy (unversioned) DLPack capsule, which "
                          "cannot mark it read-only; the consumer must ask for DLPack 1.0 (max_version=(1, 0))")
    ndim = len(shape)
    shape_arr = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_arr = (ctypes.c_int64 * max(ndim, 1))(*strides)
    if versioned:
        managed: Any = DLManagedTensorVersioned()
        managed.version = DLPackVersion(*DLPACK_VERSION)
        managed.flags = FLAG_READ_ONLY if readonly else 0
    else:
        managed = DLManagedTensor()
    t = managed.dl_tensor
    t.data = ptr or None
    t.device = DLDevice(*device)
    t.ndim = ndim
    t.dtype = DLDataType(*dl_dtype(dtype))
    t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides_arr, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    managed.manager_ctx = None
    managed.deleter = _deleter
    address = ctypes.addressof(managed)
    _sweep()
    _live[address] = (managed, shape_arr, strides_arr, owner)
    try:
        cap = _PyCapsule_New(address, _NAME_VERSIONED if versioned else _NAME, None)
    except BaseException:
        _live.pop(address, None)
        raise
    _pending[address] = cap
    return cap


def export(ptr: int, shape: Sequence[int], strides: Sequence[int], dtype: DType, owner: Any,
           device: tuple[int, int], *, readonly: bool = False, stream: Any = None,
           max_version: tuple[int, int] | None = None, dl_device: Any = None, copy: bool | None = None,
           synchronize: Any = None) -> Any:
    """``__dlpack__`` for an exporter of ``device`` (``(device_type, device_id)``): the keyword arguments are the
    protocol's (Python array API 2023.12), checked here; ``synchronize``: a zero-argument callable that waits for
    the producer's queued work (the device), called when the consumer's ``stream`` may not be ordered after it.

    Streams (CUDA): oprt launches on the legacy default stream. ``None``, ``1`` (legacy default) and ``2``
    (per-thread default, which synchronizes with the legacy one) are ordered after its work: nothing to wait
    for; ``-1``: the consumer asks for no synchronization; any other stream may be a non-blocking one, so the
    device is synchronized first; ``0`` is ambiguous and refused, as the protocol says."""
    if copy:
        raise BufferError("oprt exports its arrays without a copy only (copy=True is not supported); "
                          "copy after the hand-over")
    if dl_device is not None and tuple(int(v) for v in dl_device) != tuple(device):
        raise BufferError(f"the array is on DLPack device {tuple(device)}, not {tuple(dl_device)}; "
                          "oprt does not copy across devices on export")
    if device[0] == KDL_CPU:
        if stream is not None:
            raise BufferError(f"stream must be None for a CPU array, got {stream!r}")
    elif stream is not None:
        if not isinstance(stream, int) or isinstance(stream, bool):
            raise TypeError(f"stream must be None or an int (a CUDA stream handle), got {type(stream).__name__}")
        if stream == 0:
            raise ValueError("stream 0 is ambiguous in the DLPack protocol: pass 1 for the legacy default stream "
                             "or 2 for the per-thread default stream")
        if stream not in (-1, 1, 2) and synchronize is not None:
            synchronize()
    versioned = max_version is not None and int(max_version[0]) >= DLPACK_VERSION[0]
    return capsule(ptr, shape, strides, dtype, owner, device, readonly=readonly, versioned=versioned)


class HostView:
    """A host numpy array as a kDLCPU DLPack exporter (bf16 included): ``torch.from_dlpack(host_view(a))``.

    Holds the array; the consumer's tensor views its memory and keeps it alive."""

    __slots__ = ("array", "dtype_info")

    def __init__(self, array: np.ndarray):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"host_view takes a numpy array, got {type(array).__module__}.{type(array).__name__}")
        self.dtype_info = dtype_of(array.dtype, index=True)
        if any(s % array.itemsize for s in array.strides):
            raise BufferError(f"strides {array.strides} are not multiples of the itemsize {array.itemsize}")
        self.array = array

    def __dlpack_device__(self) -> tuple[int, int]:
        return KDL_CPU, 0

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None, dl_device: Any = None,
                   copy: bool | None = None) -> Any:
        a = self.array
        return export(a.ctypes.data, a.shape, tuple(s // a.itemsize for s in a.strides), self.dtype_info, a,
                      (KDL_CPU, 0), readonly=not a.flags.writeable, stream=stream, max_version=max_version,
                      dl_device=dl_device, copy=copy)


def host_view(array: np.ndarray) -> HostView:
    """``array`` (an f32, f16 or bf16 numpy array) as a DLPack exporter on the CPU; see :class:`HostView`."""
    return HostView(array)
