"""LigerBackend: Liger-Kernel's Triton kernels as a baseline (backend ``liger``).

Liger-Kernel (``pip install liger-kernel``: torch and triton its only dependencies) is a library of Triton
kernels for training transformer models; its forward passes are the peers of the model ops:

========== ===================================================================================
op         Liger-Kernel call (``liger_kernel.ops``: the autograd Functions its modules use)
========== ===================================================================================
rms_norm   ``LigerRMSNormFunction.apply(x, weight, eps)``: casting mode ``llama`` (its default: the
           sum of squares and rstd in f32, ``x * rstd`` rounded to the dtype before the weight
           multiply, as torch's), offset 0
add_rms_norm ``LigerFusedAddRMSNormFunction.apply(x, residual, weight, eps)`` (``liger_kernel.ops.fused_add_rms_norm``,
           in Liger-Kernel releases that have it; unavailable in older ones): returns (out, h), both
           allocated into oprt's outputs
layer_norm ``LigerLayerNormFunction.apply(x, weight, bias, eps)`` (f32 math)
silu_mul   ``LigerSiLUMulFunction.apply(gate, up)``: silu in f32, rounded to the dtype, times up
softmax    ``LigerSoftmaxFunction.apply(x)``: the last axis only (other axes: unsupported)
cross_     ``LigerCrossEntropyFunction.apply(logits.reshape(-1, V), target.reshape(-1), None,
entropy    ignore_index, 0.0, 0.0, reduction)`` (no class weights, z-loss, label smoothing or
           softcap): a program a row looping over the vocabulary in blocks, its online max and
           sum in f32; its per-row losses (or their sum, for the mean) copied into out
========== ===================================================================================

Each kernel but cross_entropy's holds a whole row in one Triton block of ``next_power_of_2(n)`` elements,
at most 65536: a case with a longer row (n > 65536) is unsupported with that reason (and a refusal by Liger
itself at ``prepare`` is an unsupported row too, never a crash). Liger's cross_entropy reads the targets back
to the host (``.item()``, a synchronisation, inside the timed call: what its users pay); versions whose kernel
writes the logits' gradient over the logits in every forward (before its ``HAS_GRADIENTS`` switch) are
unsupported with that reason, as a timed repeat would read its own gradient; an empty case (no row) too.
rope is unsupported (``ROPE_REFUSAL`` says why: Liger's rope kernel takes another layout and a full-width cos / sin
per token, and has no gptj style).
Non-contiguous inputs are made contiguous by Liger first (its ``ensure_contiguous``), inside the timed call:
that is what its users pay.

Liger allocates its output; the backend has it allocate into oprt's output instead: for the length of a
call, the ``torch`` name of the op's module stands for a proxy whose first ``empty`` / ``empty_like`` of
the output's size and dtype returns the output itself (Liger's own launch logic runs unchanged, writing
where the harness reads). Where a Liger version allocates otherwise, its result is copied into the output
(one extra write and read); ``last_launch()`` (the ``kernel`` column) says which: ``liger rms_norm`` or
``liger rms_norm + copy``.

Available where torch sees a CUDA device and ``liger_kernel`` (with triton) imports; otherwise
unavailable with the reason. A subclass of :class:`~.torch_backend.TorchBackend`: memory, events and
calibration probes are torch's.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from oprt_core.backend import Availability, DeviceInfo, Support
from oprt_core.errors import UnsupportedCase

from .base import Impl, Launcher, import_library
from .torch_backend import TorchBackend, tensor_dtype_name, tensor_layout

__all__ = ["LigerBackend", "LIGER_FUNCTIONS", "LIGER_IMPLS", "MAX_ROW", "AllocInto", "row_refusal"]

#: The longest row Liger's kernels hold (``liger_kernel.ops.utils.calculate_settings``' MAX_FUSED_SIZE).
MAX_ROW = 65536

#: op -> the name of Liger's autograd Function in ``liger_kernel.ops``.
LIGER_FUNCTIONS = {
    "rms_norm": "LigerRMSNormFunction",
    "add_rms_norm": "LigerFusedAddRMSNormFunction",
    "layer_norm": "LigerLayerNormFunction",
    "silu_mul": "LigerSiLUMulFunction",
    "softmax": "LigerSoftmaxFunction",
    "cross_entropy": "LigerCrossEntropyFunction",
}


#: Why rope is not run on Liger: its LigerRopeFunction takes q and k as (batch, heads, tokens, head_dim) with cos
#: and sin of the full head_dim gathered per token, rotates halves only (no gptj) and writes over its inputs; rope's
#: (tokens, heads, head_dim) q and k with a (positions, head_dim / 2) cache and a positions input would need a
#: transposed copy of q and k and a gathered, doubled cos / sin built on every call, which is not Liger's kernel.
ROPE_REFUSAL = ("Liger's rope (LigerRopeFunction) takes (batch, heads, tokens, head_dim) q and k with per-token cos "
                "and sin of the full head_dim and rotates halves only (no gptj): rope's (tokens, heads, head_dim) "
                "inputs with a (positions, head_dim / 2) cache and positions would need copies built on every call")


def row_refusal(op: str, shape: Sequence[int], params: Mapping[str, Any]) -> str | None:
    """Why Liger cannot run ``op`` on an input of ``shape`` (None: it can): a row longer than one Triton block, or
    a softmax over another axis than the last."""
    shape = tuple(shape)
    if not shape:
        return f"Liger's {op} needs at least a 1-d input (rows along the last axis)"
    if op == "cross_entropy":  # a program a row, looping over the classes: any width
        return "Liger's cross_entropy needs at least one row" if 0 in shape else None
    if op == "softmax" and params.get("axis", -1) % len(shape) != len(shape) - 1:
        return f"Liger's softmax is over the last axis only (axis {params.get('axis')} of a {len(shape)}-d input)"
    if shape[-1] > MAX_ROW:
        return (f"Liger holds a row in one Triton block of at most {MAX_ROW} elements; this row has "
                f"n = {shape[-1]} (Liger raises \"Cannot launch Triton kernel since n = {shape[-1]} exceeds the "
                f"recommended Triton blocksize\")")
    return None


class AllocInto:
    """Stands for the ``torch`` module inside one Liger op module during one call: the first ``empty`` or
    ``empty_like`` of ``out``'s size and dtype returns ``out`` (viewed to the requested shape); everything else is
    torch's. ``out`` a tuple (an op with several outputs): its arrays are handed out in order, each to the next
    allocation of its size and dtype (Liger's fused add-rms_norm allocates Y, then S)."""

    def __init__(self, torch: Any, out: Any) -> None:
        self._torch = torch
        self._outs = list(out) if isinstance(out, tuple) else [out]
        self._taken = 0
        self.used = False  # every output handed out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._torch, name)

    def _take(self, size: Sequence[int], dtype: Any) -> Any | None:
        if self._taken == len(self._outs):
            return None
        out = self._outs[self._taken]
        if dtype != out.dtype or not out.is_contiguous():
            return None
        numel = 1
        for s in size:
            numel *= int(s)
        if numel != out.numel():
            return None
        self._taken += 1
        self.used = self._taken == len(self._outs)
        return out.view(tuple(int(s) for s in size))

    def empty(self, *size: Any, **kwargs: Any) -> Any:
        shape = size[0] if len(size) == 1 and not isinstance(size[0], int) else size
        taken = self._take(shape, kwargs.get("dtype") or self._torch.get_default_dtype())
        return taken if taken is not None else self._torch.empty(*size, **kwargs)

    def empty_like(self, like: Any, **kwargs: Any) -> Any:
        taken = self._take(tuple(like.shape), kwargs.get("dtype") or like.dtype)
        return taken if taken is not None else self._torch.empty_like(like, **kwargs)


#: Liger's modules of functions that ``liger_kernel.ops`` may not export.
LIGER_MODULES = {"add_rms_norm": "liger_kernel.ops.fused_add_rms_norm"}


def liger_function(ops: Any, op: str) -> Any:
    """Liger's autograd Function of ``op``: from ``liger_kernel.ops``, else from its own module; None where this
    Liger has none."""
    name = LIGER_FUNCTIONS[op]
    found = getattr(ops, name, None)
    if found is None and op in LIGER_MODULES:
        try:
            found = getattr(importlib.import_module(LIGER_MODULES[op]), name, None)
        except Exception:  # noqa: BLE001 - an older Liger without it
            found = None
    return found


def _liger_impl(op: str, function_name: str) -> Impl:
    """The Impl of one op: ``(liger_kernel.ops, inputs, out, params) -> run``, ``run()`` returning what it launched
    (``last_launch``'s text)."""

    def make(ops: Any, inputs: Sequence[Any], out: Any, params: Mapping[str, Any]) -> Callable[[], str]:
        outs = out if isinstance(out, tuple) else (out,)
        if outs[0].numel() == 0:
            return lambda: "none"
        function = liger_function(ops, op)
        apply, torch = function.apply, sys.modules["torch"]
        module: Any = sys.modules[function.__module__]  # Liger's op module: its ``torch`` name is swapped per call
        args = (*inputs, float(params["eps"])) if "eps" in params else tuple(inputs)

        def run() -> str:
            proxy = AllocInto(torch, out)
            module.torch = proxy  # Liger's allocation of its output returns oprt's
            try:
                result = apply(*args)
            finally:
                module.torch = torch
            ys = result if isinstance(result, tuple) else (result,)
            if proxy.used and all(y.data_ptr() == o.data_ptr() for y, o in zip(ys, outs)):
                return f"liger {op}"
            for y, o in zip(ys, outs):
                o.copy_(y)
            return f"liger {op} + copy"

        return run

    return make


def _overwrites_logits(function: Any) -> bool:
    """Whether this Liger's cross-entropy kernel stores the logits' gradient over the logits in every forward (its
    source has no ``HAS_GRADIENTS`` switch)."""
    import inspect

    try:
        return "HAS_GRADIENTS" not in inspect.getsource(sys.modules[function.__module__])
    except (OSError, TypeError, KeyError):
        return True  # cannot tell: not run on inputs it may overwrite


def _liger_cross_entropy(ops: Any, inputs: Sequence[Any], out: Any, params: Mapping[str, Any]) -> Callable[[], str]:
    x, t = inputs
    apply = ops.LigerCrossEntropyFunction.apply
    ignore, reduction = int(params["ignore_index"]), params["reduction"]
    rows, target = x.reshape(-1, x.shape[-1]), t.reshape(-1)

    def run() -> str:
        loss = apply(rows, target, None, ignore, 0.0, 0.0, reduction)
        loss = loss[0] if isinstance(loss, tuple) else loss  # (loss, z_loss, ...) in recent versions
        out.copy_(loss if reduction == "mean" else loss.reshape(out.shape))
        return "liger cross_entropy + copy"

    return run


LIGER_IMPLS: dict[str, Impl] = {op: _liger_impl(op, name) for op, name in LIGER_FUNCTIONS.items()
                                if op != "cross_entropy"}
LIGER_IMPLS["cross_entropy"] = _liger_cross_entropy


class LigerBackend(TorchBackend):
    """Liger-Kernel's forward kernels for rms_norm, layer_norm, silu_mul, softmax and cross_entropy, on torch
    tensors."""

    _impls = LIGER_IMPLS

    def __init__(self, device: str = "cuda") -> None:
        super().__init__(device)
        self.name = "liger"
        self._ops: Any = None  # liger_kernel.ops, once available
        self._last: str | None = None
        self._overwriting = False  # this Liger's cross_entropy writes its gradient over the logits

    def __repr__(self) -> str:
        return f"LigerBackend(device={self.device!r})"

    def _probe_device(self, torch: Any) -> Availability:
        found = super()._probe_device(torch)
        if not found.ok:
            return Availability(False, found.reason)
        self._lib = None  # set again once Liger imports
        if not self.is_cuda:
            return Availability(False, "liger runs on CUDA devices only (Triton kernels)")
        ops, missing = import_library("liger_kernel.ops")
        if missing is not None:
            return Availability(False, missing.reason.replace("liger_kernel.ops not installed",
                                                              "liger-kernel not installed"))
        present = {op: make for op, make in LIGER_IMPLS.items() if liger_function(ops, op) is not None}
        if "cross_entropy" in present and _overwrites_logits(liger_function(ops, "cross_entropy")):
            self._overwriting = True
        if not present:
            return Availability(False, f"liger-kernel {_version()} has none of {', '.join(LIGER_FUNCTIONS.values())}")
        self._impls, self._ops, self._lib = present, ops, torch  # an older Liger may lack softmax: that op only
        return Availability(True, f"liger-kernel {_version()}, {found.reason}", found.device)

    def supports(self, op: str, dtype: str, case: Any | None = None) -> Support:
        if op in LIGER_FUNCTIONS and op not in self._impls:
            return Support(False, f"liger-kernel {_version()} has no {LIGER_FUNCTIONS[op]}")
        if op == "rope":
            return Support(False, ROPE_REFUSAL)
        if op not in LIGER_FUNCTIONS:
            return Support(False, f"Liger-Kernel has no {op} kernel (it has {', '.join(LIGER_FUNCTIONS)})")
        if op == "cross_entropy" and self._overwriting:
            return Support(False, f"liger-kernel {_version()}'s cross_entropy writes the logits' gradient over the "
                                  "logits in every forward: a repeated run would read its own gradient")
        support = super().supports(op, dtype, case)
        if not support or case is None:
            return support
        why = row_refusal(op, case.inputs[0].shape, case.param_dict)
        return Support(False, why) if why else support

    def device_info(self) -> DeviceInfo:
        """torch's, its flavour ``liger-<liger-kernel version>``."""
        return dataclasses.replace(super().device_info(), flavour=f"liger-{_version()}")

    def last_launch(self) -> str | None:
        """``liger OP`` (Liger's kernel, writing into oprt's output), ``liger OP + copy`` (its output copied into
        oprt's), ``none`` (an empty output: nothing launched); None before any launch."""
        return self._last

    def prepare(self, op: str, inputs: Sequence[Any], output: Any, params: Mapping[str, Any]):
        """Bind Liger's function to the tensors and run it once (Triton compiles its kernel there, outside the
        timed region); a shape Liger refuses raises UnsupportedCase with the reason."""
        torch = self._require()
        inputs = list(inputs)
        _, full = self._check_call(op, inputs, output, params, tensor_dtype_name)
        self._check_tensors(op, inputs, output)
        why = row_refusal(op, tuple(inputs[0].shape), full) or (
            self.supports(op, "f32").reason if op == "cross_entropy" and self._overwriting else None)
        if why:
            raise UnsupportedCase(why)
        make, ops = self._impls[op], self._ops

        def bind(ins: Sequence[Any], out: Any) -> Callable[[], Any]:
            run = make(ops, ins, out, full)

            def call() -> None:
                self._last = run()

            return call

        launcher = Launcher(bind, inputs, output, tensor_layout, f"{op} on {self.name}")
        try:
            launcher()
            torch.cuda.synchronize(self._dev)
        except RuntimeError as exc:
            if "Cannot launch Triton kernel" in str(exc) or "blocksize" in str(exc):
                raise UnsupportedCase(f"Liger refuses it: {exc}") from exc
            raise
        return launcher


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("liger-kernel")
    except Exception:  # noqa: BLE001 - a version is a note
        return "?"
