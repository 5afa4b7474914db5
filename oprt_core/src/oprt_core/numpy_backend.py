"""NumpyBackend: the CPU backend that works on any machine.

It computes in float32 (f16/bf16 inputs widened, the result rounded once to the
output dtype), like the GPU kernels' f32 accumulation, and is checked against the
float64 reference like any other backend. Its timings are wall-clock
(``time.perf_counter``) around synchronous calls.

Floating-point exceptions give IEEE results without a warning, as on a GPU: a sum or a cast to f16 that
overflows is inf, a softmax row holding inf is NaN (numpy's RuntimeWarnings are silenced with
``np.errstate`` around each op, about 2 us a call).
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .backend import Availability, DeviceInfo, Support
from .compute_ops import COMPUTE_SPECS
from .core_ops import CORE_SPECS
from .dtypes import get_dtype
from .errors import InvalidArgumentError, UnknownNameError
from .llm_ops import LLM_SPECS
from .spec import as_outputs
from .validate import check_call, check_output_layout, check_overlap

__all__ = ["NumpyBackend", "NumpyEvent", "cpu_name", "llc_bytes"]

Impl = Callable[[Sequence[np.ndarray], np.ndarray, Mapping[str, Any]], None]
_F32 = np.float32


def _copy(inputs, out, params) -> None:
    np.copyto(out, inputs[0])


def _quiet(impl: Impl) -> Impl:
    """``impl`` under ``np.errstate(all="ignore")``: overflow to inf, and NaN from inf - inf, are the IEEE results
    the op defines (the GPU kernels give the same), not something to warn about."""

    def run(inputs, out, params) -> None:
        with np.errstate(all="ignore"):
            impl(inputs, out, params)

    run.__name__ = run.__qualname__ = impl.__name__
    run.__doc__ = impl.__doc__
    return run


@_quiet
def _vector_add(inputs, out, params) -> None:
    a, b = (x.astype(_F32) for x in inputs)
    np.copyto(out, np.add(a, b).astype(out.dtype))


@_quiet
def _relu(inputs, out, params) -> None:
    """x where x > 0, else x * negative_slope; with a zero slope +0.0 for x <= 0 (as torch.relu: not -0.0 from
    -1 * 0.0), and NaN stays NaN."""
    x = inputs[0].astype(_F32)
    slope = params["negative_slope"]
    y = np.where(x <= 0, _F32(0), x) if slope == 0 else np.where(x > 0, x, x * _F32(slope))
    np.copyto(out, y.astype(out.dtype))


@_quiet
def _reduce_sum(inputs, out, params) -> None:
    s = np.sum(inputs[0].astype(_F32), axis=params["axis"], keepdims=params["keepdims"], dtype=_F32)
    np.copyto(out, np.asarray(s).astype(out.dtype))


@_quiet
def _softmax(inputs, out, params) -> None:
    x = inputs[0].astype(_F32)
    if x.size:
        axis = params["axis"]
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        x = e / np.sum(e, axis=axis, keepdims=True, dtype=_F32)
    np.copyto(out, x.astype(out.dtype))


CORE_IMPLS: dict[str, Impl] = {
    "copy": _copy,
    "vector_add": _vector_add,
    "relu": _relu,
    "reduce_sum": _reduce_sum,
    "softmax": _softmax,
}


# -- the model ops (oprt_core.llm_ops): f32 arithmetic, one rounding to the output dtype; nothing to write for an
# empty output (a row of 0 elements has no mean)

@_quiet
def _rms_norm(inputs, out, params) -> None:
    if out.size:
        x, w = (a.astype(_F32) for a in inputs)
        r = _F32(1) / np.sqrt(np.mean(x * x, axis=-1, keepdims=True, dtype=_F32) + _F32(params["eps"]))
        np.copyto(out, (x * r * w).astype(out.dtype))


@_quiet
def _add_rms_norm(inputs, outs, params) -> None:
    """h = x + residual rounded to the dtype, and normalised as rounded (as torch's x + residual, then rms_norm)."""
    y, h_out = outs
    if y.size:
        x, res, w = (a.astype(_F32) for a in inputs)
        h = (x + res).astype(h_out.dtype)
        hf = h.astype(_F32)
        r = _F32(1) / np.sqrt(np.mean(hf * hf, axis=-1, keepdims=True, dtype=_F32) + _F32(params["eps"]))
        y_val = (hf * r * w).astype(y.dtype)
        np.copyto(h_out, h)  # both computed before either is written: out and h may each be x or residual
        np.copyto(y, y_val)


@_quiet
def _layer_norm(inputs, out, params) -> None:
    if out.size:
        x, w, b = (a.astype(_F32) for a in inputs)
        d = x - np.mean(x, axis=-1, keepdims=True, dtype=_F32)
        r = _F32(1) / np.sqrt(np.mean(d * d, axis=-1, keepdims=True, dtype=_F32) + _F32(params["eps"]))
        np.copyto(out, (d * r * w + b).astype(out.dtype))


@_quiet
def _silu_mul(inputs, out, params) -> None:
    g, u = (a.astype(_F32) for a in inputs)
    np.copyto(out, (g / (_F32(1) + np.exp(-g)) * u).astype(out.dtype))


@_quiet
def _cross_entropy(inputs, out, params) -> None:
    """Per row: m + log(sum(exp(x - m))) - x[target] in f32; 0 for ignored rows, NaN for a target out of range;
    the mean over the rows not ignored (NaN over none)."""
    logits, target = inputs
    x = logits.astype(_F32)
    t = np.asarray(target, np.int64)
    v = x.shape[-1]
    ignored = t == params["ignore_index"]
    if x.size:
        valid = (t >= 0) & (t < v)
        m = np.max(x, axis=-1)
        lse = m + np.log(np.sum(np.exp(x - m[..., None]), axis=-1, dtype=_F32))
        xt = np.take_along_axis(x, np.where(valid, t, 0)[..., None], axis=-1)[..., 0]
        loss = np.where(ignored, _F32(0), np.where(valid, lse - xt, _F32(np.nan))).astype(_F32)
    else:
        loss = np.zeros(t.shape, _F32)
    if params["reduction"] == "mean":
        loss = np.asarray(np.sum(loss, dtype=_F32) / _F32(np.count_nonzero(~ignored)))
    np.copyto(out, loss.astype(out.dtype))


@_quiet
def _rope(inputs, outs, params) -> None:
    """Each pair (x1, x2) -> (x1 c - x2 s, x2 c + x1 s) in f32; NaN for a token whose position is outside [0, P).
    Both results are computed before either is written (q_out may be q, k_out k)."""
    q, k, cos, sin, positions = inputs
    pos = np.asarray(positions, np.int64)
    valid = (pos >= 0) & (pos < cos.shape[0])
    rows = np.where(valid, pos, 0) if cos.shape[0] else np.zeros(0, np.int64)
    c = cos.astype(_F32)[rows][:, None, :]
    s = sin.astype(_F32)[rows][:, None, :]
    half = q.shape[-1] // 2
    i1, i2 = ((..., slice(0, half)), (..., slice(half, None))) if params["style"] == "neox" else \
        ((..., slice(0, None, 2)), (..., slice(1, None, 2)))
    results = []
    for x, out in zip((q, k), outs):
        xf = x.astype(_F32)
        y = np.empty(x.shape, _F32)
        y[i1] = xf[i1] * c - xf[i2] * s
        y[i2] = xf[i2] * c + xf[i1] * s
        y[~valid] = np.nan
        results.append(y.astype(out.dtype))
    for out, y in zip(outs, results):
        np.copyto(out, y)


LLM_IMPLS: dict[str, Impl] = {"rms_norm": _rms_norm, "add_rms_norm": _add_rms_norm, "layer_norm": _layer_norm,
                              "silu_mul": _silu_mul, "cross_entropy": _cross_entropy, "rope": _rope}


# -- the compute-bound ops (oprt_core.compute_ops)

@_quiet
def _matmul(inputs, out, params) -> None:
    """float32 BLAS (f16/bf16 widened first: exact), alpha applied in f32, then beta * c added in f32 where beta != 0
    (c is not read otherwise), one rounding to the output dtype; allow_tf32 changes nothing here (the CPU has no
    TF32). c may be out itself: it is read into the f32 result before out is written."""
    a, b = (x.astype(_F32) for x in inputs[:2])
    y = np.matmul(a, b)
    if params["alpha"] != 1:
        y *= _F32(params["alpha"])
    if len(inputs) > 2 and params["beta"] != 0:
        y += _F32(params["beta"]) * inputs[2].astype(_F32)
    np.copyto(out, y.astype(out.dtype))


COMPUTE_IMPLS: dict[str, Impl] = {"matmul": _matmul}


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
    """The reference CPU backend (``numpy``): every core op, model op (rms_norm, add_rms_norm, layer_norm, silu_mul,
    cross_entropy, rope) and
    compute-bound op (matmul), dtype and case."""

    name = "numpy"

    def __init__(self) -> None:
        self.impls: dict[str, Impl] = {**CORE_IMPLS, **LLM_IMPLS, **COMPUTE_IMPLS}
        self.specs = {**CORE_SPECS, **LLM_SPECS, **COMPUTE_SPECS}
        self._flush_buffer: np.ndarray | None = None

    def add_op(self, spec: Any, impl: Impl) -> None:
        """Teach the numpy backend a third-party op (used by op plugins)."""
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
