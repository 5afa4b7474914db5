"""TorchBackend: the PyTorch baseline (backend ``torch``).

Each op runs through torch's own kernels, writing straight into the output tensor where torch has an ``out=``
form; the op's implementation (which torch call, and what it costs besides) is in the op's folder,
``oprt_core/operators/<op>/baselines.py`` (``IMPLS["torch"]``), handed to the backend through ``add_op``.

Inputs keep their strides (transposed, stepped, offset and broadcast views are
passed as they are). torch tensors cannot have negative strides, so cases with a
``reversed`` input are unsupported (a reversed view would be a ``flip`` copy).

``TorchBackend(device="cpu")`` runs the same code on torch's CPU kernels, for tests
(``oprt_core.operators.equip(TorchBackend(device="cpu"))`` hands it torch's implementations);
the plugin registers only the CUDA one.
"""

from __future__ import annotations

import ctypes
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..backend import CUDA_EVENT_RESOLUTION_MS, Availability, DeviceInfo, Support
from ..dtypes import get_dtype
from ..errors import InvalidArgumentError, UnsupportedCase
from ..numpy_backend import NumpyEvent as HostEvent  # a host timestamp: torch's CPU kernels are synchronous
from ..numpy_backend import cpu_name as _cpu_name
from ..spec import OpSpec
from .base import (
    BaselineBackend,
    CudaEvent,
    Impl,
    Launcher,
    MiB,
    cuda_version_text,
    flush_bytes,
    positive_nbytes,
    spec_peak_gbps,
)
from .host_layout import host_span

__all__ = ["TorchBackend", "TorchEvent", "HostEvent", "NEGATIVE_STRIDES", "torch_dtype", "tensor_dtype_name",
           "tensor_layout"]

_DTYPE_NAMES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "i32", "int64": "i64",
                "float8_e4m3fn": "e4m3"}
NEGATIVE_STRIDES = ("torch tensors cannot have negative strides: a reversed view would be a flip copy, "
                    "not the strided read the case measures")
"""The reason a torch-based backend gives for a case with a ``reversed`` (negative-stride) input."""


def torch_dtype(torch: Any, name: str) -> Any:
    """The torch dtype of oprt's dtype ``name`` ("f32", "f16", "bf16", "e4m3"; "i32", "i64" of index inputs);
    ``torch`` is the imported module."""
    key = get_dtype(name, index=True).name
    if key == "e4m3":
        return torch.float8_e4m3fn
    return {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i32": torch.int32,
            "i64": torch.int64}[key]


def tensor_dtype_name(tensor: Any) -> str:
    """oprt's name of a tensor's dtype, or torch's own name (which check_call then rejects)."""
    name = str(tensor.dtype).removeprefix("torch.")
    return _DTYPE_NAMES.get(name, name)


def tensor_layout(tensor: Any) -> tuple:
    """What two tensors must share to take each other's place in a prepared launch (:class:`Launcher`'s
    ``layout_of``): shape, strides, dtype and device."""
    return tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype, tensor.device

# -- events ----------------------------------------------------------------------------------------------

class TorchEvent(CudaEvent):
    """A CUDA event with timing, recorded on torch's current stream of the backend's device."""

    def __init__(self, torch: Any, device: Any) -> None:
        self._torch = torch
        self._device = device
        self.event = torch.cuda.Event(enable_timing=True)
        self.recorded = False

    def _record(self) -> None:
        self.event.record(self._torch.cuda.current_stream(self._device))

    def _elapsed(self, end: TorchEvent) -> float:
        return self.event.elapsed_time(end.event)


# -- device facts -------------------------------------------------------------------------------------------

