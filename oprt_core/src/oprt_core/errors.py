"""The exception hierarchy of oprt.

Every error a user can cause derives from :class:`OprtError`; the CLI turns any of
them into one line on stderr and a non-zero exit.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "OprtError",
    "InvalidArgumentError",
    "UnknownNameError",
    "PluginLoadError",
    "BackendUnavailable",
    "UnsupportedCase",
    "BackendError",
    "NullPointerError",
    "ShapeError",
    "StrideError",
    "ParamError",
    "UnsupportedDtypeError",
    "UnsupportedCaseError",
    "WorkspaceError",
    "DeviceError",
    "DeviceFaultError",
    "DeviceOutOfMemoryError",
    "NoDeviceError",
    "BadDeviceError",
    "OverlapError",
    "AbiMismatchError",
]


class OprtError(Exception):
    """Base class of every error oprt raises on purpose."""


class InvalidArgumentError(OprtError, ValueError):
    """A caller passed a bad value: wrong shape, axis, param type or value."""


class UnknownNameError(InvalidArgumentError):
    """An op, backend, dtype, param or case-set name that does not exist.

    The message lists the valid choices, then ``hint`` where one is given (how to install a known backend).
    """

    def __init__(self, kind: str, name: object, choices: Iterable[str], hint: str | None = None):
        self.kind = kind
        self.name = name
        self.choices = sorted(choices)
        listed = ", ".join(self.choices) if self.choices else "(none)"
        super().__init__(f"unknown {kind} {name!r}; valid choices: {listed}" + (f"; {hint}" if hint else ""))


class PluginLoadError(OprtError):
    """A plugin (entry point) failed to import or to register its objects."""

    def __init__(self, name: str, distribution: str | None, cause: BaseException):
        self.name = name
        self.distribution = distribution
        self.cause = cause
        dist = f" from {distribution}" if distribution else ""
        super().__init__(f"plugin {name!r}{dist} failed to load: {type(cause).__name__}: {cause}")


class BackendUnavailable(OprtError):
    """A backend exists but cannot run here (no device, missing library...)."""

    def __init__(self, backend: str, reason: str):
        self.backend = backend
        self.reason = reason
        super().__init__(f"backend {backend!r} is unavailable: {reason}")


class UnsupportedCase(OprtError):
    """A backend does not implement this op, dtype or layout (reported apart from failures)."""


class BackendError(OprtError):
    """A backend call returned a failure status.

    ``status`` is the oprt.h status code (or None for pure-Python backends) and
    ``message`` the library's own last-error text.
    """

    def __init__(self, backend: str, status: int | None, message: str, status_name: str | None = None):
        self.backend = backend
        self.status = status
        self.status_name = status_name
        self.message = message
        code = f" [{status_name or status}]" if status is not None else ""
        # not super(): in NoDeviceError the next class in the MRO is BackendUnavailable(backend, reason)
        OprtError.__init__(self, f"{backend}{code}: {message}")


class NullPointerError(BackendError, InvalidArgumentError):
    """OPRT_STATUS_NULL_POINTER."""


class ShapeError(BackendError, InvalidArgumentError):
    """OPRT_STATUS_BAD_SHAPE."""


class StrideError(BackendError, InvalidArgumentError):
    """OPRT_STATUS_BAD_STRIDES."""


class ParamError(BackendError, InvalidArgumentError):
    """OPRT_STATUS_BAD_PARAM."""


class UnsupportedDtypeError(BackendError, UnsupportedCase):
    """OPRT_STATUS_UNSUPPORTED_DTYPE."""


class UnsupportedCaseError(BackendError, UnsupportedCase):
    """OPRT_STATUS_UNSUPPORTED_CASE."""


class WorkspaceError(BackendError, InvalidArgumentError):
    """OPRT_STATUS_INSUFFICIENT_WORKSPACE."""


class DeviceError(BackendError):
    """OPRT_STATUS_DEVICE_ERROR: the runtime reported an error (its text is kept)."""


class DeviceFaultError(DeviceError):
    """OPRT_STATUS_DEVICE_FAULT: a sticky device error (illegal address or instruction, trap or other launch
    failure, device-side assert, uncorrectable ECC...): the device context is unusable, every later call in
    this process fails too; only a new process can use the device again (oprt-bench replaces its worker)."""


class DeviceOutOfMemoryError(BackendError, MemoryError):
    """OPRT_STATUS_OUT_OF_MEMORY."""


class NoDeviceError(BackendError, BackendUnavailable):
    """OPRT_STATUS_NO_DEVICE."""

    def __init__(self, backend: str, status: int | None, message: str, status_name: str | None = None):
        BackendError.__init__(self, backend, status, message, status_name)
        self.reason = message


class BadDeviceError(BackendError, InvalidArgumentError):
    """OPRT_STATUS_BAD_DEVICE: a device index out of range."""


class OverlapError(BackendError, InvalidArgumentError):
    """OPRT_STATUS_OVERLAP: ``out`` shares memory with an input in a way the op does not allow (anything but
    exactly that input, where the op runs in place). Python-side checks raise it too, with ``status`` None."""


class AbiMismatchError(OprtError, ImportError):
    """A compiled backend's extension was built against another oprt.h than the installed oprt-core's
    (an ImportError too: the extension cannot be used)."""
