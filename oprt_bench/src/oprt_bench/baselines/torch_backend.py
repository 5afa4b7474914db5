"""TorchBackend: the PyTorch baseline (backend ``torch``).

Every core op (and the model ops) runs through torch's own kernels, writing straight into the
output tensor (no extra copy, except where said):

========== ==========================================================================
op         torch call
========== ==========================================================================
copy       ``out.copy_(x)``
vector_add ``torch.add(a, b, out=out)`` (broadcasting)
relu       slope 0: ``torch.clamp_min(x, 0, out=out)``, the kernel ``torch.relu`` itself
           runs (aten's relu is ``clamp_min(self, 0)``; ``relu.out`` is only a generated
           wrapper that would compute into a temporary and copy);
           slope != 0: ``torch._C._nn.leaky_relu(x, slope, out=out)``, the kernel behind
           ``torch.nn.functional.leaky_relu``
reduce_sum ``torch.sum(x, dim, keepdim=..., out=out)`` (dim None = all; f16/bf16 accumulate
           in f32 inside torch)
softmax    ``torch.ops.aten._softmax.out(x, dim, False, out=out)``, the kernel behind
           ``torch.softmax``; where that overload is missing, ``out.copy_(torch.softmax(x, dim))``
           (one extra read and write of the output)
rms_norm   ``out.copy_(torch.nn.functional.rms_norm(x, (n,), weight, eps))`` (torch >= 2.4: f32 math
           inside for f16/bf16); where it is missing, the formula in f32,
           ``x32 * rsqrt(mean(x32**2) + eps) * weight32``, rounded once by the copy: no
           ``out=`` variant, so one extra write and read of the output
add_rms_norm ``torch.add(x, residual, out=h)``, then rms_norm of h (as above) into out: eager torch's pre-norm
           block, h written and read again
layer_norm ``torch.ops.aten.native_layer_norm.out(x, (n,), weight, bias, eps, out0=out, ...)`` (the
           kernel behind ``torch.nn.functional.layer_norm``; the per-row mean and rstd go to small
           buffers allocated once); where that overload is missing,
           ``out.copy_(torch.nn.functional.layer_norm(...))``
silu_mul   ``torch.mul(torch.nn.functional.silu(gate), up, out=out)``: the two kernels of eager
           SwiGLU, with a full-size temporary
cross_     ``out.copy_(torch.nn.functional.cross_entropy(logits.reshape(-1, V), target.reshape(-1),
entropy    ignore_index=..., reduction=...))``: log_softmax and nll_loss, with a temporary of the logits'
           size; the rows' losses copied into out (no ``out=`` variant; a view where the leading dims
           merge, else reshape copies the logits)
rope       the formula in f32: ``cos.index_select(0, positions)`` (and sin) per token, each head's halves
           (neox) or interleaved pairs (gptj) rotated, ``torch.cat`` / ``torch.stack`` of the halves,
           ``q_out.copy_`` and ``k_out.copy_`` rounding once (no ``out=`` form; several kernels and
           f32 temporaries of q's and k's size)
matmul     ``torch.matmul(a, b, out=out)`` (cuBLAS on a GPU; a transposed operand passed as the view it is),
           then ``out.mul_(alpha)`` only where alpha != 1 (a second rounding, within the budget's rtol).
           With c and beta != 0: ``torch.addmm(c, a, b, beta=beta, alpha=alpha, out=out)`` (2-D) or
           ``torch.baddbmm`` (batched), cuBLAS's GEMM with its own beta (c read once, in the epilogue); a c
           given with beta == 0 is not passed (not read, as the op declares).
           Before each call ``torch.backends.cuda.matmul.allow_tf32`` is set to the case's allow_tf32 and
           the f16 / bf16 reduced-precision reductions are turned off: f32 accumulation, as the op declares.
           Not in torch-compile (its TF32 choice is fixed when the graph compiles)
========== ==========================================================================

Inputs keep their strides (transposed, stepped, offset and broadcast views are
passed as they are; torch's softmax kernel itself makes a non-contiguous input
contiguous first, as ``torch.softmax`` does for its users). torch tensors cannot
have negative strides, so cases with a ``reversed`` input are unsupported (a
reversed view would be a ``flip`` copy).

``TorchBackend(device="cpu")`` runs the same code on torch's CPU kernels, for tests;
the plugin registers only the CUDA one.
"""

