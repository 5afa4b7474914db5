"""TileLangBackend: backend ``tilelang``, the five core ops as TileLang kernels on torch tensors.

Memory, events, cache flushing and device facts are torch's: the backend subclasses
:class:`oprt_core.baselines.TorchBackend` and overrides discovery, ``supports`` and ``prepare``.
Planning (shape classes, kernel keys, the kernel column) is :mod:`oprt_tilelang.layout`, pure Python;
the kernel factories are :mod:`oprt_tilelang.kernels`, imported at the first compilation.

Compilation: each :class:`~oprt_tilelang.layout.KernelKey` (op, dtypes, block sizes of the shape class)
is compiled once per process and kept in memory; tilelang keeps the compiled kernels on disk in
``TILELANG_CACHE_DIR``, which the backend points at :func:`~oprt_tilelang.layout.cache_dir`
(``$OPRT_CACHE_DIR/tilelang`` or ``~/.cache/oprt/tilelang``) unless it is set already. ``prepare``
compiles what the call needs, outside the timed region; the seconds it spent are the launcher's
``compile_s`` (oprt-bench's ``compile_s`` column), None where every kernel was in memory already.

Available where tilelang is installed, torch sees a CUDA device, nvcc is found (tilelang compiles the
generated CUDA with it) and tilelang imports; otherwise unavailable with the reason. Registration
imports neither tilelang nor torch.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
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
from oprt_core.validate import check_output_layout

from .layout import TL_DTYPES, KernelKey, Plan, cache_dir, contiguous_strides, kernel_text, plan_call

__all__ = ["TileLangBackend", "TileLangLauncher", "find_nvcc", "case_support"]

#: the core ops by name: the ops this backend runs
_SPECS = {s.name: s for s in operators.specs("core")}


def find_nvcc() -> str | None:
    """nvcc's path: ``$NVCC``, ``$CUDA_HOME/bin/nvcc``, ``$CUDA_PATH/bin/nvcc``, PATH, ``/usr/local/cuda/bin/nvcc``."""
    explicit = os.environ.get("NVCC")
    if explicit and Path(explicit).is_file():
        return explicit
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root and (Path(root) / "bin" / "nvcc").is_file():
            return str(Path(root) / "bin" / "nvcc")
    found = shutil.which("nvcc")
    if found:
        return found
    default = Path("/usr/local/cuda/bin/nvcc")
    return str(default) if default.is_file() else None


def case_support(op: str, dtype: str, case: Any, sm_count: int = 132) -> Support:
    """Whether the kernels run a core op case (the planning ``prepare`` does, on the case's shapes and strides)."""
    inputs = list(getattr(case, "inputs", ()))
    if any(t.layout == "reversed" for t in inputs):
        return Support(False, NEGATIVE_STRIDES)
    spec = _SPECS[op]
    shapes = [tuple(t.shape) for t in inputs]
    try:
        params = spec.validate_params(case.param_dict, shapes)
        out_shape = spec.output_shape(shapes, params)
        # strides do not change a plan's support (non-contiguous inputs are made contiguous): contiguous ones here
        plan_call(op, dtype, shapes, [contiguous_strides(s) for s in shapes], out_shape,
                  contiguous_strides(out_shape), params, sm_count)
    except UnsupportedCase as exc:
        return Support(False, str(exc))
    return Support(True)


class TileLangLauncher(Launcher):
    """A Launcher with the seconds ``prepare`` spent compiling (``compile_s``) and the kernel column's text."""

    __slots__ = ("compile_s", "kernel")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.compile_s: float | None = None
        self.kernel = ""


