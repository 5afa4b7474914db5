"""CupyBackend: the CuPy baseline (backend ``cupy``).

Each op it is given runs through CuPy's own functions (or a one-line ``cupy.ElementwiseKernel`` where CuPy has no
such function), writing into the output array; the op's implementation is in the op's folder,
``oprt_core/operators/<op>/baselines.py`` (``IMPLS["cupy"]``), handed to the backend through ``add_op``.

An op no folder gives a CuPy implementation is unsupported (CuPy has no model op of its own: a composition of
its reductions and elementwise functions would be several kernels and temporaries, not the library's op).

Strided inputs keep their layout, negative strides included (CuPy arrays may have
them). bfloat16: supported where this CuPy can run the op on ``ml_dtypes.bfloat16``
arrays (probed once per op on a tiny array); otherwise ``supports`` says
"cupy <ver> has no bfloat16 ...".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..backend import CUDA_EVENT_RESOLUTION_MS, Availability, DeviceInfo, Support
from ..dtypes import get_dtype
from ..errors import InvalidArgumentError, UnsupportedCase
from ..spec import OpSpec
from .base import (
    BaselineBackend,
    CudaEvent,
    Impl,
    Launcher,
    cuda_version_text,
    flush_bytes,
    positive_nbytes,
    spec_peak_gbps,
)
from .host_layout import host_span

__all__ = ["CupyBackend", "CupyEvent"]

# cudaDeviceAttr values (CUDA 13 dropped the clock fields from cudaDeviceProp; the attributes remain)
_ATTR_MEMORY_CLOCK_RATE = 36
_ATTR_GLOBAL_MEMORY_BUS_WIDTH = 37
_BF16_NAN_BITS = 0x7FC0


def _dtype_name(array: Any) -> str:
    try:
        return get_dtype(np.dtype(array.dtype), index=True).name
    except (InvalidArgumentError, TypeError):
        return str(array.dtype)


def _layout(a: Any) -> tuple:
    return tuple(a.shape), tuple(a.strides), str(a.dtype), int(a.device.id)


class CupyEvent(CudaEvent):
    """A CUDA event recorded on CuPy's current stream."""

    def __init__(self, cp: Any) -> None:
        self._cp = cp
        self.event = cp.cuda.Event()
        self.recorded = False

    def _record(self) -> None:
        self.event.record()

    def _elapsed(self, end: CupyEvent) -> float:
        return self._cp.cuda.get_elapsed_time(self.event, end.event)


