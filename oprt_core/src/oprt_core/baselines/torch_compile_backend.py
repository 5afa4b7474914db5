"""TorchCompileBackend: ``torch.compile`` of the torch baseline's code (backend ``torch-compile``).

Each op is a functional form of the torch baseline's call (``IMPLS["torch-compile"]`` in the op's folder,
``oprt_core/operators/<op>/baselines.py``: e.g. ``torch.softmax(x, dim)``; torch's functional calls, no ``out=``,
which splits a dynamo graph or is rejected by it) written into the output in one graph, ``out.copy_(fn(*inputs))``,
compiled by ``torch.compile(..., dynamic=False, fullgraph=True)`` (inductor: Triton kernels on a GPU; the copy into
the graph's input ``out`` becomes the kernel's own store). ``prepare`` compiles it for the case and runs it once,
outside the timed region; that first call's wall time (trace, code generation, Triton compilation and one run,
synchronised) is the launcher's ``compile_s``, oprt-bench's ``compile_s`` column. ``fullgraph=True``: a graph break is
an error row, never a silent eager run. matmul has no such form (its TF32 choice would be fixed when the graph
compiles).

Every ``prepare`` compiles a fresh copy of the step function's code object: dynamo keeps its compiled graphs
per code object, so one case's graph is never checked against another case's guards on each call. Dynamo's
recompile limits are raised all the same (:func:`raise_recompile_limits`), on the first ``availability()``:
under the defaults (8 per code object) a ninth compilation of one function runs eager, with a warning only.

Available where torch sees a CUDA device and Triton imports (inductor's GPU code generator);
``TorchCompileBackend(device="cpu")`` compiles for torch's CPU (inductor's C++ code generation), for tests.
"""

from __future__ import annotations

import dataclasses
import importlib
import time
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..backend import Availability, DeviceInfo
from ..spec import OpSpec
from .base import Launcher, import_library
from .torch_backend import TorchBackend, tensor_dtype_name, tensor_layout

__all__ = ["TorchCompileBackend", "CompiledLauncher", "raise_recompile_limits", "RECOMPILE_LIMIT"]

#: What dynamo's per-function and accumulated recompile limits are raised to (at least).
RECOMPILE_LIMIT = 4096

# dynamo's names for its limits: cache_size_limit / accumulated_cache_size_limit (torch < 2.6), renamed
# recompile_limit / accumulated_recompile_limit (the old names stay as aliases for a while)
_LIMIT_NAMES = ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit", "accumulated_cache_size_limit")


def raise_recompile_limits(config: Any, limit: int = RECOMPILE_LIMIT) -> dict[str, int]:
    """Raise every recompile limit ``config`` (``torch._dynamo.config``) has to at least ``limit``; returns what it
    set, name -> new value (a limit already higher is left as it is). Raises nothing when none exists."""
    done: dict[str, int] = {}
    for name in _LIMIT_NAMES:
        value = getattr(config, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value < limit:
            setattr(config, name, limit)
            done[name] = limit
    return done


def _step(fn: Callable[..., Any], n_outputs: int = 1) -> Callable[..., Any]:
    """``step(*inputs, *outs)``: ``out.copy_(fn(*inputs))`` (each output's copy, for an op with several), with a code
    object of its own (dynamo's cache key)."""

    def step(*args: Any) -> Any:
        if n_outputs == 1:
            return args[-1].copy_(fn(*args[:-1]))
        results = fn(*args[:-n_outputs])
        return tuple(o.copy_(r) for o, r in zip(args[-n_outputs:], results))

    code = step.__code__.replace()  # a new code object: this case's compiled graphs only
    return types.FunctionType(code, step.__globals__, step.__name__, step.__defaults__, step.__closure__)


class CompiledLauncher(Launcher):
    """A :class:`~.base.Launcher` with the seconds its compilation took (``compile_s``: the first call's wall time)."""

    __slots__ = ("compile_s",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.compile_s: float | None = None


class TorchCompileBackend(TorchBackend):
    """torch.compile of the torch baseline's code, compiled per case at ``prepare`` (the compile time on the side)."""

    impl_name = "torch-compile"

    def __init__(self, device: str = "cuda") -> None:
        super().__init__(device)
        self.name = "torch-compile" if self.is_cuda else f"torch-compile-{self.device.split(':')[0]}"
        self.recompile_limits: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"TorchCompileBackend(device={self.device!r})"

    def add_op(self, spec: OpSpec, impl: Callable[[Any, Mapping[str, Any]], Callable[..., Any]]) -> None:
        """Compile op ``spec`` from ``impl(torch, params)``, which returns ``fn(*inputs)``: the op's result as a
        tensor (a tuple of one per output for an op with several), written with torch's functional calls (no
        ``out=``); ``prepare`` compiles ``out.copy_(fn(*inputs))`` as one graph."""
        super().add_op(spec, impl)

    def _probe_device(self, torch: Any) -> Availability:
        found = super()._probe_device(torch)
        if not found.ok:
            return Availability(False, found.reason)
        version = torch.__version__
        if not callable(getattr(torch, "compile", None)):
            self._lib = None
            return Availability(False, f"torch {version} has no torch.compile (torch >= 2.0)")
        if self.is_cuda:
            triton, missing = import_library("triton")
            if missing is not None:
                self._lib = None
                return Availability(False, f"{missing.reason}: torch.compile generates Triton kernels for CUDA")
            reason = f"{found.reason}, triton {getattr(triton, '__version__', '?')}, torch.compile (inductor)"
        else:
            reason = f"{found.reason}, torch.compile (inductor)"
        try:
            self.recompile_limits = raise_recompile_limits(importlib.import_module("torch._dynamo").config)
        except Exception as exc:  # noqa: BLE001 - never raises
            self._lib = None
            return Availability(False, f"torch {version}: cannot set dynamo's recompile limit: "
                                       f"{type(exc).__name__}: {exc}")
        return Availability(True, reason, found.device)

    def device_info(self) -> DeviceInfo:
        """torch's, its flavour ``torch-compile-<torch version>``."""
        info = super().device_info()
        return dataclasses.replace(info, flavour=f"torch-compile-{self._require().__version__}")

    def prepare(self, op: str, inputs: Sequence[Any], output: Any, params: Mapping[str, Any]):
        torch, make, inputs, _, full = self._begin(op, inputs, output, params, tensor_dtype_name)
        self._check_tensors(op, inputs, output)
        outs = len(output) if isinstance(output, tuple) else 1
        compiled = torch.compile(_step(make(torch, full), outs), dynamic=False, fullgraph=True)

        def bind(ins: Sequence[Any], out: Any) -> Callable[[], Any]:
            args = (*ins, *(out if isinstance(out, tuple) else (out,)))
            return lambda: compiled(*args)

        launcher = CompiledLauncher(bind, inputs, output, tensor_layout, f"{op} on {self.name}")
        start = time.perf_counter()
        launcher()  # trace + compile + one run, outside the timed region
        self.synchronize()
        launcher.compile_s = time.perf_counter() - start
        return launcher
