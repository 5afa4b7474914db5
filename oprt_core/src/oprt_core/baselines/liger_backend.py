"""LigerBackend: Liger-Kernel's Triton kernels as a baseline (backend ``liger``).

Liger-Kernel (``pip install liger-kernel``: torch and triton its only dependencies) is a library of Triton
kernels for training transformer models; its forward passes are the peers of the model ops. Each op it is given
is a :class:`LigerOp` (``IMPLS["liger"]`` in the op's folder, ``oprt_core/operators/<op>/baselines.py``): the name
of Liger's autograd Function (``liger_kernel.ops.LigerRMSNormFunction``, ...), called with the op's inputs (and
eps), and the op's own rules (a row length, an axis, a Liger version it cannot trust).

Most of Liger's kernels hold a whole row in one Triton block of ``next_power_of_2(n)`` elements, at most 65536:
a case with a longer row (n > 65536) is unsupported with that reason (:func:`row_refusal`; a refusal by Liger
itself at ``prepare`` is an unsupported row too, never a crash). Non-contiguous inputs are made contiguous by
Liger first (its ``ensure_contiguous``), inside the timed call: that is what its users pay. An op Liger has no
kernel of is unsupported, naming the ops it runs; an op given with a ``refusal`` (Liger has a kernel of its name
that is not the op's) is unsupported with that reason.

Liger allocates its output; the backend has it allocate into oprt's output instead: for the length of a
call, the ``torch`` name of the op's module stands for a proxy whose first ``empty`` / ``empty_like`` of
the output's size and dtype returns the output itself (Liger's own launch logic runs unchanged, writing
where the harness reads). Where a Liger version allocates otherwise, its result is copied into the output
(one extra write and read); ``last_launch()`` (the ``kernel`` column) says which: ``liger <op>`` or
``liger <op> + copy``.

Available where torch sees a CUDA device and ``liger_kernel`` (with triton) imports; otherwise
unavailable with the reason. A subclass of :class:`~.torch_backend.TorchBackend`: memory, events and
calibration probes are torch's.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..backend import Availability, DeviceInfo, Support
from ..errors import UnsupportedCase
from ..spec import OpSpec
from .base import Impl, Launcher, import_library
from .torch_backend import TorchBackend, tensor_dtype_name, tensor_layout

__all__ = ["LigerBackend", "LigerOp", "MAX_ROW", "AllocInto", "row_refusal", "liger_version"]

#: The longest row Liger's kernels hold (``liger_kernel.ops.utils.calculate_settings``' MAX_FUSED_SIZE).
MAX_ROW = 65536


def row_refusal(op: str, shape: Sequence[int], params: Mapping[str, Any]) -> str | None:
    """Why Liger's kernel of ``op``, a whole row in one Triton block, cannot run an input of ``shape`` (None: it
    can): no row axis, or a row longer than one block. A :class:`LigerOp`'s ``case_refusal`` by default."""
    shape = tuple(shape)
    if not shape:
        return f"Liger's {op} needs at least a 1-d input (rows along the last axis)"
    if shape[-1] > MAX_ROW:
        return (f"Liger holds a row in one Triton block of at most {MAX_ROW} elements; this row has "
                f"n = {shape[-1]} (Liger raises \"Cannot launch Triton kernel since n = {shape[-1]} exceeds the "
                f"recommended Triton blocksize\")")
    return None


class AllocInto:
    """Stands for the ``torch`` module inside one Liger op module during one call: the first ``empty`` or
    ``empty_like`` of ``out``'s size and dtype returns ``out`` (viewed to the requested shape); everything else is
    torch's. ``out`` a tuple (an op with several outputs): its arrays are handed out in order, each to the next
    allocation of its size and dtype (Liger's fused residual-add norm allocates Y, then S)."""

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


def _apply_into(op: str, function: Any, inputs: Sequence[Any], out: Any, params: Mapping[str, Any]
                ) -> Callable[[], str]:
    """Liger's usual call: ``function.apply(*inputs[, eps])``, its outputs allocated into oprt's (:class:`AllocInto`),
    its result copied where they were not; ``run()`` returns what it launched (``last_launch``'s text)."""
    outs = out if isinstance(out, tuple) else (out,)
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


