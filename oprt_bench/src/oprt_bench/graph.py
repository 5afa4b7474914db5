"""CUDA-graph timing (``--timing graph``): every sample is one replay of a graph that holds one launch of the op.

Per row, outside the timed region: the launch is captured once per buffer set on a stream of the CUDA runtime the
backend shares (torch for ``torch`` and ``triton``; CuPy for ``cupy``; CuPy, else torch, for a compiled backend whose
memory is CUDA memory: ``nvidia``, ``metax``'s nvcc-shim build, its launch given the stream through the C ABI's
``oprt_stream_t``). The row's own buffers and K-1 copies of them (:func:`rotation_plan`: the least K with
K x working set > 2 x L2) are replayed round-robin, so each sample reads data the L2 has evicted since its set last
ran, with no flush kernel before it. Where K would pass :data:`MAX_SETS` sets or a quarter of the device's memory,
K is capped and the backend's cold flush runs before each sample instead (outside the timed window).

A sample: a spin kernel (:data:`SPIN_CYCLES` clock cycles, before the window) keeps the GPU busy while the host
enqueues the event pair and the replay, so neither the replay's host cost nor its launch latency is inside the
window; then start event, replay, end event, all on the capture stream.

A backend that cannot be captured (numpy and other host backends, metax's mxcc build, a capture that fails) is timed
with events; :func:`runtime_for` and :func:`measure_graph` say why, and the row's ``timer_note`` keeps it.
See docs/measurement.md.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from oprt_core.dtypes import get_dtype

from .errors import one_line
from .timing import Measurement, TimingConfig, flush, measure

__all__ = ["MAX_SETS", "MEMORY_FRACTION", "SPIN_CYCLES", "RotationPlan", "rotation_plan", "runtime_for",
           "CupyRuntime", "TorchRuntime", "time_graphs", "measure_graph"]

MAX_SETS = 64  # buffer sets (and captured graphs) of one row at most
MEMORY_FRACTION = 0.25  # the extra buffer sets take at most this share of the device's memory
SPIN_CYCLES = 50_000  # ~25 us at 2 GHz: longer than the host takes to enqueue an event pair and a graph launch

_SPIN_SOURCE = r"""
extern "C" __global__ void oprt_spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
}
"""


def _mib(nbytes: float) -> str:
    return f"{nbytes / (1 << 20):.3g} MiB"


@dataclass(frozen=True)
class RotationPlan:
    """How many buffer sets a graph-timed row rotates through, and whether a flush must keep its samples cold."""

    sets: int
    working_set_bytes: int
    l2_bytes: int | None
    flush_between: bool  # the rotation stays within 2 x L2: the cold flush runs before each sample

    def describe(self) -> str:
        """The row's ``timer_note``, e.g. ``graph replay, 13 buffer sets x 9.5 MiB > 2x L2 (60 MiB)``."""
        head = f"graph replay, {self.sets} buffer set{'s' if self.sets != 1 else ''} x {_mib(self.working_set_bytes)}"
        if self.l2_bytes is None:
            return head + (": L2 size unknown, flushed before each sample" if self.flush_between else "")
        l2 = f"2x L2 ({_mib(self.l2_bytes)})"
        if self.flush_between:
            return f"{head} <= {l2}: flushed before each sample"
        return f"{head} > {l2}"