class CupyBackend(BaselineBackend):
    """CuPy as a baseline: CuPy's own functions for every op it is given (see the module docstring)."""

    name = "cupy"
    impl_name = "cupy"
    _library = "cupy"

    def __init__(self, device: int = 0) -> None:
        super().__init__()
        self.device = int(device)
        self._bf16: dict[str, Support] = {}

    def __repr__(self) -> str:
        return f"CupyBackend(device={self.device})"

    def add_op(self, spec: OpSpec, impl: Impl) -> None:
        """Run op ``spec`` with ``impl(cupy, inputs, out, params)``, which returns a zero-argument call doing one run
        (``cupy`` the imported module, ``inputs`` and ``out`` cupy arrays on the backend's device, ``params``
        complete; called with that device current, so workspaces it allocates live there). ``impl.probe_params``,
        where it has one, is the params (a sequence of dicts) the bfloat16 probe runs it with, one run each;
        otherwise the op's defaults."""
        super().add_op(spec, impl)

    # -- discovery ------------------------------------------------------------------
    def _probe_device(self, cupy: Any) -> Availability:
        version = getattr(cupy, "__version__", "?")
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:  # noqa: BLE001 - CUDARuntimeError without a driver or device
            return Availability(False, f"cupy {version} sees no CUDA device ({type(exc).__name__}: {exc})")
        if count == 0:
            return Availability(False, f"cupy {version} sees no CUDA device")
        if self.device >= count:
            return Availability(False, f"cupy {version} sees {count} CUDA device(s); device {self.device} is not one")
        try:
            props = cupy.cuda.runtime.getDeviceProperties(self.device)
            name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
            runtime = cuda_version_text(cupy.cuda.runtime.runtimeGetVersion())
        except Exception as exc:  # noqa: BLE001 - never raises
            return Availability(False, f"cupy {version}: {type(exc).__name__}: {exc}")
        self._lib = cupy
        return Availability(True, f"cupy {version}, CUDA runtime {runtime}", name)

    def device_info(self) -> DeviceInfo:
        cp = self._require()
        rt = cp.cuda.runtime
        props = rt.getDeviceProperties(self.device)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])

        def attr(code: int, key: str) -> int | None:
            try:
                return int(rt.deviceGetAttribute(code, self.device))
            except Exception:  # noqa: BLE001
                return props.get(key)

        clock = attr(_ATTR_MEMORY_CLOCK_RATE, "memoryClockRate")  # kHz
        bus = attr(_ATTR_GLOBAL_MEMORY_BUS_WIDTH, "memoryBusWidth")  # bits
        try:
            driver = cuda_version_text(rt.driverGetVersion())
        except Exception:  # noqa: BLE001
            driver = ""
        return DeviceInfo(
            name=name,
            vendor="NVIDIA",
            memory_bytes=int(props["totalGlobalMem"]),
            l2_bytes=int(props.get("l2CacheSize", 0)) or None,
            sm_count=int(props["multiProcessorCount"]),
            warp_size=int(props.get("warpSize", 32)),
            spec_peak_gbps=spec_peak_gbps(clock, bus),
            driver_version=driver,
            toolkit=f"CUDA {cuda_version_text(rt.runtimeGetVersion())}",
            flavour=f"cupy-{cp.__version__}",
            extra={"device_index": self.device, "compute_capability": f"{props['major']}.{props['minor']}",
                   "memory_clock_khz": clock, "memory_bus_width_bits": bus, "cupy": cp.__version__},
        )

    def supports(self, op: str, dtype: str, case: Any | None = None) -> Support:
        if op not in self._impls:
            return Support(False, f"CuPy has no {op} (an op runs here through CuPy's own functions, and none was "
                                  "registered for it; a composition of its elementwise and reduction functions would "
                                  "be several kernels, not the library's op)")
        dt, refused = self._op_dtype(op, dtype)
        if refused is not None:
            return refused
        if dt.name == "bf16":
            return self._bf16_support(op)
        return Support(True)

    def _bf16_support(self, op: str) -> Support:
        """Run the op once on a tiny bfloat16 array: CuPy's bfloat16 support varies by version."""
        if op not in self._bf16:
            avail = self.availability()
            if not avail.ok:
                return Support(False, avail.reason)
            cp = self._lib
            try:
                dt = get_dtype("bf16").numpy
                x = cp.asarray(np.linspace(-1, 1, 6, dtype=np.float32).astype(dt).reshape(2, 3))
                spec, impl = self._specs[op], self._impls[op]
                shapes = [(2, 3)] * spec.n_inputs
                probes: Sequence[Mapping[str, Any]] = getattr(impl, "probe_params", ({},))
                for given in probes:
                    params = spec.validate_params(given, shapes)
                    out = cp.empty(spec.output_shape(shapes, params), dt)
                    impl(cp, [x] * spec.n_inputs, out, params)()
                cp.cuda.runtime.deviceSynchronize()
                self._bf16[op] = Support(True)
            except Exception as exc:  # noqa: BLE001 - any failure means "not supported here"
                first = str(exc).splitlines()[0] if str(exc) else ""
                self._bf16[op] = Support(False, f"cupy {cp.__version__} has no bfloat16 {op} "
                                                f"({type(exc).__name__}: {first})")
        return self._bf16[op]

    # -- memory -----------------------------------------------------------------------
    def to_device(self, array: Any) -> Any:
        """A device array with the host view's shape, strides (negative and zero included) and offset."""
        cp = self._require()
        array = np.asarray(array)
        dt = get_dtype(array.dtype, index=True)
        span = host_span(array)
        with cp.cuda.Device(self.device):
            try:
                if span.flat.size == 0:
                    return cp.empty(span.shape, dt.numpy)
                buf = cp.asarray(span.flat)
                item = dt.itemsize
                return cp.ndarray(span.shape, dt.numpy, memptr=buf.data + span.storage_offset * item,
                                  strides=tuple(s * item for s in span.strides))
            except (TypeError, ValueError) as exc:
                raise UnsupportedCase(f"cupy {cp.__version__} cannot hold {dt} arrays: {exc}") from exc

    def asarray(self, obj: Any) -> Any:
        cp = self._require()
        if isinstance(obj, cp.ndarray):
            if obj.device.id != self.device:
                raise InvalidArgumentError(f"array on device {obj.device.id} given to cupy on device {self.device}")
            return obj
        if isinstance(obj, np.ndarray | np.generic):
            return self.to_device(np.asarray(obj))
        if hasattr(obj, "__cuda_array_interface__") or hasattr(obj, "__dlpack__"):
            try:  # torch tensors and friends: zero-copy
                with cp.cuda.Device(self.device):
                    return cp.asarray(obj)
            except Exception as exc:  # noqa: BLE001
                raise InvalidArgumentError(f"cannot view {type(obj).__name__} as a cupy array: {exc}") from exc
        return self.to_device(np.asarray(obj))

    def empty(self, shape: Sequence[int], dtype: str) -> Any:
        cp = self._require()
        with cp.cuda.Device(self.device):
            return cp.empty(tuple(int(s) for s in shape), get_dtype(dtype).numpy)

    def to_host(self, array: Any) -> np.ndarray:
        cp = self._require()
        dt = get_dtype(np.dtype(array.dtype))
        if dt.name == "bf16":  # move the bits: asnumpy of bfloat16 needs nothing of cupy's bf16 math
            return np.array(cp.asnumpy(array.view(cp.uint16)).view(dt.numpy), copy=True)
        return np.array(cp.asnumpy(array), copy=True)

    def fill_nan(self, array: Any) -> None:
        cp = self._require()
        dt = get_dtype(np.dtype(array.dtype))
        if dt.name == "bf16":
            array.view(cp.uint16).fill(_BF16_NAN_BITS)
        else:
            array.fill(math.nan)

    # -- ops ----------------------------------------------------------------------------
    def prepare(self, op: str, inputs: Sequence[Any], output: Any, params: Mapping[str, Any]):
        cp, make, inputs, odt, full = self._begin(op, inputs, output, params, _dtype_name)
        for a in [*inputs, output]:
            if not isinstance(a, cp.ndarray):
                raise InvalidArgumentError(f"{op}: the cupy backend takes cupy arrays, got {type(a).__name__}")
        if odt.name == "bf16":
            support = self._bf16_support(op)
            if not support:
                raise UnsupportedCase(support.reason)
        device = self.device

        def bind(ins: Sequence[Any], out: Any) -> Callable[[], Any]:  # workspaces are allocated on the device
            with cp.cuda.Device(device):
                return make(cp, ins, out, full)

        return Launcher(bind, inputs, output, _layout, f"{op} on cupy")

    # -- timing -------------------------------------------------------------------------
    def synchronize(self) -> None:
        cp = self._require()
        cp.cuda.Device(self.device).synchronize()

    def event(self) -> CupyEvent:
        return CupyEvent(self._require())

    # -- calibration probes (oprt_core.backend.CalibrationProbes) --------------------------------------
    def copy_probe(self, nbytes: int) -> Callable[[], Any]:
        """``cudaMemcpyAsync`` device-to-device of ``nbytes`` between two uint8 arrays, on CuPy's current
        stream (the stream CupyEvent records on)."""
        cp = self._require()
        nbytes = positive_nbytes(nbytes)
        with cp.cuda.Device(self.device):
            src = cp.ones(nbytes, cp.uint8)
            dst = cp.zeros(nbytes, cp.uint8)
        rt = cp.cuda.runtime
        memcpy, kind = rt.memcpyAsync, getattr(rt, "memcpyDeviceToDevice", 3)
        dptr, sptr = dst.data.ptr, src.data.ptr

        def run() -> None:
            memcpy(dptr, sptr, nbytes, kind, cp.cuda.get_current_stream().ptr)

        run.buffers = (dst, src)  # type: ignore[attr-defined]  # kept alive with the callable
        return run

    def empty_launch_probe(self) -> Callable[[], Any]:
        """A one-element ``cupy.copyto``: CuPy's cheapest kernel launch, its Python overhead included."""
        cp = self._require()
        with cp.cuda.Device(self.device):
            src = cp.ones(1, cp.float32)
            dst = cp.zeros(1, cp.float32)
        copyto = cp.copyto
        return lambda: copyto(dst, src)

    def timer_resolution_ms(self) -> float | None:
        """CUDA events: ~0.5 us (cudaEventElapsedTime)."""
        return CUDA_EVENT_RESOLUTION_MS

    def flush_cache(self, clean: bool = False) -> None:
        """Write a device buffer of 2x L2 (at least 8 MiB) to evict it; ``clean``: then read it back (an int32
        ``max``), so that its dirty lines are written back before the next launch."""
        cp = self._require()
        if self._flush_buffer is None:
            l2 = int(cp.cuda.runtime.getDeviceProperties(self.device).get("l2CacheSize", 0) or 0)
            with cp.cuda.Device(self.device):
                self._flush_buffer = cp.empty(flush_bytes(l2), cp.uint8)
        self._flush_buffer.fill(0)
        if clean:
            self._flush_buffer.view(cp.int32).max()
