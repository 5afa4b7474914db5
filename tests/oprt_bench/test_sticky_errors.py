"""Sticky device errors (oprt_bench.faults): each CUDA/MACA error after which the context is unusable is
recognised from the C status, the exception's code, its name or its text; the worker is then replaced and
the later rows of the backend are ok. Other errors keep the worker, unless a synchronize afterwards fails."""

from __future__ import annotations

import numpy as np
import pytest
from bench_helpers import make_registry

from oprt_bench.faults import STICKY_ERRORS, error_in_text, is_sticky, sticky_error
from oprt_bench.sweep import Runners, SweepOptions, make_plan, run_sweep
from oprt_core.errors import DeviceError, DeviceFaultError
from oprt_core.numpy_backend import NumpyBackend

STICKY_NAMES = [n for e in STICKY_ERRORS for n in (e.runtime, e.driver, e.maca)]
# errors of the same runtimes that leave the context usable
NOT_STICKY = ["cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", "mcErrorMemoryAllocation",
              "cudaErrorLaunchOutOfResources", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "cudaErrorInvalidValue",
              "CUDA_ERROR_INVALID_VALUE", "cudaErrorInvalidConfiguration", "cudaErrorNoKernelImageForDevice",
              "CUDA_ERROR_INVALID_PTX", "cudaErrorInvalidPitchValue", "cudaErrorNotReady", "mcErrorInvalidValue"]


@pytest.mark.parametrize("name", STICKY_NAMES)
def test_every_sticky_name_is_sticky(name):
    message = f"RuntimeError: {name}: something went wrong"
    assert is_sticky(message) and is_sticky(message.lower())
    assert error_in_text(message) is next(e for e in STICKY_ERRORS if name in (e.runtime, e.driver, e.maca))


@pytest.mark.parametrize("name", NOT_STICKY)
def test_other_error_names_are_not_sticky(name):
    assert not is_sticky(f"CUDARuntimeError: {name}: failed")
    assert sticky_error(RuntimeError(f"{name}: failed")) is None


@pytest.mark.parametrize("error", STICKY_ERRORS, ids=lambda e: e.runtime)
def test_the_runtime_text_alone_is_sticky(error):
    """torch says ``CUDA error: <cudaGetErrorString>`` without the error's name."""
    assert error_in_text(f"RuntimeError: CUDA error: {error.text}\nCUDA kernel errors might be ...") is error


@pytest.mark.parametrize("message, sticky", [
    ("DeviceError: sticky (8): an illegal memory access was encountered", True),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", True),
    ("CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory access was encountered", True),
    ("CUDARuntimeError: cudaErrorLaunchFailure: unspecified launch failure", True),
    ("RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered", True),
    ("RuntimeError: CUDA error: device-side assert triggered", True),
    ("RuntimeError: CUDA error: uncorrectable ECC error encountered", True),
    ("CUDADriverError: CUDA_ERROR_ILLEGAL_INSTRUCTION: an illegal instruction was encountered", True),
    ("RuntimeError: mcErrorIllegalAddress: illegal memory access", True),
    ("illegal memory access (sticky device error): DeviceFaultError: nvidia [OPRT_STATUS_DEVICE_FAULT]: x", True),
    ("RuntimeError: CUDA error: out of memory", False),
    ("RuntimeError: CUDA error: too many resources requested for launch", False),
    ("DeviceError: nvidia [OPRT_STATUS_DEVICE_ERROR]: invalid resource handle", False),
    ("RuntimeError: kernel launch failed: test double", False),
    ("", False),
])
def test_is_sticky(message, sticky):
    assert is_sticky(message) is sticky


class CUDARuntimeError(RuntimeError):
    """As cupy's: the cudaError_t code in ``.status``."""

    def __init__(self, status: int, text: str):
        self.status = status
        super().__init__(text)


def test_sticky_error_prefers_the_structured_signal():
    fault = DeviceFaultError("nvidia", 13, "k: unspecified launch failure (cudaErrorLaunchFailure; sticky)",
                             "OPRT_STATUS_DEVICE_FAULT")
    assert sticky_error(fault).code == 719
    assert sticky_error(DeviceFaultError("host", 13, "gone", "OPRT_STATUS_DEVICE_FAULT")).fault == "device fault"
    assert sticky_error(DeviceError("nvidia", 8, "invalid resource handle", "OPRT_STATUS_DEVICE_ERROR")) is None
    assert sticky_error(CUDARuntimeError(715, "no name here")).fault == "illegal instruction"
    assert sticky_error(CUDARuntimeError(2, "cudaErrorMemoryAllocation: out of memory")) is None
    # oprt statuses are not CUDA codes: a BackendError's .status is never looked up in the table
    assert sticky_error(DeviceError("x", 700, "plain", "S")) is None
    try:
        try:
            raise CUDARuntimeError(700, "cudaErrorIllegalAddress: an illegal memory access was encountered")
        except CUDARuntimeError as inner:
            raise ValueError("copying the result back failed") from inner
    except ValueError as outer:
        assert sticky_error(outer).fault == "illegal memory access"  # found on the cause