def rotation_plan(working_set_bytes: int, l2_bytes: int | None, *, memory_bytes: int | None = None, cold: bool = True,
                  max_sets: int = MAX_SETS, memory_fraction: float = MEMORY_FRACTION) -> RotationPlan:
    """The buffer rotation of a row whose inputs and output take ``working_set_bytes`` on a device with an L2 of
    ``l2_bytes``: the least K with K x working set > 2 x L2, capped at ``max_sets`` and at K-1 extra sets within
    ``memory_fraction`` of ``memory_bytes``; a capped rotation flushes before each sample. Warm timing (``cold``
    false) replays the one set, unflushed."""
    ws = int(working_set_bytes)
    if ws <= 0:
        raise ValueError(f"a working set needs a positive byte count, got {working_set_bytes}")
    l2 = int(l2_bytes) if l2_bytes else None
    if not cold:
        return RotationPlan(1, ws, l2, False)
    if l2 is None:
        return RotationPlan(1, ws, None, True)
    need = 2 * l2 // ws + 1
    sets = min(need, max(1, int(max_sets)))
    if memory_bytes:
        sets = min(sets, 1 + int(memory_fraction * memory_bytes) // ws)
    sets = max(1, sets)
    return RotationPlan(sets, ws, l2, sets < need)


# -- the CUDA runtimes that capture and replay ----------------------------------------------------------------

class CupyRuntime:
    """Capture, replay, spin and time on a blocking CuPy stream of ``device``."""

    name = "cupy"

    def __init__(self, device: int = 0) -> None:
        import cupy as cp

        self.cp = cp
        cp.cuda.Device(device).use()
        self.stream = cp.cuda.Stream(non_blocking=False)
        self.start, self.end = cp.cuda.Event(), cp.cuda.Event()
        self._spin = cp.RawKernel(_SPIN_SOURCE, "oprt_spin")

    @property
    def handle(self) -> int:
        return int(self.stream.ptr)

    def run(self, fn: Callable[[], Any]) -> None:
        with self.stream:
            fn()

    def capture(self, launch: Callable[[], Any]) -> Any:
        relaxed = getattr(self.cp.cuda.runtime, "streamCaptureModeRelaxed", None)
        with self.stream:
            self.stream.begin_capture(mode=relaxed) if relaxed is not None else self.stream.begin_capture()
            try:
                launch()
            except BaseException:
                try:
                    self.stream.end_capture()
                except Exception:  # noqa: BLE001, S110 - the launch's own error is the one to report
                    pass
                raise
            return self.stream.end_capture()

    def replay(self, graph: Any) -> None:
        graph.launch(stream=self.stream)

    def spin(self, cycles: int) -> None:
        import numpy as np

        with self.stream:
            self._spin((1,), (1,), (np.int64(cycles),))

    def record(self, event: Any) -> None:
        event.record(self.stream)

    def elapsed_ms(self) -> float:
        self.end.synchronize()
        return float(self.cp.cuda.get_elapsed_time(self.start, self.end))

    def synchronize(self) -> None:
        self.stream.synchronize()


class TorchRuntime:
    """Capture, replay, spin and time on a torch stream of ``device`` (``"cuda"``, ``"cuda:1"``, a torch.device)."""

    name = "torch"

    def __init__(self, device: Any = "cuda") -> None:
        import torch

        self.torch = torch
        self.device = torch.device(device)
        self.stream = torch.cuda.Stream(device=self.device)
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    @property
    def handle(self) -> int:
        return int(self.stream.cuda_stream)

    def run(self, fn: Callable[[], Any]) -> None:
        with self.torch.cuda.stream(self.stream):
            fn()

    def capture(self, launch: Callable[[], Any]) -> Any:
        graph = self.torch.cuda.CUDAGraph()
        with self.torch.cuda.stream(self.stream):
            graph.capture_begin(capture_error_mode="relaxed")
            try:
                launch()
            except BaseException:
                try:
                    graph.capture_end()
                except Exception:  # noqa: BLE001, S110 - the launch's own error is the one to report
                    pass
                raise
            graph.capture_end()
        return graph

    def replay(self, graph: Any) -> None:
        with self.torch.cuda.stream(self.stream):
            graph.replay()

    def spin(self, cycles: int) -> None:
        with self.torch.cuda.stream(self.stream):
            self.torch.cuda._sleep(int(cycles))

    def record(self, event: Any) -> None:
        event.record(self.stream)

    def elapsed_ms(self) -> float:
        self.end.synchronize()
        return float(self.start.elapsed_time(self.end))

    def synchronize(self) -> None:
        self.stream.synchronize()


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def runtime_for(backend: Any) -> tuple[Callable[[], Any] | None, str]:
    """``(make the runtime, "")`` for a backend whose launches a CUDA graph can capture, else ``(None, why not)``."""
    from oprt_core.baselines.cupy_backend import CupyBackend
    from oprt_core.baselines.torch_backend import TorchBackend
    from oprt_core.compiled import CompiledBackend

    name = getattr(backend, "name", type(backend).__name__)
    if isinstance(backend, TorchBackend):
        if not backend.is_cuda:
            return None, f"{name} runs on the CPU: no CUDA graph to capture"
        return (lambda: TorchRuntime(backend._dev if backend._dev is not None else backend.device)), ""
    if isinstance(backend, CupyBackend):
        return (lambda: CupyRuntime(backend.device)), ""
    if isinstance(backend, CompiledBackend):
        if not backend.cuda_interop:
            return None, f"{name}'s memory is not CUDA memory (e.g. metax's mxcc build): no CUDA runtime captures it"
        if _installed("cupy"):
            return (lambda: CupyRuntime(backend.device)), ""
        if _installed("torch"):
            return (lambda: TorchRuntime(f"cuda:{backend.device}")), ""
        return None, f"capturing {name}'s launch needs CuPy or torch (neither is installed)"
    if not getattr(backend, "device_info", None) or _is_host(backend):
        return None, f"{name} is a host backend: no CUDA graph to capture"
    return None, f"{name} ({type(backend).__name__}) has no CUDA graph capture oprt-bench knows"


def _is_host(backend: Any) -> bool:
    try:
        return not backend.device_info().memory_bytes
    except Exception:  # noqa: BLE001 - a backend that cannot say is not captured either
        return True


# -- sampling -----------------------------------------------------------------------------------------------

def time_graphs(backend: Any, runtime: Any, launches: Sequence[Callable[[], Any]], plan: RotationPlan,
                config: TimingConfig, spin_cycles: int = SPIN_CYCLES) -> Measurement:
    """Capture each of ``launches`` (one per buffer set, each a zero-argument launch on ``runtime``'s stream) into
    a graph, replay each once (warm-up, first touch), then time one replay per sample, round-robin, following
    ``config``'s stopping rules."""
    graphs = []
    for launch in launches:
        runtime.run(launch)  # eager first: binds the launcher to the set (workspaces are not allocated in capture)
        runtime.synchronize()
        graphs.append(runtime.capture(launch))
    turn = [0]

    def replay_next() -> None:
        runtime.replay(graphs[turn[0] % len(graphs)])
        turn[0] += 1

    def sample() -> float:
        if plan.flush_between:
            flush(backend, config.flush)
            backend.synchronize()  # the flush ran on the backend's stream; the sample starts after it
        runtime.spin(spin_cycles)
        runtime.record(runtime.start)
        replay_next()
        runtime.record(runtime.end)
        return runtime.elapsed_ms()

    warm = TimingConfig(cold=config.cold, flush=config.flush, time_budget_s=config.time_budget_s,
                        target_rel_ci=config.target_rel_ci, min_samples=config.min_samples,
                        max_samples=config.max_samples, warmup_s=config.warmup_s,
                        warmup_calls=max(config.warmup_calls, len(graphs)), timer=config.timer)
    return measure(_Synced(runtime), replay_next, warm, sampler=sample)


class _Synced:
    """What :func:`~oprt_bench.timing.measure` calls on a backend during the warm-up, on the runtime's stream."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime

    def synchronize(self) -> None:
        self.runtime.synchronize()

    def event(self) -> None:
        return None


def measure_graph(backend: Any, launcher: Any, inputs: Sequence[Any], output: Any, host_inputs: Sequence[Any],
                  output_shape: Sequence[Any], dtype: str, config: TimingConfig, device_info: dict[str, Any],
                  make_runtime: Callable[[], Any] | None = None) -> tuple[Measurement | None, str]:
    """Graph timing of a prepared row: ``(measurement, the timer note)``, or ``(None, why events time it)``.

    ``launcher`` was prepared on ``inputs`` and ``output`` (the backend's arrays); the extra buffer sets are made
    from ``host_inputs`` (copied to the device) and ``output_shape``/``dtype`` (a multi-output op's ``output`` is a
    tuple, and ``output_shape`` then the tuple of their shapes). ``make_runtime`` overrides
    :func:`runtime_for` (tests)."""
    reason = ""
    if make_runtime is None:
        make_runtime, reason = runtime_for(backend)
    if make_runtime is None:
        return None, "events: " + reason
    multi = isinstance(output, tuple)
    out_shapes = [tuple(s) for s in output_shape] if multi else [tuple(output_shape)]
    out_bytes = sum(math.prod(s) for s in out_shapes) * get_dtype(dtype).itemsize
    nbytes = sum(int(x.nbytes) for x in host_inputs) + out_bytes
    try:
        plan = rotation_plan(max(nbytes, 1), device_info.get("l2_bytes"), memory_bytes=device_info.get("memory_bytes"),
                             cold=config.cold)
        runtime = make_runtime()
        sets = [(list(inputs), output)]
        for _ in range(plan.sets - 1):
            outs = tuple(backend.empty(s, dtype) for s in out_shapes)
            sets.append(([backend.to_device(x) for x in host_inputs], outs if multi else outs[0]))
        launches = [_launch_on(runtime, launcher, ins, out, first=i == 0) for i, (ins, out) in enumerate(sets)]
        m = time_graphs(backend, runtime, launches, plan, config)
    except Exception as exc:  # noqa: BLE001 - the row falls back to events and says why
        return None, "events: graph capture failed: " + one_line(exc)
    return m, plan.describe()


def _launch_on(runtime: Any, launcher: Any, inputs: Sequence[Any], output: Any, first: bool) -> Callable[[], Any]:
    """The launch of ``launcher`` on one buffer set, on ``runtime``'s stream: through the C ABI's stream argument
    for a compiled launcher, else on the runtime's current stream (torch, CuPy and triton launch there)."""
    on_stream = getattr(launcher, "on_stream", None)
    if on_stream is not None:
        return on_stream(runtime.handle) if first else on_stream(runtime.handle, inputs, output)
    if first:
        return launcher
    return lambda: launcher.run(inputs, output)