def _cuda_driver_version() -> str:
    """The CUDA driver's version ("13.0"), from libcuda; "" where it cannot be read."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        version = ctypes.c_int(0)
        if lib.cuDriverGetVersion(ctypes.byref(version)) != 0:
            return ""
        return cuda_version_text(version.value)
    except (OSError, AttributeError):
        return ""


# -- the backend ---------------------------------------------------------------------------------------------

class TorchBackend(BaselineBackend):
    """PyTorch as a baseline: torch's own kernel for every op it is given, dtype and layout it can express."""

    impl_name = "torch"
    _library = "torch"
    _opt_in_dtypes = ("e4m3",)  # judged by the impls that run it (supports)

    def __init__(self, device: str = "cuda") -> None:
        super().__init__()
        self.device = str(device)
        self.name = "torch" if self.device.startswith("cuda") else f"torch-{self.device.split(':')[0]}"
        self._dev: Any = None

    def __repr__(self) -> str:
        return f"TorchBackend(device={self.device!r})"

    def add_op(self, spec: OpSpec, impl: Impl) -> None:
        """Run op ``spec`` with ``impl(torch, inputs, out, params)``, which returns a zero-argument call doing one run
        (``torch`` the imported module, ``inputs`` and ``out`` tensors on the backend's device, ``out`` a tuple for an
        op with several outputs, ``params`` complete); it may raise UnsupportedCase (an unsupported row, with the
        reason). An impl that also runs e4m3 inputs carries ``impl.e4m3_refusal(torch, device, case)``: why it
        cannot run that e4m3 case on ``device`` (``case`` None: any case), None where it can; the other ops refuse
        e4m3."""
        super().add_op(spec, impl)

    @property
    def is_cuda(self) -> bool:
        return self.device.startswith("cuda")

    # -- discovery ------------------------------------------------------------------
    def _probe_device(self, torch: Any) -> Availability:
        try:
            version = torch.__version__
            dev = torch.device(self.device)
            if dev.type == "cpu":
                self._lib, self._dev = torch, dev
                return Availability(True, f"torch {version} on the CPU (test device)", _cpu_name())
            if dev.type != "cuda":
                return Availability(False, f"torch backend runs on cuda (or cpu for tests), not {dev.type!r}")
            if not torch.cuda.is_available():
                why = "built without CUDA" if torch.version.cuda is None else f"CUDA {torch.version.cuda} build"
                return Availability(False, f"torch {version} sees no CUDA device ({why})")
            count = torch.cuda.device_count()
            index = dev.index if dev.index is not None else torch.cuda.current_device()
            if index >= count:
                return Availability(False, f"torch {version} sees {count} CUDA device(s); {self.device} is not one")
            self._lib, self._dev = torch, torch.device("cuda", index)
            name = torch.cuda.get_device_name(index)
            return Availability(True, f"torch {version}, CUDA {torch.version.cuda}", name)
        except Exception as exc:  # noqa: BLE001 - never raises
            return Availability(False, f"torch {getattr(torch, '__version__', '?')}: {type(exc).__name__}: {exc}")

    def device_info(self) -> DeviceInfo:
        torch = self._require()
        flavour = f"torch-{torch.__version__}"
        if not self.is_cuda:
            return DeviceInfo(name=_cpu_name(), vendor="cpu", flavour=flavour, toolkit=f"torch {torch.__version__}")
        props = torch.cuda.get_device_properties(self._dev)
        clock = getattr(props, "memory_clock_rate", None)  # kHz
        bus = getattr(props, "memory_bus_width", None)  # bits
        return DeviceInfo(
            name=props.name,
            vendor="NVIDIA",
            memory_bytes=int(props.total_memory),
            l2_bytes=int(getattr(props, "L2_cache_size", 0)) or None,
            sm_count=int(props.multi_processor_count),
            warp_size=getattr(props, "warp_size", None),
            spec_peak_gbps=spec_peak_gbps(clock, bus),
            driver_version=_cuda_driver_version(),
            toolkit=f"CUDA {torch.version.cuda}",
            flavour=flavour,
            extra={"device_index": self._dev.index, "compute_capability": f"{props.major}.{props.minor}",
                   "memory_clock_khz": clock, "memory_bus_width_bits": bus, "torch": torch.__version__},
        )

    def supports(self, op: str, dtype: str, case: Any | None = None) -> Support:
        dt, refused = self._op_dtype(op, dtype)
        if refused is not None:
            return refused
        e4m3_refusal = getattr(self._impls[op], "e4m3_refusal", None)
        if dt.name == "e4m3" and e4m3_refusal is not None:
            why = e4m3_refusal(self._require(), self._dev, case)
            return Support(False, why) if why else Support(True)
        if dt.name not in ("f32", "f16", "bf16"):
            return Support(False, f"torch backend does not run {dt}")
        if case is not None and any(t.layout == "reversed" for t in getattr(case, "inputs", ())):
            return Support(False, NEGATIVE_STRIDES)
        return Support(True)

    # -- memory -----------------------------------------------------------------------
    def to_device(self, array: Any) -> Any:
        """A device tensor with the host view's shape, strides and offset (zero strides kept)."""
        torch = self._require()
        array = np.asarray(array)
        dtype = torch_dtype(torch, get_dtype(array.dtype, index=True).name)
        if any(s < 0 for s in array.strides) and array.size:
            raise UnsupportedCase(NEGATIVE_STRIDES)
        span = host_span(array)
        if span.flat.size == 0:
            return torch.empty(span.shape, dtype=dtype, device=self._dev)
        flat = span.flat
        if dtype == torch.bfloat16:  # torch.from_numpy knows no ml_dtypes.bfloat16: move the bits
            buf = torch.from_numpy(flat.view(np.int16)).to(self._dev).view(torch.bfloat16)
        elif flat.dtype.itemsize == 1 and flat.dtype.kind == "V":  # ml_dtypes' float8_e4m3fn: the bits too
            buf = torch.from_numpy(flat.view(np.uint8)).to(self._dev).view(dtype)
        else:
            buf = torch.from_numpy(flat).to(self._dev)
        return torch.as_strided(buf, span.shape, span.strides, span.storage_offset)

    def asarray(self, obj: Any) -> Any:
        torch = self._require()
        if isinstance(obj, torch.Tensor):
            if obj.device != self._dev:
                raise InvalidArgumentError(f"tensor on {obj.device} given to the {self.name} backend on {self._dev}")
            return obj
        if isinstance(obj, np.ndarray | np.generic):
            return self.to_device(np.asarray(obj))
        if self.is_cuda and (hasattr(obj, "__cuda_array_interface__") or hasattr(obj, "__dlpack__")):
            try:  # cupy arrays and friends: zero-copy
                return torch.as_tensor(obj, device=self._dev)
            except Exception as exc:  # noqa: BLE001
                raise InvalidArgumentError(f"cannot view {type(obj).__name__} as a torch tensor: {exc}") from exc
        return self.to_device(np.asarray(obj))

    def empty(self, shape: Sequence[int], dtype: str) -> Any:
        torch = self._require()
        return torch.empty(tuple(int(s) for s in shape), dtype=torch_dtype(torch, dtype), device=self._dev)

    def to_host(self, array: Any) -> np.ndarray:
        torch = self._require()
        t = array.detach()
        if t.dtype == torch.bfloat16:
            host = t.view(torch.int16).cpu().numpy().view(get_dtype("bf16").numpy)
        elif t.dtype == getattr(torch, "float8_e4m3fn", None):
            host = t.view(torch.uint8).cpu().numpy().view(get_dtype("e4m3").numpy)
        else:
            host = t.cpu().numpy()
        return np.array(host, copy=True)

    def fill_nan(self, array: Any) -> None:
        array.fill_(math.nan)

    # -- ops ----------------------------------------------------------------------------
    def prepare(self, op: str, inputs: Sequence[Any], output: Any, params: Mapping[str, Any]):
        torch, make, inputs, _, full = self._begin(op, inputs, output, params, tensor_dtype_name)
        self._check_tensors(op, inputs, output)
        return Launcher(lambda ins, out: make(torch, ins, out, full), inputs, output, tensor_layout,
                        f"{op} on {self.name}")

    def _check_tensors(self, op: str, inputs: Sequence[Any], output: Any) -> None:
        """InvalidArgumentError unless every input and the output is a torch tensor on this backend's device."""
        torch = self._require()
        for t in [*inputs, *(output if isinstance(output, tuple) else (output,))]:
            if not isinstance(t, torch.Tensor):
                raise InvalidArgumentError(f"{op}: the {self.name} backend takes torch tensors, got {type(t).__name__}")
            if t.device != self._dev:
                raise InvalidArgumentError(f"{op}: tensor on {t.device}, the {self.name} backend runs on {self._dev}")

    # -- timing -------------------------------------------------------------------------
    def synchronize(self) -> None:
        torch = self._require()
        if self.is_cuda:
            torch.cuda.synchronize(self._dev)

    def event(self) -> TorchEvent | HostEvent:
        torch = self._require()
        if self.is_cuda:
            return TorchEvent(torch, self._dev)
        return HostEvent()

    # -- calibration probes (oprt_core.backend.CalibrationProbes) --------------------------------------
    def copy_probe(self, nbytes: int) -> Callable[[], Any]:
        """``dst.copy_(src)`` of two uint8 tensors of ``nbytes`` (torch's device-to-device memcpy)."""
        torch = self._require()
        nbytes = positive_nbytes(nbytes)
        src = torch.ones(nbytes, dtype=torch.uint8, device=self._dev)
        dst = torch.zeros(nbytes, dtype=torch.uint8, device=self._dev)
        return lambda: dst.copy_(src)

    def empty_launch_probe(self) -> Callable[[], Any]:
        """A one-element ``copy_``: torch's cheapest launch, its dispatcher overhead included."""
        torch = self._require()
        src = torch.ones(1, dtype=torch.float32, device=self._dev)
        dst = torch.zeros(1, dtype=torch.float32, device=self._dev)
        return lambda: dst.copy_(src)

    def timer_resolution_ms(self) -> float | None:
        """CUDA events: ~0.5 us (cudaEventElapsedTime); on the CPU test device, perf_counter's resolution."""
        if self.is_cuda:
            return CUDA_EVENT_RESOLUTION_MS
        return time.get_clock_info("perf_counter").resolution * 1e3

    def flush_cache(self, clean: bool = False) -> None:
        """Write a buffer of 2x the last-level cache (at least 8 MiB) to evict it; ``clean``: then read it
        back (an int32 ``amax``), so that its dirty lines are written back before the next launch."""
        torch = self._require()
        if self._flush_buffer is None:
            if self.is_cuda:
                l2 = int(getattr(torch.cuda.get_device_properties(self._dev), "L2_cache_size", 0) or 0)
            else:
                from oprt_core.numpy_backend import llc_bytes

                l2 = llc_bytes() or 32 * MiB
            self._flush_buffer = torch.empty(flush_bytes(l2), dtype=torch.uint8, device=self._dev)
        self._flush_buffer.zero_()
        if clean:
            torch.amax(self._flush_buffer.view(torch.int32))