class TorchStyleStickyBackend(NumpyBackend):
    name = "torchsticky"

    def prepare(self, op, inputs, output, params):
        if output.shape == (1000,) and output.dtype == np.float32:
            raise RuntimeError("CUDA error: an illegal memory access was encountered\nCUDA kernel errors ...")
        return super().prepare(op, inputs, output, params)


class CodeOnlyStickyBackend(NumpyBackend):
    """A cupy-style exception carrying a sticky code (cudaErrorIllegalInstruction) and no name."""

    name = "codesticky"

    def prepare(self, op, inputs, output, params):
        if output.shape == (1000,) and output.dtype == np.float32:
            raise CUDARuntimeError(715, "the kernel stopped")
        return super().prepare(op, inputs, output, params)


_BROKEN = []  # per worker process: set once the fake context is broken


class ProbeStickyBackend(NumpyBackend):
    """An error the table does not know, after which the backend cannot synchronize (found by the probe)."""

    name = "probesticky"

    def prepare(self, op, inputs, output, params):
        if _BROKEN:
            raise RuntimeError("vendor error 4242: context unusable")
        if output.shape == (1000,) and output.dtype == np.float32:
            _BROKEN.append(True)
            raise RuntimeError("vendor error 4242: the kernel went wrong")
        return super().prepare(op, inputs, output, params)

    def synchronize(self) -> None:
        if _BROKEN:
            raise RuntimeError("vendor error 4242: context unusable")


class PlainErrorBackend(NumpyBackend):
    """An ordinary error (bad input, a refused launch): the worker stays."""

    name = "plainerror"

    def prepare(self, op, inputs, output, params):
        if output.shape == (1000,) and output.dtype == np.float32:
            raise RuntimeError("CUDA error: out of memory")
        return super().prepare(op, inputs, output, params)


def _sweep(backend) -> tuple[list[dict], int, int]:
    reg = make_registry(backend)
    plan = make_plan(reg, SweepOptions(ops="copy", backends=backend.name, baseline="none", dtypes="f32,f16",
                                       cases="smoke", mode="test", case_timeout_s=10))
    rows: list[dict] = []
    with Runners(plan) as runners:
        run_sweep(plan, rows.append, runners=runners)
        worker = runners.workers[backend.name]
        return rows, worker.restarts_after_device_error, worker.starts


@pytest.mark.parametrize("backend, fault", [
    (TorchStyleStickyBackend(), "illegal memory access (sticky device error; worker replaced): RuntimeError: CUDA"),
    (CodeOnlyStickyBackend(), "illegal instruction (sticky device error; worker replaced): CUDARuntimeError: "
                              "the kernel stopped"),
    (ProbeStickyBackend(), "device context unusable (sticky device error, found by a synchronize after the error; "
                           "worker replaced): RuntimeError: vendor error 4242: the kernel went wrong; then "
                           "RuntimeError: vendor error 4242: context unusable"),
], ids=lambda v: getattr(v, "name", ""))
def test_a_sticky_error_replaces_the_worker(backend, fault):
    rows, restarts, starts = _sweep(backend)
    assert (restarts, starts) == (1, 2)
    assert [r["status"] for r in rows] == ["error", "ok", "ok", "ok"]
    assert rows[0]["message"].startswith(fault), rows[0]["message"]


def test_an_ordinary_error_keeps_the_worker():
    rows, restarts, starts = _sweep(PlainErrorBackend())
    assert (restarts, starts) == (0, 1)
    assert [r["status"] for r in rows] == ["error", "ok", "ok", "ok"]
    assert rows[0]["message"] == "RuntimeError: CUDA error: out of memory"


class StickyCalibrationBackend(NumpyBackend):
    """Its bandwidth probe meets an illegal address: the calibration records it, the worker leaves."""

    name = "stickycal"

    def copy_probe(self, nbytes):
        raise CUDARuntimeError(700, "cudaErrorIllegalAddress: an illegal memory access was encountered")


def test_a_sticky_error_in_calibration_replaces_the_worker():
    from oprt_bench.model import CalibrationTask
    from oprt_bench.worker import BackendWorker, worker_source

    w = BackendWorker(worker_source(make_registry(StickyCalibrationBackend()), "stickycal", ["copy"]))
    try:
        cal, _timer = w.call("calibrate", CalibrationTask({}, cold=False), 60)
        assert cal.error.startswith("illegal memory access (sticky device error; worker replaced): "
                                    "CUDARuntimeError: cudaErrorIllegalAddress"), cal.error
        assert not w.alive and w.restarts_after_device_error == 1
        w.call("calibrate", CalibrationTask({}, cold=False), 60)  # the next command gets a fresh worker
        assert w.starts == 2
    finally:
        w.close()
