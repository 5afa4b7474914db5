"""Backend ``faulty``: the numpy backend, except where ``OPRT_FAULTY_PLAN`` says to crash, hang or raise;
backend ``faultygpu`` (:mod:`oprt_faultyplugin.gpu`): CuPy on the GPU, with device faults (trap, oob, gpuhang) too.

The plan is read at each call (not at import), so a test sets it in the environment of the
process (or worker) that runs the backend. See this package's README.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from oprt_core import Availability, DeviceInfo, hookimpl
from oprt_core.numpy_backend import NumpyBackend

__all__ = ["PLAN_ENV", "ACTIONS", "GPU_ACTIONS", "FaultyBackend", "parse_plan", "act", "oprt_register_backends"]

PLAN_ENV = "OPRT_FAULTY_PLAN"
GPU_ACTIONS = ("trap", "oob", "gpuhang")  # faultygpu only: backend faulty ignores them
ACTIONS = ("segv", "abort", "hang", "raise", "wrong", *GPU_ACTIONS)


def parse_plan(text: str | None) -> dict[str, str]:
    """``"copy/1000:segv, relu/1000/f16:hang"`` -> ``{"copy/1000": "segv", "relu/1000/f16": "hang"}``."""
    plan: dict[str, str] = {}
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        where, sep, what = part.rpartition(":")
        if not sep or what not in ACTIONS:
            raise ValueError(f"{PLAN_ENV}: bad entry {part!r}; expected WHERE:{'|'.join(ACTIONS)}")
        plan[where.strip()] = what
    return plan


def act(what: str, where: str) -> None:
    """Carry out a host action (segv, abort, hang, raise) in this process."""
    if what == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
        time.sleep(10)  # the signal is delivered before this returns
    elif what == "abort":
        os.kill(os.getpid(), signal.SIGABRT)
        time.sleep(10)
    elif what == "hang":
        while True:
            time.sleep(3600)
    elif what == "raise":
        raise RuntimeError(f"faulty: planned failure at {where}")


class FaultyBackend(NumpyBackend):
    """numpy, with planned faults. The case comes from ``supports(op, dtype, case)``, which the runner
    calls before ``prepare``; the fault fires when the prepared launcher runs (the kernel)."""

    name = "faulty"

    def __init__(self) -> None:
        super().__init__()
        self._current: tuple[str, str, str] | None = None

    @staticmethod
    def plan() -> dict[str, str]:
        return parse_plan(os.environ.get(PLAN_ENV))

    def _planned(self, op: str) -> tuple[str, str] | None:
        if self._current is None or self._current[0] != op:
            return None
        op, case, dtype = self._current
        plan = self.plan()
        for where in (f"{op}/{case}/{dtype}", f"{op}/{case}"):
            if where in plan and plan[where] not in GPU_ACTIONS:
                return plan[where], where
        return None

    def availability(self) -> Availability:
        what = self.plan().get("availability")
        if what:
            act(what, "availability")
        return Availability(True, "numpy with planned faults", "faulty host")

    def device_info(self) -> DeviceInfo:
        what = self.plan().get("device_info")
        if what:
            act(what, "device_info")
        info = super().device_info()
        info.flavour = "faulty-" + info.flavour
        return info

    def copy_probe(self, nbytes: int):
        what = self.plan().get("calibration")
        if what:
            act(what, "calibration")
        return super().copy_probe(nbytes)

    def supports(self, op: str, dtype: str, case: Any | None = None):
        self._current = (op, getattr(case, "name", ""), dtype) if case is not None else None
        return super().supports(op, dtype, case)

    def prepare(self, op: str, inputs: Sequence[np.ndarray], output: np.ndarray, params: Mapping[str, Any]):
        launch = super().prepare(op, inputs, output, params)
        planned = self._planned(op)
        if planned is None:
            return launch
        what, where = planned

        class FaultyLauncher:
            def __call__(self) -> None:
                launch()
                if what == "wrong":
                    output[...] = 1
                else:
                    act(what, where)

            def run(self, new_inputs: Sequence[np.ndarray], new_output: np.ndarray) -> None:
                launch.run(new_inputs, new_output)
                act(what, where)

        return FaultyLauncher()


@hookimpl
def oprt_register_backends(register) -> None:
    register(FaultyBackend())
    from oprt_core.operators import equip

    from .gpu import FaultyGpuBackend

    register(equip(FaultyGpuBackend()))  # oprt-core's CuPy baseline underneath, with cupy's implementations