from __future__ import annotations

import ctypes
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from oprt_core.backend import CUDA_EVENT_RESOLUTION_MS, Availability, DeviceInfo, Support
from oprt_core.dtypes import get_dtype
from oprt_core.errors import InvalidArgumentError, UnsupportedCase
from oprt_core.numpy_backend import NumpyEvent as HostEvent  # a host timestamp: torch's CPU kernels are synchronous
from oprt_core.numpy_backend import cpu_name as _cpu_name

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

__all__ = ["TorchBackend", "TorchEvent", "HostEvent", "CORE_IMPLS", "FUNCTIONAL", "NEGATIVE_STRIDES", "torch_dtype",
           "tensor_dtype_name", "tensor_layout"]

_DTYPE_NAMES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "i32", "int64": "i64"}
NEGATIVE_STRIDES = ("torch tensors cannot have negative strides: a reversed view would be a flip copy, "
                    "not the strided read the case measures")
"""The reason a torch-based backend gives for a case with a ``reversed`` (negative-stride) input."""


def torch_dtype(torch: Any, name: str) -> Any:
    """The torch dtype of oprt's dtype ``name`` ("f32", "f16", "bf16"; "i32", "i64" of index inputs); ``torch`` is
    the imported module."""
    return {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i32": torch.int32,
            "i64": torch.int64}[get_dtype(name, index=True).name]


def tensor_dtype_name(tensor: Any) -> str:
    """oprt's name of a tensor's dtype, or torch's own name (which check_call then rejects)."""
    name = str(tensor.dtype).removeprefix("torch.")
    return _DTYPE_NAMES.get(name, name)


def tensor_layout(tensor: Any) -> tuple:
    """What two tensors must share to take each other's place in a prepared launch (:class:`Launcher`'s
    ``layout_of``): shape, strides, dtype and device."""
    return tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype, tensor.device

# -- op implementations: (inputs, out, params) -> a zero-argument closure doing one run ------------

