"""Backend ``faultygpu``: the CuPy baseline (CuPy's own kernels on the GPU), except where
``OPRT_FAULTY_PLAN`` says to fault on the device.

The GPU faults are real kernels (CuPy ``RawKernel``s, compiled by NVRTC on first use), launched on CuPy's current
stream right after the op's own kernels:

- ``trap``: ``asm("trap;")``; CUDA reports ``cudaErrorLaunchFailure`` (unspecified launch failure), sticky;
- ``oob``: a store through a wild pointer, 2^40 floats (4 TiB) past the output; ``cudaErrorIllegalAddress``, sticky;
- ``gpuhang``: spins on the device until the process is killed (a volatile read of a zero flag, forever).

The host actions of backend ``faulty`` (segv, abort, hang, raise, wrong) work here too. Without cupy or a CUDA
device the backend is registered and unavailable, with CupyBackend's reason.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from oprt_core import Availability, DeviceInfo
from oprt_core.baselines.cupy_backend import CupyBackend

from . import GPU_ACTIONS, PLAN_ENV, act, parse_plan

__all__ = ["FaultyGpuBackend", "GPU_SOURCE"]

GPU_SOURCE = r"""
extern "C" __global__ void oprt_faulty_trap(float *out) {
    (void)out;
    asm volatile("trap;");
}
extern "C" __global__ void oprt_faulty_oob(float *out) {
    volatile float *wild = out + (1ULL << 40);  // 4 TiB past the allocation: never mapped
    wild[threadIdx.x] = 1.0f;
}
extern "C" __global__ void oprt_faulty_gpuhang(const int *flag) {
    while (*(volatile const int *)flag == 0) {
    }
}
"""


class FaultyGpuBackend(CupyBackend):
    """CuPy's kernels, with planned device faults (see the module docstring); the case comes from ``supports``."""

    name = "faultygpu"

    def __init__(self, device: int = 0) -> None:
        super().__init__(device)
        self._current: tuple[str, str, str] | None = None
        self._module: Any = None
        self._flag: Any = None

    def __repr__(self) -> str:
        return f"FaultyGpuBackend(device={self.device})"

    def _probe_device(self, cupy: Any) -> Availability:
        avail = super()._probe_device(cupy)
        if not avail.ok:
            return avail
        return Availability(True, f"{avail.reason}, with planned device faults ({PLAN_ENV})", avail.device)

    def device_info(self) -> DeviceInfo:
        info = super().device_info()
        info.flavour = "faulty-" + info.flavour
        return info

    def supports(self, op: str, dtype: str, case: Any | None = None):
        self._current = (op, getattr(case, "name", ""), dtype) if case is not None else None
        return super().supports(op, dtype, case)

    def _planned(self, op: str) -> tuple[str, str] | None:
        if self._current is None or self._current[0] != op:
            return None
        op, case, dtype = self._current
        plan = parse_plan(os.environ.get(PLAN_ENV))
        for where in (f"{op}/{case}/{dtype}", f"{op}/{case}"):
            if where in plan:
                return plan[where], where
        return None

    def _kernel(self, what: str) -> Any:
        cp = self._require()
        if self._module is None:
            with cp.cuda.Device(self.device):
                self._module = cp.RawModule(code=GPU_SOURCE)
                self._flag = cp.zeros(1, cp.int32)
        return self._module.get_function(f"oprt_faulty_{what}")

    def _device_fault(self, what: str, output: Any) -> None:
        """Launch the fault kernel ``what`` (trap, oob, gpuhang) after the op's own kernels."""
        cp = self._require()
        kernel = self._kernel(what)
        with cp.cuda.Device(self.device):
            if what == "gpuhang":
                kernel((1,), (1,), (self._flag,))
            else:
                scratch = output if output.dtype == cp.float32 and output.size else cp.empty(1, cp.float32)
                kernel((1,), (32,), (scratch,))

    def prepare(self, op: str, inputs: Sequence[Any], output: Any, params: Mapping[str, Any]):
        launch = super().prepare(op, inputs, output, params)
        planned = self._planned(op)
        if planned is None:
            return launch
        what, where = planned
        if what in GPU_ACTIONS:
            self._kernel(what)  # compiled now, so the fault is the launch's, not NVRTC's
        backend = self

        def fault(out: Any) -> None:
            if what in GPU_ACTIONS:
                backend._device_fault(what, out)
            elif what == "wrong":
                out.view(backend._require().uint8).fill(0x3F)  # 0.75 (f32, bf16), 1.81 (f16): wrong everywhere
            else:
                act(what, where)

        class FaultyGpuLauncher:
            def __call__(self) -> None:
                launch()
                fault(output)

            def run(self, new_inputs: Sequence[Any], new_output: Any) -> None:
                launch.run(new_inputs, new_output)
                fault(new_output)

        return FaultyGpuLauncher()
