"""The Backend protocol: the one interface the runner knows a backend by."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["Availability", "DeviceInfo", "Support", "Event", "Backend", "Launcher", "CalibrationProbes", "KernelNames",
           "CUDA_EVENT_RESOLUTION_MS"]

# the resolution of CUDA events as documented for cudaEventElapsedTime (around 0.5 microseconds)
CUDA_EVENT_RESOLUTION_MS = 0.5e-3

@runtime_checkable
class Launcher(Protocol):
    """A prepared op (its descriptor created once).

    Calling it enqueues one run on the buffers given to ``prepare``; ``run``
    reuses the descriptor on other buffers of the same shapes, strides and dtype.
    """

    def __call__(self) -> None: ...

    def run(self, inputs: Sequence[Any], output: Any) -> None: ...


@dataclass(frozen=True)
class Availability:
    """Whether a backend can run here; ``reason`` says why not (or what it found)."""

    ok: bool
    reason: str = ""
    device: str = ""

    def __bool__(self) -> bool:
        return self.ok


@dataclass(frozen=True)
class Support:
    """The answer of ``Backend.supports``: ok, or the reason it is unsupported."""

    ok: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


SUPPORTED = Support(True)


@dataclass
class DeviceInfo:
    """What a backend runs on; every field is recorded in run.json."""

    name: str
    vendor: str = ""
    memory_bytes: int | None = None
    l2_bytes: int | None = None
    sm_count: int | None = None
    warp_size: int | None = None
    spec_peak_gbps: float | None = None  # from memory clock x bus width, where known
    driver_version: str = ""
    toolkit: str = ""
    flavour: str = ""  # build flavour: "nvcc-13.0 sm_90", "mxcc", "nvcc-shim", "numpy", ...
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class Event(Protocol):
    """A timing event on the backend's stream."""

    def record(self) -> None: ...

    def elapsed_ms(self, end: Event) -> float:
        """Milliseconds between this event and ``end`` (both recorded and complete)."""
        ...


@runtime_checkable
class Backend(Protocol):
    """What every backend offers. Implementations: NumpyBackend, CompiledBackend, torch, cupy.

    Arrays are the backend's own type (numpy arrays for numpy, DeviceArray for
    compiled backends, tensors for torch); the runner only moves them through
    these methods.
    """

    name: str

    def availability(self) -> Availability:
        """Whether the backend can run here. Never raises."""
        ...

    def device_info(self) -> DeviceInfo: ...

    def supports(self, op: str, dtype: str, case: Any | None = None) -> Support:
        """Whether this op/dtype/case is implemented; the reason when not."""
        ...

    def to_device(self, array: Any) -> Any:
        """A device copy of a host numpy array that keeps its shape and strides (views stay views)."""
        ...

    def empty(self, shape: Sequence[int], dtype: str) -> Any:
        """An uninitialised contiguous device array."""
        ...

    def to_host(self, array: Any) -> Any:
        """A host numpy array with the same values and shape."""
        ...

    def fill_nan(self, array: Any) -> None:
        """Poison a device array with NaN (before a correctness run)."""
        ...

    def prepare(self, op: str, inputs: Sequence[Any], output: Any, params: Mapping[str, Any]) -> Launcher:
        """Create the op's descriptor once and return a launcher reusable for many runs.

        Raises InvalidArgumentError subclasses for bad shapes, dtypes or params and
        UnsupportedCase when the backend lacks the op, dtype or layout.
        """
        ...

    def asarray(self, obj: Any) -> Any:
        """Accept a caller's array for the op API: the backend's own arrays, and for GPU
        backends CuPy arrays / torch tensors zero-copy; numpy arrays are copied to the device."""
        ...

    def synchronize(self) -> None: ...

    def event(self) -> Event:
        """A new timing event."""
        ...

    def flush_cache(self, clean: bool = False) -> None:
        """Evict the device's last-level cache (write a buffer of at least 2x L2).

        ``clean``: then read the buffer back, so that the cache's dirty lines are written back before
        this returns (the work is enqueued like the write) and the next launch starts with the cache
        holding clean lines only (``oprt-bench --flush clean``). A backend may omit the argument; it
        then supports the default flush only."""
        ...


@runtime_checkable
class KernelNames(Protocol):
    """Optional: a backend that can say which of its kernels a launch ran (CompiledBackend with a
    ``last_launch`` callable: oprt-nvidia's). oprt-bench records it in the ``kernel`` column."""

    def last_launch(self) -> str | None:
        """The kernels the calling thread's last op call on this backend launched, as the backend names
        them (``"reduce_cols_band+reduce_cols_band_finish"``; ``"none"`` where it launched nothing), or None
        where the backend cannot say."""
        ...


@runtime_checkable
class CalibrationProbes(Protocol):
    """Optional methods a backend may add so oprt-bench can calibrate it (docs/measurement.md).

    None is required: the runner checks each with ``getattr`` and falls back (the ``copy`` op
    for the bandwidth probe, an empty event pair for the timer floor, the measured resolution).
    Each returns a zero-argument callable that *enqueues* work on the stream the backend's
    events are recorded on, like a prepared launcher, so the timing loop times it unchanged.
    """

    def copy_probe(self, nbytes: int) -> Any:
        """A callable doing one device-to-device copy of ``nbytes`` bytes between two device
        buffers it allocates and keeps alive (the backend's own memcpy: ``cudaMemcpy`` D2D,
        ``Tensor.copy_``, ``np.copyto``...). It reads ``nbytes`` and writes ``nbytes``."""
        ...

    def empty_launch_probe(self) -> Any:
        """A callable enqueuing the cheapest launch the backend can make (e.g. a copy of one
        element): what an op costs when it does nothing, host overhead included."""
        ...

    def timer_resolution_ms(self) -> float | None:
        """The documented resolution of the backend's events in ms (CUDA: ~0.5 us), or None."""
        ...
