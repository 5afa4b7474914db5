"""CupyBackend: the CuPy baseline (backend ``cupy``).

Every core op runs through CuPy's own functions, writing into the output array:

========== ==========================================================================
op         cupy call
========== ==========================================================================
copy       ``cupy.copyto(out, x)``
vector_add ``cupy.add(a, b, out=out)`` (broadcasting; f16 math through float, one rounding)
relu       slope 0: ``cupy.maximum(x, 0, out=out)``; slope != 0: a one-line
           ``cupy.ElementwiseKernel`` ``y = v > 0 ? v : v * slope`` in f32 (CuPy has no relu)
reduce_sum ``cupy.sum(x, axis, keepdims=..., out=out)``; for f16/bf16 with ``dtype=float32``:
           CuPy's own float16 sum (through CUB) accumulates in half precision and misses the
           f32-accumulation budget. Where this CuPy refuses an f32 sum into a narrow ``out``,
           it sums into an f32 buffer of the output's shape and copies (one extra small pass)
softmax    CuPy has no softmax kernel; ``cupyx.scipy.special.softmax`` is
           ``e = exp(x - amax(x)); e / sum(e)`` in the input dtype with three full-size
           temporaries. The backend runs the same expression in f32 into a workspace
           allocated once by ``prepare``: ``amax`` (small, into a preallocated buffer),
           ``subtract(x, m, dtype=float32, out=w)``, ``exp(w, out=w)``, ``sum(w, out=s)``,
           ``divide(w, s, out=out)``: 5 kernels moving ~5x the ideal bytes (x read twice,
           the f32 workspace written twice and read three times)
silu_mul   a one-line ``cupy.ElementwiseKernel`` ``out = g / (1 + exp(-g)) * up`` in f32
           (``g`` = gate in f32), one rounding to the dtype (CuPy has no silu); any strides
========== ==========================================================================

rms_norm, add_rms_norm, layer_norm, cross_entropy and rope are unsupported: CuPy has none of them (a composition of its
reductions and elementwise functions would be several kernels and temporaries, not the library's op).

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

from oprt_core.backend import CUDA_EVENT_RESOLUTION_MS, Availability, DeviceInfo, Support
from oprt_core.core_ops import CORE_SPECS
from oprt_core.dtypes import get_dtype
from oprt_core.errors import InvalidArgumentError, UnsupportedCase
from oprt_core.llm_ops import LLM_SPECS

from .base import (
    BaselineBackend,
    CudaEvent,
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

# -- op implementations: (cupy, inputs, out, params) -> a zero-argument closure doing one run ------------------

def _copy(cp, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    copyto = cp.copyto
    return lambda: copyto(out, x)


def _vector_add(cp, inputs, out, params) -> Callable[[], Any]:
    a, b = inputs
    add = cp.add
    return lambda: add(a, b, out=out)


_LEAKY_KERNELS: dict[int, Any] = {}


def _leaky_kernel(cp) -> Any:
    key = id(cp)
    if key not in _LEAKY_KERNELS:
        _LEAKY_KERNELS[key] = cp.ElementwiseKernel(
            "T x, float32 slope", "T y",
            "const float v = static_cast<float>(x); y = static_cast<T>(v > 0.0f ? v : v * slope)",
            "oprt_leaky_relu")
    return _LEAKY_KERNELS[key]


def _relu(cp, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    slope = float(params["negative_slope"])
    if slope == 0.0:
        maximum = cp.maximum
        return lambda: maximum(x, 0, out=out)  # a Python 0 takes x's dtype (weak scalar)
    kernel = _leaky_kernel(cp)
    s = np.float32(slope)
    return lambda: kernel(x, s, out)


_SUM_F32_INTO_NARROW: dict[int, bool] = {}


def _sum_f32_into_narrow(cp) -> bool:
    """Whether ``cupy.sum(x16, dtype=float32, out=out16)`` works here (f32 accumulation, narrow output)."""
    key = id(cp)
    if key not in _SUM_F32_INTO_NARROW:
        try:
            x = cp.full((2, 3000), 0.1, cp.float16)
            out = cp.empty((2,), cp.float16)
            cp.sum(x, axis=1, dtype=cp.float32, out=out)
            ok = bool(abs(float(out[0]) - 3000 * float(np.float16(0.1))) < 1.0)
        except Exception:  # noqa: BLE001 - fall back to an f32 result buffer
            ok = False
        _SUM_F32_INTO_NARROW[key] = ok
    return _SUM_F32_INTO_NARROW[key]


def _reduce_sum(cp, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    axis, keep = params["axis"], params["keepdims"]
    total = cp.sum
    if x.dtype == np.float32:
        return lambda: total(x, axis=axis, keepdims=keep, out=out)
    # f16/bf16: cupy.sum's own float16 path (CUB) accumulates in half precision; ask for f32 accumulation
    f32 = cp.float32
    if _sum_f32_into_narrow(cp):
        return lambda: total(x, axis=axis, dtype=f32, keepdims=keep, out=out)
    result = cp.empty(out.shape, f32)  # one extra write + read of the (reduced) output
    copyto = cp.copyto

    def run() -> None:
        total(x, axis=axis, dtype=f32, keepdims=keep, out=result)
        copyto(out, result, casting="same_kind")

    return run


def _softmax(cp, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    if x.size == 0:
        return lambda: None  # nothing to write (and amax of an empty axis has no identity)
    axis = params["axis"]
    ax = axis % x.ndim
    red_shape = tuple(1 if i == ax else n for i, n in enumerate(x.shape))
    f32 = cp.float32
    work = cp.empty(x.shape, f32)  # the workspace, allocated once
    m = cp.empty(red_shape, x.dtype)
    s = cp.empty(red_shape, f32)
    amax, subtract, exp, total, divide = cp.amax, cp.subtract, cp.exp, cp.sum, cp.divide

    def run() -> None:
        amax(x, axis=axis, keepdims=True, out=m)
        subtract(x, m, out=work, dtype=f32)
        exp(work, out=work)
        total(work, axis=axis, keepdims=True, out=s)
        divide(work, s, out=out)

    return run


_SILU_MUL_KERNELS: dict[int, Any] = {}


def _silu_mul(cp, inputs, out, params) -> Callable[[], Any]:
    gate, up = inputs
    key = id(cp)
    if key not in _SILU_MUL_KERNELS:
        _SILU_MUL_KERNELS[key] = cp.ElementwiseKernel(
            "T gate, T up", "T out",
            "const float g = static_cast<float>(gate); "
            "out = static_cast<T>(g / (1.0f + expf(-g)) * static_cast<float>(up))",
            "oprt_silu_mul")
    kernel = _SILU_MUL_KERNELS[key]
    return lambda: kernel(gate, up, out)


CORE_IMPLS: dict[str, Callable[..., Callable[[], Any]]] = {
    "copy": _copy,
    "vector_add": _vector_add,
    "relu": _relu,
    "reduce_sum": _reduce_sum,
    "softmax": _softmax,
    "silu_mul": _silu_mul,
}


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
    """CuPy as a baseline: CuPy's own functions for every core op (see the module docstring)."""

    name = "cupy"
    _library = "cupy"
    _impls = CORE_IMPLS

    def __init__(self, device: int = 0) -> None:
        super().__init__()
        self.device = int(device)
        self._bf16: dict[str, Support] = {}

    def __repr__(self) -> str:
        return f"CupyBackend(device={self.device})"

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
        if op in LLM_SPECS and op not in CORE_IMPLS:
            return Support(False, f"CuPy has no {op} (a composition of its elementwise and reduction functions would "
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
                out_shape = (2,) if op == "reduce_sum" else (2, 3)
                out = cp.empty(out_shape, dt)
                inputs = [x, x] if op in ("vector_add", "silu_mul") else [x]
                spec = CORE_SPECS[op] if op in CORE_SPECS else LLM_SPECS[op]
                params = spec.validate_params({"negative_slope": 0.5} if op == "relu" else {}, [(2, 3)] * len(inputs))
                CORE_IMPLS[op](cp, inputs, out, params)()
                if op == "relu":
                    CORE_IMPLS[op](cp, inputs, out, {"negative_slope": 0.0})()
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
        cp = self._require()
        inputs = list(inputs)
        odt, full = self._check_call(op, inputs, output, params, _dtype_name)
        for a in [*inputs, output]:
            if not isinstance(a, cp.ndarray):
                raise InvalidArgumentError(f"{op}: the cupy backend takes cupy arrays, got {type(a).__name__}")
        if odt.name == "bf16":
            support = self._bf16_support(op)
            if not support:
                raise UnsupportedCase(support.reason)
        make = CORE_IMPLS[op]
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
