"""TritonBackend: backend ``triton``, the five core ops as Triton kernels on torch tensors.

Memory, events, cache flushing and device facts are torch's: the backend subclasses
:class:`oprt_core.baselines.TorchBackend` (``to_device`` keeps a host view's shape,
strides, offset and zero strides) and overrides discovery, ``supports`` and ``prepare``. Kernels are
in :mod:`oprt_triton.kernels`, imported by the first ``prepare``.

Layouts: any strides up to 4 dims after merging (elementwise) or 3 outer dims plus the reduced one
(reduce_sum, softmax); broadcasting through zero strides. Refused, as ``unsupported`` with the reason:
negative strides (torch tensors cannot hold a ``reversed`` view) and layouts that need more dims. An ``out``
with a zero or overlapping stride (an expanded tensor) is refused with InvalidArgumentError, as the compiled
backends refuse it.

Ops from other packages: ``add_op(spec, impl)`` (called by the registry for ``oprt_register_impls``)
teaches the backend an op; ``impl(inputs, out, params)`` enqueues it on torch's current stream with
torch tensors (``oprt_gelu`` registers a Triton ``gelu_tanh`` this way).

``TritonBackend(device="cpu")`` (backend ``triton-interpret``) runs the same kernels in Triton's
interpreter on CPU tensors, for tests; it is available only when ``TRITON_INTERPRET=1`` was set
before triton was first imported.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from oprt_core import Availability, DeviceInfo, InvalidArgumentError, Support, UnknownNameError, get_dtype, operators
from oprt_core.baselines import (
    NEGATIVE_STRIDES,
    Launcher,
    TorchBackend,
    is_installed,
    tensor_dtype_name,
    tensor_layout,
)
from oprt_core.errors import UnsupportedCase
from oprt_core.validate import check_call, check_output_layout

from .layout import case_strides, contiguous_strides, plan_elementwise, plan_rows

__all__ = ["TritonBackend", "case_layout_support"]

#: the core ops by name: the ops this backend runs with kernels of its own
_SPECS = {s.name: s for s in operators.specs("core")}

_DTYPES = ("f32", "f16", "bf16")
Impl = Callable[[Sequence[Any], Any, Mapping[str, Any]], None]


def case_layout_support(op: str, case: Any) -> Support:
    """Whether the kernels can index a core op case's layouts (the planning ``prepare`` does, on strides only)."""
    inputs = list(getattr(case, "inputs", ()))
    if any(t.layout == "reversed" for t in inputs):
        return Support(False, NEGATIVE_STRIDES)
    spec = _SPECS.get(op)
    if spec is None or not inputs:
        return Support(True)
    try:
        shapes = [tuple(t.shape) for t in inputs]
        strides = [case_strides(t) for t in inputs]
        params = spec.validate_params(case.param_dict, shapes)
        out_shape = spec.output_shape(shapes, params)
        if op in ("copy", "relu", "vector_add"):
            plan_elementwise(out_shape, contiguous_strides(out_shape), list(zip(shapes, strides)))
        elif op == "softmax" and shapes[0] and 0 not in shapes[0]:
            ax = params["axis"] % len(shapes[0])
            xs, os = strides[0], contiguous_strides(shapes[0])
            plan_rows(shapes[0], ax, [(xs[:ax] + xs[ax + 1:], xs[ax]), (os[:ax] + os[ax + 1:], os[ax])])
        elif op == "reduce_sum" and params["axis"] is not None and shapes[0]:
            ax = params["axis"] % len(shapes[0])
            xs = strides[0]
            os = contiguous_strides(shapes[0][:ax] + shapes[0][ax + 1:])
            plan_rows(shapes[0], ax, [(xs[:ax] + xs[ax + 1:], xs[ax]), (os, None)])
    except UnsupportedCase as exc:
        return Support(False, str(exc))
    return Support(True)


def _interpreter_numpy_compat() -> None:
    """Let Triton's interpreter turn its scalars (1-element arrays) into ints under NumPy >= 2.4.

    The interpreter's ``tensor.__index__`` is ``int(array)``, which NumPy 2.4 refuses for a 1-d array: every
    ``range(0, n, BLOCK)`` over a runtime bound then fails. Used by the ``triton-interpret`` test backend only.
    """
    try:
        from triton.runtime import interpreter
    except Exception:  # noqa: BLE001 - another triton layout: nothing to patch
        return
    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None or getattr(original, "_oprt_compat", False):
        return

    def patched(tensor: Any, scope: Any) -> None:
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    patched._oprt_compat = True  # type: ignore[attr-defined]
    interpreter._patch_lang_tensor = patched