class TileLangBackend(TorchBackend):
    """TileLang kernels for every core op; torch for memory, events and device facts."""

    impl_name = "tilelang"  # its own kernels: the torch baseline's implementations are not its

    def __init__(self, device: str = "cuda") -> None:
        super().__init__(device)
        self.name = "tilelang"
        self._tilelang: Any = None
        self._kernels: dict[KernelKey, Any] = {}  # compiled, this process
        self._sm_count: int | None = None
        self._last: str | None = None

    def __repr__(self) -> str:
        return f"TileLangBackend(device={self.device!r})"

    # -- discovery ------------------------------------------------------------------
    def _probe_torch(self) -> Availability:
        """torch and its CUDA device (TorchBackend's discovery)."""
        return super()._probe()

    def _import_tilelang(self) -> Any:
        import tilelang

        return tilelang

    def _probe(self) -> Availability:
        if not is_installed("tilelang"):
            return Availability(False, "tilelang is not installed (pip install tilelang; it compiles its kernels with "
                                       "nvcc for NVIDIA GPUs)")
        if not self.is_cuda:
            return Availability(False, f"the tilelang backend runs on CUDA devices only, not {self.device!r}")
        torch_avail = self._probe_torch()
        if not torch_avail.ok:
            return Availability(False, f"tilelang: {torch_avail.reason}")
        nvcc = find_nvcc()
        if nvcc is None:
            return Availability(False, "tilelang compiles its kernels with nvcc, which was not found (set CUDA_HOME or "
                                       "NVCC, or put nvcc on PATH)")
        os.environ.setdefault("TILELANG_CACHE_DIR", str(cache_dir()))
        os.environ.setdefault("TILELANG_PRINT_ON_COMPILATION", "0")
        try:
            tilelang = self._import_tilelang()
        except Exception as exc:  # noqa: BLE001 - a broken install is a reason, never a crash
            return Availability(False, f"tilelang is installed but failed to import: {type(exc).__name__}: {exc}")
        self._tilelang = tilelang
        version = getattr(tilelang, "__version__", "?")
        return Availability(True, f"tilelang {version}, {torch_avail.reason}, nvcc {nvcc}", torch_avail.device)

    def device_info(self) -> DeviceInfo:
        info = super().device_info()
        version = getattr(self._tilelang, "__version__", "?")
        info.flavour = f"tilelang-{version} {info.flavour}"
        info.toolkit = f"{info.toolkit}, tilelang {version}"
        info.extra["tilelang"] = version
        info.extra["tilelang_cache_dir"] = os.environ.get("TILELANG_CACHE_DIR", str(cache_dir()))
        return info

    def supports(self, op: str, dtype: str, case: Any | None = None) -> Support:
        if op not in _SPECS:
            return Support(False, f"tilelang backend has no implementation of {op!r} (it runs the core ops: "
                                  f"{', '.join(_SPECS)})")
        try:
            dt = get_dtype(dtype)
        except (InvalidArgumentError, UnknownNameError) as exc:
            return Support(False, str(exc))
        if dt.name not in TL_DTYPES:
            return Support(False, f"tilelang backend does not run {dt}")
        if case is not None:
            return case_support(op, dt.name, case, self._sm_count or 132)
        return Support(True)

    def last_launch(self) -> str | None:
        """The kernel column: ``tilelang <kernels> (what the call did besides)``; None before any launch."""
        return self._last

    def _sm(self) -> int:
        if self._sm_count is None:
            torch = self._require()
            self._sm_count = int(torch.cuda.get_device_properties(self._dev).multi_processor_count)
        return self._sm_count

    def _kernel(self, key: KernelKey) -> tuple[Any, float]:
        """The compiled kernel of ``key`` and the seconds compiling it took now (0 when it was in memory)."""
        if key in self._kernels:
            return self._kernels[key], 0.0
        from . import kernels

        kernel, seconds = kernels.compile_key(key)
        self._kernels[key] = kernel
        return kernel, seconds

    # -- ops ----------------------------------------------------------------------------
    def prepare(self, op: str, inputs: Sequence[Any], output: Any, params: Mapping[str, Any]):
        torch = self._require()
        if op not in _SPECS:
            raise UnknownNameError("op of the tilelang backend", op, _SPECS)
        inputs = list(inputs)
        _, full = self._check_call(op, inputs, output, params, tensor_dtype_name, _SPECS[op])
        self._check_tensors(op, inputs, output)
        # an expanded (stride-0) or self-overlapping out would have one element written by several threads
        check_output_layout(tuple(output.shape), tuple(output.stride()), name=f"{op}: out")
        plan = plan_call(op, tensor_dtype_name(output), [tuple(x.shape) for x in inputs],
                         [tuple(x.stride()) for x in inputs], tuple(output.shape), tuple(output.stride()), full,
                         self._sm())
        start = time.perf_counter()
        compiled, fresh = [], False
        for key in plan.keys:
            kernel, seconds = self._kernel(key)
            compiled.append(kernel)
            fresh = fresh or seconds > 0
        compile_s = time.perf_counter() - start if fresh else None
        text = kernel_text(plan)

        def bind(ins: Sequence[Any], out: Any) -> Callable[[], Any]:
            run = _bind(torch, plan, compiled, list(ins), out, full)

            def call() -> None:
                run()
                self._last = text

            return call

        launcher = TileLangLauncher(bind, inputs, output, tensor_layout, f"{op} on {self.name}")
        launcher.compile_s, launcher.kernel = compile_s, text
        return launcher


def _bind(torch: Any, plan: Plan, compiled: list[Any], ins: list[Any], out: Any,
          params: Mapping[str, Any]) -> Callable[[], None]:
    """The zero-argument call running ``plan`` on these tensors (views and buffers made once, here)."""
    if plan.kind == "none":
        return lambda: None
    if plan.kind == "zero":
        return lambda: out.zero_()
    target = torch.empty(tuple(out.shape), dtype=out.dtype, device=out.device) if plan.copy_out else out
    flat_out = target.view(-1)

    def prep(x: Any) -> Callable[[], Any]:
        """The input as the kernel takes it: broadcast to the output's shape and/or made contiguous, flat."""
        if plan.expand:
            return lambda: x.expand(tuple(out.shape)).contiguous().view(-1)
        if not x.is_contiguous():
            return lambda: x.contiguous().view(-1)
        view = x.reshape(-1)
        return lambda: view

    sources = [prep(x) for x in ins]
    finish = (lambda: out.copy_(target)) if plan.copy_out else (lambda: None)
    k0 = compiled[0]
    if plan.kind == "ew":
        if plan.op == "relu":
            slope = float(params["negative_slope"])

            def run_relu() -> None:
                k0(sources[0](), flat_out, slope)
                finish()

            return run_relu
        if plan.swap:
            sources = sources[::-1]

        def run_ew() -> None:
            k0(*[s() for s in sources], flat_out)
            finish()

        return run_ew
    dims = plan.dims
    if plan.op == "softmax":
        def run_softmax() -> None:
            k0(sources[0]().view(dims), flat_out.view(dims))
            finish()

        return run_softmax
    # reduce_sum: rows (outer, n) -> Out (split, outer); cols (outer, n, inner) -> Out (split, outer, inner)
    out_dims = (dims[0],) if plan.kind == "rows" else (dims[0], dims[2])
    if plan.split == 1:
        final = flat_out.view((1, *out_dims))

        def run_sum() -> None:
            k0(sources[0]().view(dims), final)
            finish()

        return run_sum
    part = torch.empty((plan.split, *out_dims), dtype=torch.float32, device=out.device)
    k1 = compiled[1]
    part3 = part.view(1, plan.split, -1)
    final3 = flat_out.view(1, 1, -1)

    def run_split() -> None:
        k0(sources[0]().view(dims), part)
        k1(part3, final3)
        finish()

    return run_split
