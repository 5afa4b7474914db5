"""DeviceArray: a view of a compiled backend's device memory, and the span/stride helpers it rests on.

A view is a pointer to element ``[0, ..., 0]``, a shape and strides in elements
(negative and zero strides allowed), and an ``owner`` keeping the allocation alive.
:mod:`oprt_core.compiled` re-exports :class:`DeviceArray`. What a view needs of its backend is
:class:`ArrayBackend` (a name and ``to_host``), so this module does not import the backend's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from .dlpack import KDL_CUDA, export
from .dtypes import DType, get_dtype
from .errors import InvalidArgumentError

__all__ = ["DeviceArray", "ArrayBackend", "RawBuffer", "BF16_TYPESTR", "element_span", "contiguous_strides"]

# bfloat16 has no standard __cuda_array_interface__ typestr; oprt uses '<V2' (a 2-byte opaque void), as torch
# (its bfloat16 tensors) and ml_dtypes (np.dtype(bfloat16).str) do. No consumer reads it back as bfloat16 but oprt:
# DLPack (kDLBfloat) is the hand-over that keeps the dtype
BF16_TYPESTR = "<V2"


class ArrayBackend(Protocol):
    """What a :class:`DeviceArray` asks of the backend whose memory it views (``CompiledBackend`` is one)."""

    name: str

    def to_host(self, array: DeviceArray) -> np.ndarray: ...


def element_span(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, int]:
    """(lowest, highest) offsets, in the strides' unit, of the elements of a non-empty view."""
    lo = hi = 0
    for n, s in zip(shape, strides):
        if n > 1:
            if s < 0:
                lo += (n - 1) * s
            else:
                hi += (n - 1) * s
    return lo, hi


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides in elements of ``shape`` (an extent of 0 counts as 1, so strides stay positive)."""
    strides, run = [], 1
    for n in reversed(shape):
        strides.append(run)
        run *= max(int(n), 1)
    return tuple(reversed(strides))


class DeviceArray:
    """A view of device memory of a compiled backend.

    ``ptr`` is the address of element ``[0, ..., 0]`` (an int), ``strides_elements``
    the strides counted in elements (negative or zero allowed), ``strides`` the
    same in bytes like numpy. ``owner`` keeps the memory alive: an allocation that
    is freed with ``oprt_free`` when the last reference goes, or a foreign object
    (a CuPy array, a torch tensor) whose memory this array views.

    It exports DLPack (``__dlpack__``, ``__dlpack_device__``) wherever its memory has a DLPack device type
    (``dlpack_device``: ``(device_type, device_id)``; kDLCUDA on the CUDA-like backends, by default
    ``(2, backend.device)`` when ``cuda_interop``): ``torch.from_dlpack``, ``cupy.from_dlpack`` and
    ``jax.dlpack.from_dlpack`` view it without a copy, bf16 included (kDLBfloat, 16 bits); the consumer's
    tensor keeps this array (and its allocation) alive. See :mod:`oprt_core.dlpack` for streams.

    On CUDA-like backends (``cuda_interop=True``) it also exposes
    ``__cuda_array_interface__`` (version 3) so ``cupy.asarray`` and
    ``torch.as_tensor`` view it zero-copy. bfloat16 has no standard typestr there:
    oprt exports it as ``'<V2'`` (as torch does for its own bfloat16 tensors) and reads ``'<V2'`` back as
    bfloat16, but ``torch.as_tensor`` and CuPy cannot read it: hand a bf16 array over through DLPack
    (``torch.from_dlpack(a)``).
    """

    def __init__(self, backend: ArrayBackend, ptr: int, shape: Sequence[int], strides: Sequence[int],
                 dtype: DType | str | np.dtype, owner: Any = None, *, cuda_interop: bool = False,
                 readonly: bool = False, dlpack_device: tuple[int, int] | None = None):
        self.backend = backend
        self.ptr = int(ptr)
        self._shape = tuple(int(s) for s in shape)
        self._strides = tuple(int(s) for s in strides)
        if len(self._strides) != len(self._shape):
            raise InvalidArgumentError(f"DeviceArray: shape {self._shape} and strides {self._strides} differ in length")
        self.dtype_info = get_dtype(dtype, index=True)
        self.owner = owner
        self.cuda_interop = cuda_interop
        self.readonly = readonly
        if dlpack_device is None and cuda_interop:
            dlpack_device = (KDL_CUDA, int(getattr(backend, "device", 0)))
        self.dlpack_device = dlpack_device

    # -- numpy-like properties ------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def strides_elements(self) -> tuple[int, ...]:
        return self._strides

    @property
    def strides(self) -> tuple[int, ...]:
        """Strides in bytes, like numpy."""
        return tuple(s * self.itemsize for s in self._strides)

    @property
    def dtype(self) -> np.dtype:
        return self.dtype_info.numpy

    @property
    def itemsize(self) -> int:
        return self.dtype_info.itemsize

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return math.prod(self._shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def is_contiguous(self) -> bool:
        expected = 1
        for n, s in zip(reversed(self._shape), reversed(self._strides)):
            if n != 1 and s != expected:
                return False
            expected *= n
        return True

    def span(self) -> tuple[int, int]:
        """(offset of the lowest-addressed byte, bytes covered) relative to ``ptr``; (0, 0) when empty."""
        if self.size == 0:
            return 0, 0
        lo, hi = element_span(self._shape, self._strides)
        return lo * self.itemsize, (hi - lo + 1) * self.itemsize

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self._shape[0]

    def __repr__(self) -> str:
        return (f"DeviceArray(backend={self.backend.name!r}, shape={self._shape}, dtype={self.dtype_info.name}, "
                f"strides_elements={self._strides}, ptr=0x{self.ptr:x})")

    def get(self) -> np.ndarray:
        """A host copy (like cupy's ``.get()``)."""
        return self.backend.to_host(self)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        if not self.cuda_interop:
            raise AttributeError(f"backend {self.backend.name!r} is not CUDA-like: no __cuda_array_interface__")
        typestr = BF16_TYPESTR if self.dtype_info.name == "bf16" else self.dtype.str
        return {
            "version": 3,
            "shape": self._shape,
            "typestr": typestr,
            "descr": [("", typestr)],
            "data": (self.ptr if self.size else 0, self.readonly),
            "strides": None if self.is_contiguous else self.strides,
            # oprt launches on the NULL stream: the legacy default stream, 1 in the CAI v3 convention
            "stream": 1,
        }


    def __dlpack_device__(self) -> tuple[int, int]:
        if self.dlpack_device is None:
            raise BufferError(f"backend {self.backend.name!r} has memory DLPack has no device type for (not "
                              "CUDA-like): copy the array to the host with .get()")
        return self.dlpack_device

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None, dl_device: Any = None,
                   copy: bool | None = None) -> Any:
        """A DLPack capsule viewing this array (no copy); see :func:`oprt_core.dlpack.export` for ``stream``."""
        device = self.__dlpack_device__()
        return export(self.ptr if self.size else 0, self._shape, self._strides, self.dtype_info, self, device,
                      readonly=self.readonly, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy,
                      synchronize=getattr(self.backend, "synchronize", None))


class RawBuffer:
    """A device allocation without a tensor view (workspaces, the cache-flush buffer)."""

    __slots__ = ("ptr", "owner", "nbytes")

    def __init__(self, ptr: int, owner: Any, nbytes: int = 0):
        self.ptr = ptr
        self.owner = owner
        self.nbytes = nbytes
