"""A CUDA error raised as RuntimeError by torch / cupy / triton is sticky too: the worker is replaced."""

from __future__ import annotations

import numpy as np
import pytest
from bench_helpers import make_registry

from oprt_bench.sweep import Runners, SweepOptions, make_plan, run_sweep
from oprt_bench.worker import is_sticky
from oprt_core.numpy_backend import NumpyBackend


@pytest.mark.parametrize("message, sticky", [
    ("DeviceError: sticky (8): an illegal memory access was encountered", True),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", True),
    ("CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory access was encountered", True),
    ("RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered", True),
    ("RuntimeError: kernel launch failed: test double", False),
    ("", False),
])
def test_is_sticky(message, sticky):
    assert is_sticky(message) is sticky


class TorchStyleStickyBackend(NumpyBackend):
    name = "torchsticky"

    def prepare(self, op, inputs, output, params):
        if output.shape == (1000,) and output.dtype == np.float32:
            raise RuntimeError("CUDA error: an illegal memory access was encountered\nCUDA kernel errors ...")
        return super().prepare(op, inputs, output, params)


def test_a_cuda_runtime_error_replaces_the_worker():
    reg = make_registry(TorchStyleStickyBackend())
    plan = make_plan(reg, SweepOptions(ops="copy", backends="torchsticky", baseline="none", dtypes="f32,f16",
                                       cases="smoke", mode="test", case_timeout_s=10))
    rows: list[dict] = []
    with Runners(plan) as runners:
        run_sweep(plan, rows.append, runners=runners)
        worker = runners.workers["torchsticky"]
        assert worker.restarts_after_device_error == 1 and worker.starts == 2
    assert [r["status"] for r in rows] == ["error", "ok", "ok", "ok"]