class TritonBackend(TorchBackend):
    """Triton kernels for every core op; torch for memory, events and device facts."""

    impl_name = "triton"  # its own kernels: the torch baseline's implementations are not its

    def __init__(self, device: str = "cuda") -> None:
        super().__init__(device)
        self.name = "triton" if self.is_cuda else "triton-interpret"
        self.specs: dict[str, Any] = dict(_SPECS)
        self.extra_impls: dict[str, Impl] = {}
        self._triton: Any = None
        self._sm_count: int | None = None

    def __repr__(self) -> str:
        return f"TritonBackend(device={self.device!r})"

    def add_op(self, spec: Any, impl: Impl) -> None:
        """Teach the backend an op of another package: ``impl(inputs, out, params)`` on torch tensors."""
        if spec.name in _SPECS:
            raise ValueError(f"the triton backend implements core op {spec.name!r} itself")
        self.specs[spec.name] = spec
        self.extra_impls[spec.name] = impl

    # -- discovery ------------------------------------------------------------------
    def _probe(self) -> Availability:
        if not is_installed("triton"):
            return Availability(False, "triton is not installed (pip install triton; it runs kernels on NVIDIA "
                                       "and AMD GPUs)")
        try:
            import triton
        except Exception as exc:  # noqa: BLE001 - a broken install is a reason, never a crash
            return Availability(False, f"triton is installed but failed to import: {type(exc).__name__}: {exc}")
        version = getattr(triton, "__version__", "?")
        if not self.is_cuda and os.environ.get("TRITON_INTERPRET") != "1":
            return Availability(False, f"triton {version}: the {self.name} backend runs in Triton's interpreter, "
                                       "which needs TRITON_INTERPRET=1 set before triton is imported")
        torch_avail = super()._probe()
        if not torch_avail.ok:
            return Availability(False, f"triton {version}: {torch_avail.reason}")
        self._triton = triton
        if not self.is_cuda:
            _interpreter_numpy_compat()
        where = "Triton interpreter, " if not self.is_cuda else ""
        return Availability(True, f"triton {version}, {where}{torch_avail.reason}", torch_avail.device)

    def device_info(self) -> DeviceInfo:
        info = super().device_info()
        version = getattr(self._triton, "__version__", "?")
        info.flavour = f"triton-{version} {info.flavour}" + ("" if self.is_cuda else " interpreter")
        info.toolkit = f"{info.toolkit}, triton {version}"
        info.extra["triton"] = version
        return info

    def supports(self, op: str, dtype: str, case: Any | None = None) -> Support:
        if op not in self.specs:
            return Support(False, f"triton backend has no implementation of {op!r} (an op package can give it one "
                                  "through the oprt_register_impls hook)")
        try:
            dt = get_dtype(dtype)
        except (InvalidArgumentError, UnknownNameError) as exc:
            return Support(False, str(exc))
        if dt.name not in _DTYPES:
            return Support(False, f"triton backend does not run {dt}")
        if case is not None:
            return case_layout_support(op, case)
        return Support(True)

    def _sm(self) -> int:
        if self._sm_count is None:
            torch = self._require()
            self._sm_count = (int(torch.cuda.get_device_properties(self._dev).multi_processor_count)
                              if self.is_cuda else 4)
        return self._sm_count

    # -- ops ----------------------------------------------------------------------------
    def prepare(self, op: str, inputs: Sequence[Any], output: Any, params: Mapping[str, Any]):
        torch = self._require()
        if op not in self.specs:
            raise UnknownNameError("op of the triton backend", op, self.specs)
        inputs = list(inputs)
        _, full = check_call(self.specs[op], [tuple(x.shape) for x in inputs], [tensor_dtype_name(x) for x in inputs],
                             tuple(output.shape), tensor_dtype_name(output), params)
        for t in [*inputs, output]:
            if not isinstance(t, torch.Tensor):
                raise InvalidArgumentError(f"{op}: the {self.name} backend takes torch tensors, got {type(t).__name__}")
            if t.device != self._dev:
                raise InvalidArgumentError(f"{op}: tensor on {t.device}, the {self.name} backend runs on {self._dev}")
        # an expanded (stride-0) or self-overlapping out would have one element written by several programs
        check_output_layout(tuple(output.shape), tuple(output.stride()), name=f"{op}: out")
        if op in self.extra_impls:
            impl = self.extra_impls[op]

            def make(ins: Sequence[Any], out: Any) -> Callable[[], Any]:
                return lambda: impl(ins, out, full)
        else:
            from . import kernels

            sm = self._sm()

            def make(ins: Sequence[Any], out: Any) -> Callable[[], Any]:
                return kernels.make(op, ins, out, full, sm)

        # plans (and refuses a layout) now, not at the first run; ``run`` rebinds to tensors of the same layout
        return Launcher(make, inputs, output, tensor_layout, f"{op} on {self.name}")