@dataclass(frozen=True)
class LigerOp:
    """One op on Liger-Kernel: what :meth:`LigerBackend.add_op` takes, called as ``impl(liger_kernel.ops, inputs, out,
    params)`` -> ``run``, ``run()`` doing one call and returning what it launched (``last_launch``'s text).

    - ``op``: oprt's op name (the kernel column says ``liger <op>``);
    - ``function``: the name of Liger's autograd Function (``"LigerRMSNormFunction"``), looked up in
      ``liger_kernel.ops``, else in ``module`` (a Liger module that ``liger_kernel.ops`` does not export it from);
    - ``make``: ``(function, inputs, out, params) -> run`` for an op whose call is not the usual one; None: the usual
      ``function.apply(*inputs[, eps])``, allocating into oprt's outputs (an empty output: nothing launched);
    - ``case_refusal``: ``(op, input shape, params) -> why Liger cannot run it`` (None: it can), asked by ``supports``
      and ``prepare``; default :func:`row_refusal`;
    - ``layout_refusal``: ``(first input's TensorCase) -> why Liger cannot run it laid out so`` (None: it can), asked
      by ``supports``; a ``make`` raises UnsupportedCase for tensors laid out so;
    - ``check``: ``(function) -> why this Liger's function is not run`` (None: it is), judged once at discovery;
    - ``refusal``: why oprt does not run the op on Liger at all, though Liger has a kernel of its name (the op is
      then unsupported with it, and ``function`` is only named).
    """

    op: str
    function: str
    module: str | None = None
    make: Callable[..., Callable[[], str]] | None = None
    case_refusal: Callable[[str, Sequence[int], Mapping[str, Any]], str | None] = row_refusal
    layout_refusal: Callable[[Any], str | None] | None = None
    check: Callable[[Any], str | None] | None = None
    refusal: str | None = None

    def find(self, ops: Any) -> Any:
        """Liger's autograd Function of the op: from ``ops`` (``liger_kernel.ops``), else from ``module``; None where
        this Liger has none."""
        found = getattr(ops, self.function, None)
        if found is None and self.module is not None:
            try:
                found = getattr(importlib.import_module(self.module), self.function, None)
            except Exception:  # noqa: BLE001 - an older Liger without it
                found = None
        return found

    def __call__(self, ops: Any, inputs: Sequence[Any], out: Any, params: Mapping[str, Any]) -> Callable[[], str]:
        if self.refusal is not None:
            raise UnsupportedCase(self.refusal)
        if self.make is not None:
            return self.make(self.find(ops), inputs, out, params)
        if (out[0] if isinstance(out, tuple) else out).numel() == 0:
            return lambda: "none"
        return _apply_into(self.op, self.find(ops), inputs, out, params)


class LigerBackend(TorchBackend):
    """Liger-Kernel's forward kernels for the ops it is given (each a :class:`LigerOp`), on torch tensors."""

    impl_name = "liger"

    def __init__(self, device: str = "cuda") -> None:
        super().__init__(device)
        self.name = "liger"
        self._given: dict[str, LigerOp] = {}  # every op given through add_op; _impls: those this Liger has
        self._refused: dict[str, str] = {}  # op -> why this Liger's kernel of it is not run (LigerOp.check)
        self._ops: Any = None  # liger_kernel.ops, once available
        self._last: str | None = None

    def __repr__(self) -> str:
        return f"LigerBackend(device={self.device!r})"

    def add_op(self, spec: OpSpec, impl: Impl) -> None:
        """Run op ``spec`` with ``impl``, a :class:`LigerOp`: Liger's autograd Function of the op by name, how it is
        called and the op's rules on Liger; ``impl(liger_kernel.ops, inputs, out, params)`` returns ``run``,
        ``run()`` doing one call and returning the kernel column's text. Whether this Liger has the Function is
        found at discovery (the first ``availability()``)."""
        if not isinstance(impl, LigerOp):
            raise TypeError(f"the liger backend takes a LigerOp for {spec.name!r}, got {type(impl).__name__}")
        self._given[spec.name] = impl
        if impl.refusal is None:
            super().add_op(spec, impl)

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
        functions = {op: impl.find(ops) for op, impl in self._impls.items()}
        present = {op: impl for op, impl in self._impls.items() if functions[op] is not None}
        for op, impl in present.items():
            why = impl.check(functions[op]) if impl.check is not None else None
            if why:
                self._refused[op] = why
        if not present:
            return Availability(False, f"liger-kernel {liger_version()} has none of "
                                       f"{', '.join(impl.function for impl in self._impls.values())}")
        self._impls, self._ops, self._lib = present, ops, torch  # an older Liger may lack softmax: that op only
        return Availability(True, f"liger-kernel {liger_version()}, {found.reason}", found.device)

    def supports(self, op: str, dtype: str, case: Any | None = None) -> Support:
        given = self._given.get(op)
        if given is None:
            runs = ", ".join(name for name, impl in self._given.items() if impl.refusal is None)
            return Support(False, f"Liger-Kernel has no {op} kernel (it has {runs})")
        if given.refusal is not None:
            return Support(False, given.refusal)
        if op not in self._impls:
            return Support(False, f"liger-kernel {liger_version()} has no {given.function}")
        if op in self._refused:
            return Support(False, self._refused[op])
        support = super().supports(op, dtype, case)
        if not support or case is None:
            return support
        why = given.case_refusal(op, case.inputs[0].shape, case.param_dict)
        if not why and given.layout_refusal is not None:
            why = given.layout_refusal(case.inputs[0])
        return Support(False, why) if why else support

    def device_info(self) -> DeviceInfo:
        """torch's, its flavour ``liger-<liger-kernel version>``."""
        return dataclasses.replace(super().device_info(), flavour=f"liger-{liger_version()}")

    def last_launch(self) -> str | None:
        """``liger OP`` (Liger's kernel, writing into oprt's output), ``liger OP + copy`` (its output copied into
        oprt's), ``none`` (an empty output: nothing launched); None before any launch."""
        return self._last

    def prepare(self, op: str, inputs: Sequence[Any], output: Any, params: Mapping[str, Any]):
        """Bind Liger's function to the tensors and run it once (Triton compiles its kernel there, outside the
        timed region); a shape Liger refuses raises UnsupportedCase with the reason."""
        torch, make, inputs, _, full = self._begin(op, inputs, output, params, tensor_dtype_name)
        ops = self._ops
        self._check_tensors(op, inputs, output)
        why = make.case_refusal(op, tuple(inputs[0].shape), full) or self._refused.get(op)
        if why:
            raise UnsupportedCase(why)

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


def liger_version() -> str:
    """The installed liger-kernel's version ("?" where it cannot be read)."""
    try:
        from importlib.metadata import version

        return version("liger-kernel")
    except Exception:  # noqa: BLE001 - a version is a note
        return "?"
