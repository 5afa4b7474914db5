"""A case's inputs and float64 reference drawn once and handed to every backend's worker in shared memory.

Drawing a large case's inputs and computing its float64 reference costs seconds on the host (a 4096 x 50257
softmax: ~200 M elements, 1.6 GB per float64 array). Drawn by each worker from the row's seed, a sweep of N
backends would pay it N times, one backend after the other. When two or more backends run in workers, the parent
draws the case once (:class:`~oprt_bench.execute.CasePreparer`), copies each array into a POSIX shared-memory
block (:class:`SharedCase`), and sends each worker a few hundred bytes describing the blocks
(:class:`SharedPrepared`); the worker maps them read-only (:func:`attach`). The parent unlinks the blocks once
every backend has run the case.

Views keep their layout: the bytes an array spans (its ``byte_bounds``) are copied and the worker rebuilds
the view with the same shape, strides and offset, so transposed, strided, reversed and broadcast inputs reach
the backend exactly as drawn.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from multiprocessing import shared_memory
from typing import Any

import numpy as np

from oprt_core.device_array import element_span

__all__ = ["SharedArray", "SharedPrepared", "SharedCase", "attach", "Attached"]


@dataclass(frozen=True)
class SharedArray:
    """Where an array lives in shared memory: the block, and the view (offset, shape, strides, dtype) on it."""

    block: str
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: Any  # a numpy dtype (ml_dtypes' bfloat16 included: it pickles)


@dataclass(frozen=True)
class SharedPrepared:
    """A prepared case as the worker receives it (see :data:`~oprt_bench.execute.Prepared`)."""

    inputs: tuple[SharedArray, ...] | None
    reference: SharedArray | tuple[SharedArray, ...] | None  # a tuple: a multi-output op's, one per output
    error: str
    inputs64: tuple[SharedArray, ...] | None


def _span(a: np.ndarray) -> tuple[int, int]:
    """(address of the lowest byte, bytes spanned) of ``a``'s elements."""
    if a.size == 0:
        return a.ctypes.data, 0
    lo, hi = element_span(a.shape, a.strides)
    return a.ctypes.data + lo, hi - lo + a.itemsize


class SharedCase:
    """The parent's shared-memory copy of one prepared case; :meth:`close` unlinks it."""

    def __init__(self, prepared: tuple[Any, ...]):
        inputs, ref, error, inputs64 = prepared
        self._blocks: list[shared_memory.SharedMemory] = []
        try:
            self.description = SharedPrepared(
                None if inputs is None else tuple(self._share(x) for x in inputs),
                None if ref is None else tuple(self._share(r) for r in ref) if isinstance(ref, tuple)
                else self._share(ref), error,
                None if inputs64 is None else tuple(self._share(x) for x in inputs64))
        except BaseException:
            self.close()
            raise

    def _share(self, a: np.ndarray) -> SharedArray:
        a = np.asarray(a)
        start, nbytes = _span(a)
        block = shared_memory.SharedMemory(create=True, size=max(nbytes, 1))
        self._blocks.append(block)
        if nbytes:
            src = memoryview((ctypes.c_ubyte * nbytes).from_address(start)).cast("B")
            dst = block.buf
            assert dst is not None  # an open block
            np.frombuffer(dst, np.uint8, nbytes)[:] = np.frombuffer(src, np.uint8)
        return SharedArray(block.name, a.ctypes.data - start, tuple(a.shape), tuple(a.strides), a.dtype)

    @property
    def nbytes(self) -> int:
        return sum(b.size for b in self._blocks)

    def close(self) -> None:
        blocks, self._blocks = self._blocks, []
        for b in blocks:
            try:
                b.close()
            except BufferError:  # a view of it is still alive here: unlinking still frees it once that goes
                pass
            try:
                b.unlink()
            except FileNotFoundError:
                pass


class Attached:
    """A worker's mapping of a :class:`SharedPrepared`: ``prepared`` (read-only arrays), then :meth:`close`."""

    def __init__(self, desc: SharedPrepared):
        self._blocks: dict[str, shared_memory.SharedMemory] = {}
        try:
            self.prepared: tuple[Any, ...] | None = (
                None if desc.inputs is None else [self._view(s, False) for s in desc.inputs],
                None if desc.reference is None else tuple(self._view(r, True) for r in desc.reference)
                if isinstance(desc.reference, tuple) else self._view(desc.reference, True), desc.error,
                None if desc.inputs64 is None else [self._view(s, True) for s in desc.inputs64])
        except BaseException:
            self.prepared = None
            self.close()
            raise

    def _view(self, s: SharedArray, readonly: bool) -> np.ndarray:
        """The array ``s`` over its block; the reference and the float64 inputs read-only (the inputs stay
        writable as a drawn array is: torch warns on a read-only one)."""
        block = self._blocks.get(s.block)
        if block is None:
            # the worker shares the parent's resource tracker (multiprocessing passes it on), so the block stays
            # registered once, by the parent, which unlinks it
            block = shared_memory.SharedMemory(name=s.block)
            self._blocks[s.block] = block
        a = np.ndarray(s.shape, s.dtype, buffer=block.buf, offset=s.offset, strides=s.strides)
        if readonly:
            a.flags.writeable = False
        return a

    def close(self) -> None:
        """Unmap the blocks; call once every array of :attr:`prepared` is gone."""
        self.prepared = None
        for b in self._blocks.values():
            try:
                b.close()
            except BufferError:  # an array still refers to it: the mapping goes with the process
                pass
        self._blocks = {}


def attach(desc: SharedPrepared) -> Attached:
    return Attached(desc)
