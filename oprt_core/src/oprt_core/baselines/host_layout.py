"""Host-side layout helpers of the baseline backends: a host view copied to a device as the same view.

``to_device`` must keep a host view's layout (strides, offset, negative and zero
strides): :func:`host_span` copies the smallest contiguous stretch of memory that
holds every element of the view (plus a few leading elements so the device copy
keeps the view's misalignment relative to its buffer), and says how to rebuild
the same strided view over that stretch on the device.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from oprt_core.errors import StrideError

__all__ = ["HostSpan", "host_span", "element_strides", "ALIGN_BYTES"]

# Device allocators hand out buffers aligned to at least this many bytes (torch's caching allocator 512,
# cupy's pool 256); the host view's offset from the start of its buffer is kept modulo this.
ALIGN_BYTES = 256


@dataclass(frozen=True)
class HostSpan:
    """A contiguous 1-d host copy of a view's memory and how to see the view in it again.

    ``flat[storage_offset + sum(i_k * strides[k])]`` is element ``i`` of the view
    (strides in elements, possibly negative or zero).
    """

    flat: np.ndarray
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    storage_offset: int

    def view(self) -> np.ndarray:
        """The view rebuilt over ``flat`` on the host (what the device copy must look like)."""
        item = self.flat.itemsize
        start = self.flat[self.storage_offset:] if self.flat.size else self.flat
        return np.lib.stride_tricks.as_strided(start, self.shape, tuple(s * item for s in self.strides),
                                               writeable=False)


def element_strides(array: np.ndarray) -> tuple[int, ...]:
    """The strides of ``array`` in elements; raises StrideError when one is not a whole element."""
    item = array.itemsize
    out = []
    for s in array.strides:
        if s % item:
            raise StrideError("host", None, f"stride of {s} bytes is not a multiple of the {item}-byte element "
                              f"(shape {array.shape}, strides {array.strides})")
        out.append(s // item)
    return tuple(out)


def _owner(array: np.ndarray) -> np.ndarray | None:
    base = array
    while isinstance(base.base, np.ndarray):
        base = base.base
    return base if base is not array else None


def host_span(array: np.ndarray) -> HostSpan:
    """Copy the memory a host view spans; see :class:`HostSpan`."""
    array = np.asarray(array)
    shape = tuple(int(n) for n in array.shape)
    if array.size == 0:
        # nothing to copy; a zero-size tensor has no memory to lay out
        contiguous = tuple(int(math.prod(shape[i + 1:])) for i in range(len(shape)))
        return HostSpan(np.empty(0, array.dtype), shape, contiguous, 0)
    strides = element_strides(array)
    lo = sum(s * (n - 1) for s, n in zip(strides, shape) if s < 0)  # element offsets from element 0
    hi = sum(s * (n - 1) for s, n in zip(strides, shape) if s > 0)
    span = hi - lo + 1
    # the element at the lowest address: the last index along negative strides, the first elsewhere
    if shape:
        corner = array[tuple(slice(n - 1, n) if s < 0 else slice(0, 1) for s, n in zip(strides, shape))]
    else:
        corner = array.reshape(1)
    item = array.itemsize
    lo_addr = corner.__array_interface__["data"][0]
    pad = 0
    owner = _owner(array)
    if owner is not None:
        start = owner.__array_interface__["data"][0]
        if start <= lo_addr and lo_addr + span * item <= start + owner.nbytes:
            pad = ((lo_addr - start) % ALIGN_BYTES) // item
    flat = np.empty(pad + span, array.dtype)
    flat[:pad] = 0
    flat[pad:] = np.lib.stride_tricks.as_strided(corner.reshape(-1)[:1], (span,), (item,), writeable=False)
    return HostSpan(flat, shape, strides, pad - lo)
