"""Sticky device errors: the errors after which a device context is unusable, and what a row says of them.

After an illegal address, a trap or an uncorrectable ECC error every later call in the process fails with the same
error (CUDA's driver_types.h: "the process must be terminated and relaunched"), so a backend's worker that met one
is replaced before its next row (:mod:`oprt_bench.worker`). How an error is recognised, most structured first:

1. oprt's compiled backends: the C status ``OPRT_STATUS_DEVICE_FAULT``, raised as
   :class:`oprt_core.errors.DeviceFaultError` (the library maps the runtime's sticky codes itself);
2. an exception carrying the runtime's code (cupy's ``CUDARuntimeError`` / ``CUDADriverError`` ``.status``);
3. the error's name in the message: runtime (``cudaErrorIllegalAddress``), driver (``CUDA_ERROR_ILLEGAL_ADDRESS``)
   or MACA (``mcErrorIllegalAddress``), as torch, cupy, triton and CUDA Python name them;
4. the runtime's own text (``an illegal memory access was encountered``), which torch alone often gives
   (``CUDA error: an illegal memory access was encountered``).

A device error none of these knows is caught by the worker's probe instead: after any ``error`` row it
synchronizes the backend, and a failing synchronize replaces the worker too. docs/reliability.md lists the table.
"""

from __future__ import annotations

from dataclasses import dataclass

from oprt_core.errors import BackendError, DeviceFaultError

__all__ = ["StickyError", "STICKY_ERRORS", "STICKY_TAG", "sticky_error", "error_in_text", "sticky_message", "is_sticky"]


@dataclass(frozen=True)
class StickyError:
    """One sticky runtime error: ``fault`` names it in a row; ``code`` is its number in cudaError_t, CUresult and
    MACA's mcError_t alike; ``runtime`` its cudaError_t name (MACA's is ``mc`` + the same suffix), ``driver`` its
    CUresult name, ``text`` what cudaGetErrorString says."""

    fault: str
    code: int
    runtime: str
    driver: str
    text: str

    @property
    def maca(self) -> str:
        return "mc" + self.runtime[len("cuda"):]


# the codes CUDA documents as leaving the process unusable, and the uncorrectable ECC and NVLink errors; the
# same list as gpu_error_is_sticky() in oprt_shared/runtime.cu
STICKY_ERRORS: tuple[StickyError, ...] = (
    StickyError("uncorrectable ECC error", 214, "cudaErrorECCUncorrectable", "CUDA_ERROR_ECC_UNCORRECTABLE",
                "uncorrectable ECC error encountered"),
    StickyError("uncorrectable NVLink error", 220, "cudaErrorNvlinkUncorrectable", "CUDA_ERROR_NVLINK_UNCORRECTABLE",
                "uncorrectable NVLink error detected"),
    StickyError("contained hardware error", 226, "cudaErrorContained", "CUDA_ERROR_CONTAINED",
                "invalid access of peer GPU memory over nvlink or a hardware error"),
    StickyError("illegal memory access", 700, "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS",
                "an illegal memory access was encountered"),
    StickyError("launch timeout", 702, "cudaErrorLaunchTimeout", "CUDA_ERROR_LAUNCH_TIMEOUT",
                "the launch timed out and was terminated"),
    StickyError("context destroyed", 709, "cudaErrorContextIsDestroyed", "CUDA_ERROR_CONTEXT_IS_DESTROYED",
                "context is destroyed"),
    StickyError("device-side assert", 710, "cudaErrorAssert", "CUDA_ERROR_ASSERT", "device-side assert triggered"),
    StickyError("hardware stack error", 714, "cudaErrorHardwareStackError", "CUDA_ERROR_HARDWARE_STACK_ERROR",
                "hardware stack error"),
    StickyError("illegal instruction", 715, "cudaErrorIllegalInstruction", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
                "an illegal instruction was encountered"),
    StickyError("misaligned address", 716, "cudaErrorMisalignedAddress", "CUDA_ERROR_MISALIGNED_ADDRESS",
                "misaligned address"),
    StickyError("invalid address space", 717, "cudaErrorInvalidAddressSpace", "CUDA_ERROR_INVALID_ADDRESS_SPACE",
                "operation not supported on global/shared address space"),
    StickyError("invalid program counter", 718, "cudaErrorInvalidPc", "CUDA_ERROR_INVALID_PC",
                "invalid program counter"),
    StickyError("launch failure (a trap or another kernel exception)", 719, "cudaErrorLaunchFailure",
                "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"),
    StickyError("tensor memory leak", 721, "cudaErrorTensorMemoryLeak", "CUDA_ERROR_TENSOR_MEMORY_LEAK",
                "tensor memory not completely freed"),
    StickyError("MPS client terminated", 810, "cudaErrorMpsClientTerminated", "CUDA_ERROR_MPS_CLIENT_TERMINATED",
                "the MPS client has been terminated by the server"),
    StickyError("external device error", 911, "cudaErrorExternalDevice", "CUDA_ERROR_EXTERNAL_DEVICE",
                "an async error has occured in external entity outside of cuda"),
)
_BY_CODE = {e.code: e for e in STICKY_ERRORS}
# what oprt-bench writes into a sticky row's message, after the fault's name; the worker looks for it
STICKY_TAG = "(sticky device error"
_DEVICE_FAULT = StickyError("device fault", 0, "", "OPRT_STATUS_DEVICE_FAULT", "")


def error_in_text(text: str) -> StickyError | None:
    """The sticky error a text names (its runtime, driver or MACA name; else its runtime text), None if none."""
    low = text.lower()
    for e in STICKY_ERRORS:  # names first: a name is exact, a text may be a substring of another error's
        if e.runtime.lower() in low or e.driver.lower() in low or e.maca.lower() in low:
            return e
    for e in STICKY_ERRORS:
        if e.text.lower() in low:
            return e
    return None


def sticky_error(exc: BaseException) -> StickyError | None:
    """The sticky error ``exc`` is (or is caused by), None for any other error."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:  # the exception and its causes
        seen.add(id(current))
        if isinstance(current, DeviceFaultError):
            return error_in_text(str(current)) or _DEVICE_FAULT
        code = getattr(current, "status", None)
        if not isinstance(current, BackendError) and isinstance(code, int) and code in _BY_CODE:
            return _BY_CODE[code]
        found = error_in_text(f"{type(current).__name__}: {current}")
        if found is not None:
            return found
        current = current.__cause__ or current.__context__
    return None


def sticky_message(error: StickyError, text: str) -> str:
    """A sticky row's message: ``illegal memory access (sticky device error): CUDARuntimeError: ...``."""
    return f"{error.fault} {STICKY_TAG}): {text}"


def is_sticky(message: str) -> bool:
    """Whether a row's error message names a sticky error: the tag oprt-bench wrote, or an error of the table
    named in words (a message from elsewhere: a backend's own text)."""
    return STICKY_TAG in message or "OPRT_STATUS_DEVICE_FAULT" in message or error_in_text(message) is not None
