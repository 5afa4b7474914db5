"""NumpyBackend: the CPU backend that works on any machine.

The built-in ops' implementations (``oprt_core/operators/<op>/numpy_impl.py``) compute in float32 (f16/bf16
inputs widened, the result rounded once to the output dtype), like the GPU kernels' f32 accumulation, and are
checked against the float64 reference like any other backend's. Its timings are wall-clock
(``time.perf_counter``) around synchronous calls.

Floating-point exceptions give IEEE results without a warning, as on a GPU: a sum or a cast to f16 that
overflows is inf, a softmax row holding inf is NaN (numpy's RuntimeWarnings are silenced with
``np.errstate`` around each op, about 2 us a call: ``oprt_core.operators._numpy.quiet``).
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .backend import Availability, DeviceInfo, Support
from .dtypes import get_dtype
from .errors import InvalidArgumentError, UnknownNameError
from .spec import as_outputs
from .validate import check_call, check_output_layout, check_overlap

__all__ = ["NumpyBackend", "NumpyEvent", "cpu_name", "llc_bytes"]

Impl = Callable[[Sequence[np.ndarray], np.ndarray, Mapping[str, Any]], None]


class NumpyEvent:
    """A host timestamp (the numpy backend runs synchronously)."""

    def __init__(self) -> None:
        self.t: float | None = None

    def record(self) -> None:
        self.t = time.perf_counter()

    def elapsed_ms(self, end: NumpyEvent) -> float:
        t_end = getattr(end, "t", None)
        if self.t is None or t_end is None:
            raise InvalidArgumentError("elapsed_ms needs two recorded events")
        return (t_end - self.t) * 1e3


def cpu_name() -> str:
    """The host CPU's model name (/proc/cpuinfo), else what platform reports; for host backends' DeviceInfo."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def llc_bytes() -> int | None:
    """The CPU's last-level cache in bytes (L3, else L2, as Linux's sysfs gives it); None where unknown."""
    for index in (3, 2):
        path = f"/sys/devices/system/cpu/cpu0/cache/index{index}/size"
        try:
            text = open(path, encoding="utf-8").read().strip().upper()
        except OSError:
            continue
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1], 1)
        return int(text.rstrip("KMG")) * mult
    return None


class NumpyBackend:
    """The reference CPU backend (``numpy``). It starts with no op: the registry hands it each op's implementation
    through :meth:`add_op`, the built-in ops' (``oprt_core/operators/<op>/numpy_impl.py``) as a third-party op
    package's; one made outside a registry gets the built-in ones from ``oprt_core.operators.equip``."""

    name = "numpy"
    impl_name = "numpy"  # a subclass under a name of its own (a test's) still runs numpy's implementations

    def __init__(self) -> None:
        self.impls: dict[str, Impl] = {}
        self.specs: dict[str, Any] = {}
        self._flush_buffer: np.ndarray | None = None

    def add_op(self, spec: Any, impl: Impl) -> None:
        """Teach the numpy backend an op: ``impl(inputs, out, params)`` writes into ``out`` (a tuple of arrays for a
        multi-output op)."""
        self.specs[spec.name] = spec
        self.impls[spec.name] = impl

    # -- discovery ------------------------------------------------------------------
    def availability(self) -> Availability:
        return Availability(True, "numpy runs on the CPU", cpu_name())

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(
            name=cpu_name(), vendor=platform.machine(), l2_bytes=llc_bytes(), sm_count=os.cpu_count(),
            flavour=f"numpy-{np.__version__}", toolkit=f"numpy {np.__version__}",
        )

    def supports(self, op: str, dtype: str, case: Any | None = None) -> Support:
        if op not in self.impls:
            return Support(False, f"numpy backend has no implementation of {op!r}")
        return Support(True)

    # -- memory -----------------------------------------------------------------------
    def to_device(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    def asarray(self, obj: Any) -> np.ndarray:
        return np.asarray(obj)

    def empty(self, shape: Sequence[int], dtype: str) -> np.ndarray:
        return np.empty(tuple(shape), get_dtype(dtype).numpy)

    def to_host(self, array: Any) -> np.ndarray:
        return np.array(array, copy=True)

    def fill_nan(self, array: np.ndarray) -> None:
        array[...] = np.nan

    # -- ops ----------------------------------------------------------------------------
    def prepare(self, op: str, inputs: Sequence[np.ndarray], output: Any, params: Mapping[str, Any]):
        """A launcher of ``op``; ``output`` is one array, or for a multi-output op the tuple of its outputs."""
        if op not in self.impls:
            raise UnknownNameError("op of the numpy backend", op, self.impls)
        spec = self.specs[op]
        outs = as_outputs(output) if spec.multi_output else (output,)
        _, full = check_call(spec, [x.shape for x in inputs], [x.dtype for x in inputs],
                             [o.shape for o in outs] if spec.multi_output else output.shape,
                             [o.dtype for o in outs] if spec.multi_output else output.dtype, params)
        for o, name in zip(outs, spec.output_names):
            check_output_layout(o.shape, o.strides, o.flags.writeable, name)
        check_overlap(spec, output, inputs, self.name)
        impl = self.impls[op]
        layout = [(x.shape, x.dtype) for x in inputs], [(o.shape, o.dtype) for o in outs]

        class _Launcher:
            def __call__(self) -> None:
                impl(inputs, output, full)

            def run(self, new_inputs: Sequence[np.ndarray], new_output: Any) -> None:
                new_outs = as_outputs(new_output) if spec.multi_output else (new_output,)
                got = [(x.shape, x.dtype) for x in new_inputs], [(o.shape, o.dtype) for o in new_outs]
                if got != layout:
                    raise InvalidArgumentError(f"{op}: prepared for {layout}, called with {got}")
                for o, name in zip(new_outs, spec.output_names):
                    check_output_layout(o.shape, o.strides, o.flags.writeable, name)
                check_overlap(spec, new_output, new_inputs, "numpy")
                impl(new_inputs, new_output, full)

        return _Launcher()

    # -- timing -------------------------------------------------------------------------
    def synchronize(self) -> None:
        """Nothing to wait for: numpy calls are synchronous."""

    def event(self) -> NumpyEvent:
        return NumpyEvent()

    # -- calibration probes (oprt_core.backend.CalibrationProbes) --------------------------------------
    def copy_probe(self, nbytes: int) -> Callable[[], None]:
        """One ``np.copyto`` between two uint8 buffers of ``nbytes`` (touched here, outside any timing)."""
        nbytes = int(nbytes)
        if nbytes <= 0:
            raise InvalidArgumentError(f"copy_probe needs a positive byte count, got {nbytes}")
        src = np.ones(nbytes, np.uint8)
        dst = np.zeros(nbytes, np.uint8)
        return lambda: np.copyto(dst, src)

    def empty_launch_probe(self) -> Callable[[], None]:
        """The cheapest call: an ``np.copyto`` of one element (numpy's per-call overhead)."""
        src = np.ones(1, np.float32)
        dst = np.zeros(1, np.float32)
        return lambda: np.copyto(dst, src)

    def timer_resolution_ms(self) -> float | None:
        """``time.perf_counter``'s resolution as the platform states it."""
        return time.get_clock_info("perf_counter").resolution * 1e3

    def flush_cache(self, clean: bool = False) -> None:
        """Write a buffer of 2x the last-level cache; ``clean``: then read it back (its maximum)."""
        if self._flush_buffer is None:
            self._flush_buffer = np.empty(2 * (llc_bytes() or 32 << 20), np.uint8)
        self._flush_buffer.fill(1)
        if clean:
            self._flush_buffer.max()