def _copy(torch, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    return lambda: out.copy_(x)


def _vector_add(torch, inputs, out, params) -> Callable[[], Any]:
    a, b = inputs
    add = torch.add
    return lambda: add(a, b, out=out)


def _relu(torch, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    slope = float(params["negative_slope"])
    if slope == 0.0:
        clamp_min = torch.clamp_min
        return lambda: clamp_min(x, 0, out=out)
    leaky = torch._C._nn.leaky_relu
    return lambda: leaky(x, slope, out=out)


def _reduce_sum(torch, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    axis, keep = params["axis"], params["keepdims"]
    total = torch.sum
    return lambda: total(x, dim=axis, keepdim=keep, out=out)


def _softmax_out(torch) -> Callable[..., Any] | None:
    overload = getattr(getattr(torch.ops.aten, "_softmax", None), "out", None)
    return overload


def _softmax(torch, inputs, out, params) -> Callable[[], Any]:
    (x,) = inputs
    dim = params["axis"]
    softmax_out = _softmax_out(torch)
    if softmax_out is not None:
        return lambda: softmax_out(x, dim, False, out=out)
    softmax = torch.softmax
    return lambda: out.copy_(softmax(x, dim))  # no out= in this torch: one extra write + read of the output


def _rms_norm_fn(torch, params) -> Callable[..., Any]:
    """``(x, weight) -> y``: ``torch.nn.functional.rms_norm`` (torch >= 2.4: f32 math inside for f16/bf16), else the
    formula in f32, rounded once by the caller's ``copy_`` (the reference's order)."""
    eps = float(params["eps"])
    rms_norm = getattr(torch.nn.functional, "rms_norm", None)
    if rms_norm is not None:
        return lambda x, w: rms_norm(x, (int(x.shape[-1]),), w, eps)
    rsqrt = torch.rsqrt

    def formula(x, w):
        xf = x.float()
        return xf * rsqrt(xf.square().mean(-1, keepdim=True) + eps) * w.float()

    return formula


def _rms_norm(torch, inputs, out, params) -> Callable[[], Any]:
    x, w = inputs
    rms_norm = _rms_norm_fn(torch, params)
    return lambda: out.copy_(rms_norm(x, w))  # no out= variant: one extra write and read of the output


def _add_rms_norm(torch, inputs, outs, params) -> Callable[[], Any]:
    x, r, w = inputs
    y, h = outs
    rms_norm, add = _rms_norm_fn(torch, params), torch.add

    def run() -> Any:
        add(x, r, out=h)
        return y.copy_(rms_norm(h, w))

    return run


def _layer_norm(torch, inputs, out, params) -> Callable[[], Any]:
    x, w, b = inputs
    shape, eps = (int(x.shape[-1]),), float(params["eps"])
    overload = getattr(getattr(torch.ops.aten, "native_layer_norm", None), "out", None)
    if overload is None:
        layer_norm = torch.nn.functional.layer_norm
        return lambda: out.copy_(layer_norm(x, shape, w, b, eps))
    # the stats buffers as this torch's kernel makes them (shape and dtype vary by device and version)
    _, mean, rstd = (torch.empty_like(t) for t in torch.native_layer_norm(x, shape, w, b, eps))
    return lambda: overload(x, shape, w, b, eps, out0=out, out1=mean, out2=rstd)


def _silu_mul(torch, inputs, out, params) -> Callable[[], Any]:
    gate, up = inputs
    silu, mul = torch.nn.functional.silu, torch.mul
    return lambda: mul(silu(gate), up, out=out)


def _cross_entropy_fn(torch, params) -> Callable[..., Any]:
    """``(logits, target) -> loss``: ``F.cross_entropy`` over the rows of ``logits`` (its last axis the classes),
    shaped as the op's output (``target``'s shape, or 0-d for the mean)."""
    xent, ignore, reduction = torch.nn.functional.cross_entropy, int(params["ignore_index"]), params["reduction"]

    def fn(x, t):
        loss = xent(x.reshape(-1, x.shape[-1]), t.reshape(-1), ignore_index=ignore, reduction=reduction)
        return loss if reduction == "mean" else loss.reshape(t.shape)

    return fn


def _cross_entropy(torch, inputs, out, params) -> Callable[[], Any]:
    x, t = inputs
    fn = _cross_entropy_fn(torch, params)
    return lambda: out.copy_(fn(x, t))  # no out= variant


def _rope_fn(torch, params) -> Callable[..., Any]:
    """``(q, k, cos, sin, positions) -> (q_out, k_out)``: each pair rotated by its token's cos / sin row, in f32,
    rounded once to the dtype (a position outside [0, P) is an index error in torch, NaN in oprt's kernels)."""
    neox = params["style"] == "neox"
    cat, stack = torch.cat, torch.stack

    def rotate(x, c, s):
        xf = x.float()
        if neox:
            half = xf.shape[-1] // 2
            x1, x2 = xf[..., :half], xf[..., half:]
            return cat((x1 * c - x2 * s, x2 * c + x1 * s), -1).to(x.dtype)
        x1, x2 = xf[..., 0::2], xf[..., 1::2]
        return stack((x1 * c - x2 * s, x2 * c + x1 * s), -1).flatten(-2).to(x.dtype)

    def fn(q, k, cos, sin, positions):
        c = cos.index_select(0, positions).float().unsqueeze(1)  # (T, 1, D/2): one row per token, every head
        s = sin.index_select(0, positions).float().unsqueeze(1)
        return rotate(q, c, s), rotate(k, c, s)

    return fn


def _rope(torch, inputs, outs, params) -> Callable[[], Any]:
    q, k, cos, sin, pos = inputs
    q_out, k_out = outs
    fn = _rope_fn(torch, params)

    def run() -> Any:
        rq, rk = fn(q, k, cos, sin, pos)
        q_out.copy_(rq)
        return k_out.copy_(rk)

    return run


def _matmul_flags(torch, allow_tf32: bool) -> None:
    """torch's global matmul switches as the op declares: TF32 only where asked, f32 accumulation for 16-bit."""
    flags = torch.backends.cuda.matmul
    flags.allow_tf32 = allow_tf32
    flags.allow_fp16_reduced_precision_reduction = False
    if hasattr(flags, "allow_bf16_reduced_precision_reduction"):
        flags.allow_bf16_reduced_precision_reduction = False


def _matmul(torch, inputs, out, params) -> Callable[[], Any]:
    a, b = inputs[:2]
    alpha, beta, tf32, matmul = float(params["alpha"]), float(params["beta"]), bool(params["allow_tf32"]), torch.matmul

    if len(inputs) > 2 and beta != 0.0:  # out = alpha * a @ b + beta * c in one cuBLAS GEMM
        c = inputs[2]
        gemm = torch.addmm if a.dim() == 2 else torch.baddbmm

        def run_c() -> Any:
            _matmul_flags(torch, tf32)
            return gemm(c, a, b, beta=beta, alpha=alpha, out=out)

        return run_c
    if alpha == 1.0:
        def run() -> Any:
            _matmul_flags(torch, tf32)
            return matmul(a, b, out=out)
    else:
        def run() -> Any:
            _matmul_flags(torch, tf32)
            return matmul(a, b, out=out).mul_(alpha)

    return run


CORE_IMPLS: dict[str, Impl] = {
    "copy": _copy,
    "vector_add": _vector_add,
    "relu": _relu,
    "reduce_sum": _reduce_sum,
    "softmax": _softmax,
    "rms_norm": _rms_norm,
    "add_rms_norm": _add_rms_norm,
    "layer_norm": _layer_norm,
    "silu_mul": _silu_mul,
    "cross_entropy": _cross_entropy,
    "rope": _rope,
    "matmul": _matmul,
}


# -- the same ops as functions returning the result: (torch, params) -> fn(*inputs) -> tensor --------------------
# what the torch-compile backend compiles (``out.copy_(fn(*inputs))`` in one graph): torch's functional calls,
# no ``out=`` (an out= argument splits a dynamo graph or is rejected by it)

def _reduce_sum_fn(torch, params) -> Callable[..., Any]:
    axis, keep, total = params["axis"], params["keepdims"], torch.sum
    return lambda x: total(x, dim=axis, keepdim=keep)


def _relu_fn(torch, params) -> Callable[..., Any]:
    slope = float(params["negative_slope"])
    if slope == 0.0:
        return torch.relu
    leaky = torch.nn.functional.leaky_relu
    return lambda x: leaky(x, slope)


def _add_rms_norm_fn(torch, params) -> Callable[..., Any]:
    """``(x, residual, weight) -> (out, h)``: h = x + residual rounded to the dtype, then rms_norm of h."""
    rms_norm = _rms_norm_fn(torch, params)

    def fn(x, r, w):
        h = x + r
        return rms_norm(h, w), h

    return fn


def _layer_norm_fn(torch, params) -> Callable[..., Any]:
    eps, layer_norm = float(params["eps"]), torch.nn.functional.layer_norm
    return lambda x, w, b: layer_norm(x, (int(x.shape[-1]),), w, b, eps)


def _silu_mul_fn(torch, params) -> Callable[..., Any]:
    silu = torch.nn.functional.silu
    return lambda gate, up: silu(gate) * up


FUNCTIONAL: dict[str, Callable[[Any, Mapping[str, Any]], Callable[..., Any]]] = {
    "copy": lambda torch, params: lambda x: x,
    "vector_add": lambda torch, params: torch.add,
    "relu": _relu_fn,
    "reduce_sum": _reduce_sum_fn,
    "softmax": lambda torch, params: lambda x: torch.softmax(x, params["axis"]),
    "rms_norm": _rms_norm_fn,
    "add_rms_norm": _add_rms_norm_fn,
    "layer_norm": _layer_norm_fn,
    "silu_mul": _silu_mul_fn,
    "cross_entropy": _cross_entropy_fn,
    "rope": _rope_fn,
}


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
    """PyTorch as a baseline: torch's own kernel for every core op, dtype and layout it can express."""

    _library = "torch"
    _impls = CORE_IMPLS

    def __init__(self, device: str = "cuda") -> None:
        super().__init__()
        self.device = str(device)
        self.name = "torch" if self.device.startswith("cuda") else f"torch-{self.device.split(':')[0]}"
        self._dev: Any = None

    def __repr__(self) -> str:
        return f"TorchBackend(device={self.device!r})"

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
        else:
            host = t.cpu().numpy()
        return np.array(host, copy=True)

    def fill_nan(self, array: Any) -> None:
        array.fill_(math.nan)

    # -- ops ----------------------------------------------------------------------------
    def prepare(self, op: str, inputs: Sequence[Any], output: Any, params: Mapping[str, Any]):
        torch = self._require()
        inputs = list(inputs)
        _, full = self._check_call(op, inputs, output, params, tensor_dtype_name)
        self._check_tensors(op, inputs, output)
        make = CORE_IMPLS[op]
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
