"""CompiledBackend: the one generic backend that drives, through cffi, any library implementing oprt.h.

A compiled backend package (oprt_nvidia, oprt_metax, ...) builds its kernels and a
cffi extension, then registers ``CompiledBackend("nvidia", loader)`` where
``loader`` is a zero-argument callable returning an object with ``.ffi`` and
``.lib``: the cffi API-mode extension module itself, or a namespace around an
ABI-mode ``ffi.dlopen`` (as the tests do with the host implementation).

Construction is cheap: nothing is imported or initialised until the first use
(``availability()``, an allocation, ``prepare``...); the load is then cached,
and so is a load failure.

Device memory is held by :class:`DeviceArray` views: a pointer to element
``[0, ..., 0]``, a shape and strides in elements (negative and zero strides
allowed), and an ``owner`` keeping the allocation alive.

Every ``oprt_status_t`` a library returns goes through :meth:`CompiledBackend.check`,
which raises the matching exception class of :mod:`oprt_core.errors` with the
library's own ``oprt_last_error_message()`` text.

An op package may ship its kernels as a shared library of its own and register :func:`c_library` for a backend:
the op's four entry points are then taken from that library (cffi ABI mode), its statuses read with that
library's own error text, while memory, events and the device stay the backend library's.
"""

from __future__ import annotations

import ctypes.util
import functools
import math
import os
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import errors as E
from .backend import CUDA_EVENT_RESOLUTION_MS, Availability, DeviceInfo, Support
from .cabi import STATUS_NAMES, abi_version, cdef, check_abi
from .cdecl import OPS_BEGIN, OPS_END, c_abi_ops, c_params, entry_points, prototypes
from .device_array import BF16_TYPESTR, DeviceArray, RawBuffer, contiguous_strides, element_span
from .dlpack import KDL_CUDA
from .dtypes import DTYPES, DType, dtype_of, get_dtype
from .errors import (
    AbiMismatchError,
    BackendError,
    BackendUnavailable,
    InvalidArgumentError,
    UnknownNameError,
    UnsupportedCase,
)
from .operators import with_role
from .operators._shared import OPRT_AXIS_ALL
from .spec import as_outputs

__all__ = ["DeviceArray", "CompiledBackend", "CompiledLauncher", "CompiledEvent", "STATUS_EXCEPTIONS",
           "raise_for_status", "OPRT_AXIS_ALL", "FLUSH_MIN_BYTES", "DriverHint", "DRIVER_HINTS", "no_device_reason",
           "c_abi_impl", "c_library", "CLibraryImpl"]

FLUSH_MIN_BYTES = 8 << 20
_MAX_NDIM = 8
_H2D, _D2H, _D2D = 0, 1, 2

# oprt_status_t -> exception class (every code but SUCCESS; unknown codes map to BackendError)
STATUS_EXCEPTIONS: dict[int, type[BackendError]] = {
    1: E.NullPointerError,
    2: E.ShapeError,
    3: E.StrideError,
    4: E.ParamError,
    5: E.UnsupportedDtypeError,
    6: E.UnsupportedCaseError,
    7: E.WorkspaceError,
    8: E.DeviceError,
    9: E.DeviceOutOfMemoryError,
    10: E.NoDeviceError,
    11: E.BadDeviceError,
    12: E.OverlapError,
    13: E.DeviceFaultError,
}
assert set(STATUS_EXCEPTIONS) == set(STATUS_NAMES) - {0}, "oprt.h statuses and STATUS_EXCEPTIONS disagree"


@dataclass(frozen=True)
class DriverHint:
    """What a vendor's driver is called and how to see whether it is there, for availability reasons that say
    what is missing. Every field but ``vendor`` may be empty (then that probe or advice is left out).

    :param vendor: the vendor's name in messages (``NVIDIA``)
    :param runtime: the runtime whose versions the library reports (``CUDA``)
    :param library: the driver's user-space library as ``ctypes.util.find_library`` names it (``cuda``)
    :param proc_path: a path the kernel driver creates when it is loaded (``/proc/driver/nvidia``)
    :param visible_env: the variable that hides devices from the runtime (``CUDA_VISIBLE_DEVICES``)
    :param tool: the command that lists the devices once the driver works (``nvidia-smi``)
    """

    vendor: str
    runtime: str = ""
    library: str = ""
    proc_path: str = ""
    visible_env: str = ""
    tool: str = ""


# by backend name, and by the library's flavour where one build serves another vendor's name (metax's nvcc-shim
# build runs on the CUDA runtime)
DRIVER_HINTS: dict[str, DriverHint] = {
    "nvidia": DriverHint("NVIDIA", "CUDA", "cuda", "/proc/driver/nvidia", "CUDA_VISIBLE_DEVICES", "nvidia-smi"),
    "metax": DriverHint("MetaX", "MACA", visible_env="MACA_VISIBLE_DEVICES", tool="mx-smi"),
}
_FLAVOUR_HINTS = {"nvcc": "nvidia", "nvcc-shim": "nvidia", "mxcc": "metax"}

# oprt_library_info_t.runtime_version as the GPU libraries write it: "runtime 13.0, driver 12.4" or
# "runtime 13.0, no driver"
_RUNTIME_VERSION = re.compile(r"runtime (\d+)\.(\d+), (?:no driver|driver (\d+)\.(\d+))")


def _driver_probes(hint: DriverHint) -> tuple[list[str], int]:
    """(what of the driver is absent here, in words; how many probes the hint has)."""
    missing = []
    if hint.library and ctypes.util.find_library(hint.library) is None:
        missing.append(f"lib{hint.library} is not on the library path")
    if hint.proc_path and not os.path.exists(hint.proc_path):
        missing.append(f"{hint.proc_path} does not exist")
    return missing, bool(hint.library) + bool(hint.proc_path)


def no_device_reason(name: str, raw: str, runtime_version: str = "", hint: DriverHint | None = None,
                     *, environ: Mapping[str, str] | None = None) -> str:
    """Why backend ``name`` finds no device, in words a user can act on: no driver installed, the driver too old
    for the runtime the library was built with (both versions named), or no device visible; ``raw``, the
    runtime's own message, follows in parentheses.

    ``runtime_version``: the library's (``oprt_library_info_t.runtime_version``: "runtime 13.0, driver 12.4" or
    "runtime 13.0, no driver"); ``hint``: the vendor's driver, probed (library, /proc entry) to say what is
    missing, and to decide "no driver" where the runtime does not say (every probe must fail)."""
    env = os.environ if environ is None else environ
    tail = f" ({raw})" if raw else ""
    vendor = hint.vendor if hint else name
    rt = f"{hint.runtime} " if hint and hint.runtime else ""
    m = _RUNTIME_VERSION.search(runtime_version or "")
    runtime = (int(m.group(1)), int(m.group(2))) if m else None
    driver = (int(m.group(3)), int(m.group(4))) if m and m.group(3) else None
    missing, probes = _driver_probes(hint) if hint else ([], 0)
    if (m and driver is None) or (not m and probes and len(missing) == probes):
        found = [f"the {rt}runtime {runtime[0]}.{runtime[1]} found none"] if runtime else []
        tool = f"; {hint.tool} then lists the GPUs" if hint and hint.tool else ""
        what = "; ".join(found + missing)
        return f"no {vendor} driver is installed ({what}): install the {vendor} driver{tool}{tail}"
    if runtime and driver and driver < runtime and (driver[0] < runtime[0] or "driver" in raw.lower()):
        d, r = f"{driver[0]}.{driver[1]}", f"{runtime[0]}.{runtime[1]}"
        return (f"the {vendor} driver is too old: it supports {rt}{d}, and this build of the {name} backend uses "
                f"{rt}runtime {r}; update the driver (or rebuild the backend with a {rt}toolkit {d} or older){tail}")
    if hint is None and driver is None:
        return f"no {name} device found{tail}"
    hidden = ""
    if hint and hint.visible_env and hint.visible_env in env:
        hidden = f"; {hint.visible_env}={env[hint.visible_env]!r} is set and may hide them"
    drv = f" (for {rt}{driver[0]}.{driver[1]})" if driver else ""
    return (f"no {vendor} device is visible: the driver{drv} is installed but lists no GPU{hidden}; check that the GPU "
            f"is present and given to this process (a container's --gpus){tail}")


def _cstr(ffi: Any, ptr: Any) -> str:
    if ptr == ffi.NULL:
        return ""
    return ffi.string(ptr).decode("utf-8", errors="replace")


def _field(ffi: Any, arr: Any) -> str:
    return ffi.string(arr).decode("utf-8", errors="replace")


def raise_for_status(ffi: Any, lib: Any, status: int, backend: str = "compiled") -> None:
    """Raise the exception class of ``status`` (with the library's last-error text) unless it is SUCCESS.

    Like pygit2's ``check_error``: the one place that turns a C status into Python.
    """
    status = int(status)
    if status == 0:
        return
    message = _cstr(ffi, lib.oprt_last_error_message())
    if not message:
        message = _cstr(ffi, lib.oprt_status_string(status)) or f"failed with status {status}"
    cls = STATUS_EXCEPTIONS.get(status, BackendError)
    raise cls(backend, status, message, STATUS_NAMES.get(status, f"status {status}"))


# ---------------------------------------------------------------------------------------------
# launchers and events


class CompiledLauncher:
    """A prepared op: the C descriptor (created once), its workspace, and the buffers it was prepared on.

    ``launcher()`` runs on those buffers; ``launcher.run(inputs, output)`` reuses the
    descriptor on other buffers with the same shapes, strides and dtype. The
    descriptor is destroyed when the launcher is garbage collected.
    """

    def __init__(self, backend: CompiledBackend, op: str, desc: Any, fn: Any, workspace: RawBuffer | None,
                 workspace_size: int, inputs: Sequence[DeviceArray], output: DeviceArray, params: dict[str, Any],
                 fn_ptrs: Any = None, absent: int = 0, ffi: Any = None, check: Callable[[int], None] | None = None):
        self.backend = backend
        # an op library's launcher (c_library): its own ffi, and its statuses read with its own error text
        self._ffi = ffi if ffi is not None else backend.ffi
        self._check = check if check is not None else backend.check
        self._library_op = check is not None
        self.absent = absent  # optional inputs left out (the last ones): a NULL pointer each at every launch
        self.op = op
        self.desc = desc
        self.params = params
        self.workspace = workspace
        self.workspace_size = workspace_size
        self.inputs = list(inputs)
        self.output = output
        self._fn = fn
        self._layout = self._layout_of(self.inputs, output)
        ffi = self._ffi
        self._ws_ptr = ffi.cast("void *", workspace.ptr) if workspace is not None else ffi.NULL
        self._args = self._make_args(self.inputs, output)
        self._cast = ffi.cast
        self._null = ffi.NULL
        # oprt_ptrs_<op> (API-mode extensions built by oprt_core.build): the launch with integer pointers
        self._fn_ptrs = fn_ptrs
        self._ws_int = workspace.ptr if workspace is not None else 0

    @staticmethod
    def _layout_of(inputs: Sequence[DeviceArray], output: Any) -> tuple:
        """The layout key of a launch; ``output`` one DeviceArray, or a multi-output op's tuple of them."""
        outs = output if isinstance(output, tuple) else (output,)
        layouts = tuple((o.shape, o.strides_elements, o.dtype_info.name) for o in outs)
        return (tuple((x.shape, x.strides_elements, x.dtype_info.name) for x in inputs),
                layouts if isinstance(output, tuple) else layouts[0])

    def _make_args(self, inputs: Sequence[DeviceArray], output: Any) -> tuple:
        ffi = self._ffi
        outs = output if isinstance(output, tuple) else (output,)
        return (self.desc, self._ws_ptr, self.workspace_size, *(ffi.cast("void *", o.ptr) for o in outs),
                *(ffi.cast("const void *", x.ptr) for x in inputs), *(ffi.NULL,) * self.absent, ffi.NULL)

    def _outputs(self, output: Any) -> Any:
        """The backend's view of a caller's output(s): a tuple for a multi-output launcher."""
        if isinstance(self.output, tuple):
            return tuple(self.backend._as_output(o) for o in output)
        return self.backend._as_output(output)

    def __call__(self) -> None:
        if self._library_op:
            self.backend._note_library_op(self.op)
        status = self._fn(*self._args)
        if status:
            self._check(status)

    def launch_ptrs(self, out_ptr: int, in_ptrs: Sequence[int]) -> None:
        """Launch on raw device pointers whose views have the layout this launcher was prepared for.

        For callers that have checked the layout themselves; no view is built and nothing is re-validated, so
        a wrong layout here is the caller's bug. (The op API's fast path keeps :meth:`ptr_call`'s callable.)"""
        status = self.ptr_call()(out_ptr, *in_ptrs)
        if status:
            self._check(status)

    def ptr_call(self) -> Any:
        """``call(out_ptr, *in_ptrs) -> status``: a launch on raw device pointers as one callable, for the op
        API's fast path (no method call, no argument count test per launch); integer pointers straight through
        ``oprt_ptrs_<op>`` where the library has it (no ``ffi.cast``, ~0.3 us each), else cast. A non-zero
        status is the caller's to turn into an exception (``backend.check``). The callable holds the descriptor
        but only the workspace's address: the caller keeps this launcher alive while it uses it (the op API's
        cache entries hold both).

        An op library's launcher (:func:`c_library`) returns a callable that raises itself, with that library's error
        text, and returns 0: the caller's ``backend.check`` would read the backend library's."""
        if self._library_op:
            fn, check, note, op = self._fn, self._check, self.backend._note_library_op, self.op
            cast, desc, ws, size, null = self._cast, self.desc, self._ws_ptr, self.workspace_size, self._null
            nulls = (null,) * self.absent

            def checked(out_ptr: int, *in_ptrs: int) -> int:
                note(op)
                status = fn(desc, ws, size, cast("void *", out_ptr), *[cast("const void *", p) for p in in_ptrs],
                            *nulls, null)
                if status:
                    check(status)
                return 0

            return checked
        fp = self._fn_ptrs
        cast, fn, desc, ws, size, null = self._cast, self._fn, self.desc, self._ws_ptr, self.workspace_size, self._null
        if self.absent:  # the left-out optional inputs' NULL pointers after the given ones
            zeros, nulls = (0,) * self.absent, (null,) * self.absent
            if fp is not None:
                ws_int = self._ws_int
                return lambda *ptrs: fp(desc, ws_int, size, *ptrs, *zeros)
            return lambda out_ptr, *in_ptrs: fn(desc, ws, size, cast("void *", out_ptr),
                                                *[cast("const void *", p) for p in in_ptrs], *nulls, null)
        if fp is not None:
            return functools.partial(fp, self.desc, self._ws_int, self.workspace_size)

        def call(out_ptr: int, *in_ptrs: int) -> int:
            return fn(desc, ws, size, cast("void *", out_ptr), *[cast("const void *", p) for p in in_ptrs], null)

        return call

    def run(self, inputs: Sequence[Any], output: Any) -> None:
        ins = [self.backend.asarray(x) for x in inputs]
        out = self._outputs(output)
        got = self._layout_of(ins, out)
        if got != self._layout:
            raise InvalidArgumentError(
                f"{self.op}: this launcher was prepared for (shape, strides, dtype) {self._layout}; "
                f"called with {got}: prepare a new one")
        if self._library_op:
            self.backend._note_library_op(self.op)
        status = self._fn(*self._make_args(ins, out))
        if status:
            self._check(status)

    def on_stream(self, stream: int, inputs: Sequence[Any] | None = None, output: Any = None) -> Callable[[], None]:
        """A zero-argument launch on the stream handle ``stream`` (an ``oprt_stream_t``: a CUDA stream's address,
        e.g. CuPy's ``Stream.ptr``, for CUDA graph capture) instead of the default stream; on the prepared buffers,
        or on ``inputs`` and ``output`` of the same layout (checked once, here)."""
        args = self._args
        if inputs is not None or output is not None:
            ins = [self.backend.asarray(x) for x in (inputs if inputs is not None else self.inputs)]
            out = self._outputs(output if output is not None else self.output)
            got = self._layout_of(ins, out)
            if got != self._layout:
                raise InvalidArgumentError(
                    f"{self.op}: this launcher was prepared for (shape, strides, dtype) {self._layout}; "
                    f"called with {got}: prepare a new one")
            args = self._make_args(ins, out)
        args = (*args[:-1], self._ffi.cast("oprt_stream_t", int(stream)))
        fn, check = self._fn, self._check
        note = self.backend._note_library_op if self._library_op else None
        op = self.op

        def launch() -> None:
            if note is not None:
                note(op)
            status = fn(*args)
            if status:
                check(status)

        return launch

    def __repr__(self) -> str:
        return f"CompiledLauncher({self.backend.name}/{self.op}, workspace={self.workspace_size} B)"


class CompiledEvent:
    """An ``oprt_event_t`` recorded on the default stream; destroyed when garbage collected."""

    def __init__(self, backend: CompiledBackend):
        self.backend = backend
        ffi, lib = backend.ffi, backend.lib
        p = ffi.new("oprt_event_t *")
        backend.check(lib.oprt_event_create(p))
        self.handle = ffi.gc(p[0], lib.oprt_event_destroy)

    def record(self) -> None:
        self.backend.check(self.backend.lib.oprt_event_record(self.handle, self.backend.ffi.NULL))

    def synchronize(self) -> None:
        self.backend.check(self.backend.lib.oprt_event_synchronize(self.handle))

    def elapsed_ms(self, end: CompiledEvent) -> float:
        """Milliseconds from this event to ``end`` (waits for ``end`` to complete)."""
        if not isinstance(end, CompiledEvent):
            raise InvalidArgumentError(f"elapsed_ms needs another event of backend {self.backend.name!r}")
        lib, ffi = self.backend.lib, self.backend.ffi
        self.backend.check(lib.oprt_event_synchronize(end.handle))
        ms = ffi.new("float *")
        self.backend.check(lib.oprt_event_elapsed_ms(ms, self.handle, end.handle))
        return float(ms[0])


# ---------------------------------------------------------------------------------------------
# the backend


def _cuda_device_of(obj: Any) -> int | None:
    """The CUDA device index of a torch tensor (``get_device()``) or CuPy array (``device.id``); None for other
    ``__cuda_array_interface__`` objects (the interface does not say) and for anything that does not answer."""
    try:
        if callable(getattr(obj, "get_device", None)):
            dev = obj.get_device()
        else:
            dev = obj.device.id
    except Exception:  # noqa: BLE001 - no device to compare: the interface itself does not carry one
        return None
    return dev if isinstance(dev, int) and not isinstance(dev, bool) and dev >= 0 else None


def _torch_bf16_cai(obj: Any) -> dict[str, Any] | None:
    """The ``__cuda_array_interface__`` of a torch bfloat16 CUDA tensor whose torch has no typestr for bfloat16:
    its int16 view's, with oprt's bf16 typestr; None for anything else."""
    if str(getattr(obj, "dtype", "")) != "torch.bfloat16" or not callable(getattr(obj, "view", None)):
        return None
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    cai = dict(obj.view(torch.int16).__cuda_array_interface__)
    cai["typestr"] = BF16_TYPESTR
    return cai


class CompiledBackend:
    """A backend over any library implementing oprt.h (see the module docstring).

    :param name: the backend name (``nvidia``, ``metax``, ``host``...)
    :param loader: zero-arg callable returning an object with ``.ffi`` and ``.lib``; called once, lazily
    :param vendor: vendor name reported when the library leaves it empty
    :param cuda_interop: device pointers are CUDA pointers: DeviceArrays export ``__cuda_array_interface__``
    :param device: the device index used (``oprt_set_device`` on first use)
    :param last_launch: zero-arg callable naming the kernels the calling thread's last op call launched (the
        library's own extension outside oprt.h, e.g. ``oprt_nvidia.last_launch``); :meth:`last_launch` returns
        None without it
    :param driver: the vendor's driver, for availability reasons that say what is missing (default: from
        ``DRIVER_HINTS`` by the library's flavour, else by the backend's name)
    :param dlpack_device_type: the DLPack device type of the library's memory, which its DeviceArrays export
        with ``__dlpack__`` (default: kDLCUDA, 2, when ``cuda_interop``; else none, and ``__dlpack__`` raises
        BufferError: MACA memory of metax's mxcc build has no DLPack device type; a host library passes kDLCPU, 1)
    """

    def __init__(self, name: str, loader: Callable[[], Any], *, vendor: str = "", cuda_interop: bool = False,
                 device: int = 0, last_launch: Callable[[], str] | None = None, driver: DriverHint | None = None,
                 dlpack_device_type: int | None = None):
        self.name = name
        self.dlpack_device_type = dlpack_device_type if dlpack_device_type is not None else (
            KDL_CUDA if cuda_interop else None)
        self.driver = driver
        self._last_launch = last_launch
        self.vendor = vendor
        self.cuda_interop = cuda_interop
        self.device = int(device)
        self._loader = loader
        self._lock = threading.RLock()
        self._mod: Any = None
        self._load_error: BaseException | None = None
        self._device_set = False
        self._flush: RawBuffer | None = None
        self._flush_value = 0
        self._flush_reader: CompiledLauncher | None = None  # flush_cache(clean=True)'s read of the buffer
        self._specs: dict[str, Any] = {s.name: s for s in c_abi_ops()}  # oprt.h's ops and those add_op added
        self._op_libs: dict[str, CLibraryImpl] = {}  # ops whose entry points are in a library of their own
        self._op_loaded: dict[str, _OpLibrary | str] = {}  # their loads, or why one failed (cached either way)
        self._tls = threading.local()  # .library_op: the op library the thread last prepared or launched an op of

    def __repr__(self) -> str:
        return f"CompiledBackend({self.name!r})"

    # -- loading ------------------------------------------------------------------------------
    def _load(self) -> Any:
        if self._mod is not None:
            return self._mod
        with self._lock:
            if self._mod is not None:
                return self._mod
            if self._load_error is not None:
                raise self._load_error
            try:
                mod = self._loader()
                ffi, lib = mod.ffi, mod.lib
            except Exception as exc:  # noqa: BLE001 - any import failure makes the backend unavailable
                self._load_error = BackendUnavailable(
                    self.name, f"extension failed to import: {type(exc).__name__}: {exc}")
                self._load_error.__cause__ = exc
                raise self._load_error from exc
            try:
                info = ffi.new("oprt_library_info_t *")
                status = lib.oprt_get_library_info(info)
                raise_for_status(ffi, lib, status, self.name)
                reported = int(info.abi_version)
            except Exception as exc:  # noqa: BLE001
                self._load_error = BackendUnavailable(
                    self.name, f"extension failed to import: oprt_get_library_info failed: {type(exc).__name__}: {exc}")
                raise self._load_error from exc
            built = getattr(lib, "OPRT_ABI_VERSION", None)
            try:
                check_abi(self.name, reported, None if built is None else int(built))
            except AbiMismatchError as exc:
                self._load_error = BackendUnavailable(self.name, str(exc))
                raise self._load_error from exc
            self._mod = mod
            return mod

    @property
    def ffi(self) -> Any:
        """The cffi FFI of the library (loads it)."""
        return self._load().ffi

    @property
    def lib(self) -> Any:
        """The raw cffi library (loads it)."""
        return self._load().lib

    def _ready(self) -> tuple[Any, Any]:
        """(ffi, lib) with the device selected."""
        mod = self._load()
        if not self._device_set:
            with self._lock:
                if not self._device_set:
                    self.check(mod.lib.oprt_set_device(self.device))
                    self._device_set = True
        return mod.ffi, mod.lib

    def set_device(self, device: int) -> None:
        """Select another device index (BadDeviceError when out of range)."""
        self.check(self.lib.oprt_set_device(int(device)))
        self.device = int(device)
        self._device_set = True

    def check(self, status: int) -> None:
        """Raise the mapped exception for a failed oprt_status_t (no-op on SUCCESS)."""
        if status:
            raise_for_status(self.ffi, self.lib, status, self.name)

    def last_error(self) -> str:
        return _cstr(self.ffi, self.lib.oprt_last_error_message())

    def last_launch(self) -> str | None:
        """The kernels this thread's last op call on the library launched, as the library names them
        (:class:`oprt_core.backend.KernelNames`), or None where the backend was built without a way to ask, or where
        the thread's last prepare or launch was of an op library's op (:func:`c_library`: the backend's library
        did not run it; a cached launcher of the backend's own ops is not seen, so say so only after a prepare)."""
        if getattr(self._tls, "library_op", None) is not None:
            return None
        return self._last_launch() if self._last_launch is not None else None

    def _note_library_op(self, op: str | None) -> None:
        self._tls.library_op = op

    # -- discovery ------------------------------------------------------------------------------
    def availability(self) -> Availability:
        try:
            mod = self._load()
        except BackendUnavailable as exc:
            return Availability(False, exc.reason)
        except Exception as exc:  # noqa: BLE001 - never raises
            return Availability(False, f"extension failed to import: {type(exc).__name__}: {exc}")
        try:
            ffi, lib = mod.ffi, mod.lib
            count = ffi.new("int32_t *")
            status = lib.oprt_get_device_count(count)
            if status == 10:  # OPRT_STATUS_NO_DEVICE: no GPU, no driver or one too old for the runtime
                return Availability(False, self._no_device_reason(self.last_error()))
            if status:
                return Availability(False, f"oprt_get_device_count failed "
                                           f"[{STATUS_NAMES.get(status, status)}]: {self.last_error()}")
            if count[0] <= 0:
                props = ffi.new("oprt_device_properties_t *")
                status = lib.oprt_get_device_properties(self.device, props)
                return Availability(False, self._no_device_reason(self.last_error() if status else ""))
            if not 0 <= self.device < count[0]:
                return Availability(False, f"device index {self.device} is out of range: "
                                           f"{count[0]} {self.name} device(s) found")
            props = ffi.new("oprt_device_properties_t *")
            status = lib.oprt_get_device_properties(self.device, props)
            if status:
                return Availability(False, f"oprt_get_device_properties failed "
                                           f"[{STATUS_NAMES.get(status, status)}]: {self.last_error()}")
            name = _field(ffi, props.name)
            return Availability(True, f"{count[0]} device(s); using {self.device}: {name}", name)
        except Exception as exc:  # noqa: BLE001 - never raises
            return Availability(False, f"{type(exc).__name__}: {exc}")

    def _no_device_reason(self, raw: str) -> str:
        """:func:`no_device_reason` for this backend: the library's runtime version and the vendor's driver."""
        try:
            info = self.library_info()
        except Exception:  # noqa: BLE001 - the reason is still worth giving without it
            info = {}
        hint = self.driver or DRIVER_HINTS.get(_FLAVOUR_HINTS.get(info.get("flavour", ""), "")) or DRIVER_HINTS.get(
            self.name)
        return no_device_reason(self.name, raw, info.get("runtime_version", ""), hint)

    def library_info(self) -> dict[str, Any]:
        ffi, lib = self.ffi, self.lib
        info = ffi.new("oprt_library_info_t *")
        self.check(lib.oprt_get_library_info(info))
        return {
            "abi_version": int(info.abi_version),
            "backend": _field(ffi, info.backend),
            "flavour": _field(ffi, info.flavour),
            "toolchain": _field(ffi, info.toolchain),
            "architectures": _field(ffi, info.architectures),
            "runtime_version": _field(ffi, info.runtime_version),
        }

    def device_properties(self) -> dict[str, Any]:
        ffi, lib = self.ffi, self.lib
        props = ffi.new("oprt_device_properties_t *")
        self.check(lib.oprt_get_device_properties(self.device, props))
        return {
            "name": _field(ffi, props.name),
            "vendor": _field(ffi, props.vendor),
            "total_memory_bytes": int(props.total_memory_bytes),
            "l2_cache_bytes": int(props.l2_cache_bytes),
            "sm_count": int(props.sm_count),
            "warp_size": int(props.warp_size),
            "memory_clock_khz": int(props.memory_clock_khz),
            "memory_bus_width_bits": int(props.memory_bus_width_bits),
            "compute_major": int(props.compute_major),
            "compute_minor": int(props.compute_minor),
            "clock_khz": int(props.clock_khz),
        }

    def device_info(self) -> DeviceInfo:
        """Device and build description.

        ``spec_peak_gbps`` assumes double-data-rate memory (GDDR/HBM as reported by
        the CUDA/MACA runtimes): 2 x memory clock x bus width / 8, in GB/s (1e9 B/s).
        """
        info = self.library_info()
        try:
            props = self.device_properties()
        except BackendError as exc:
            # no device here: the build (flavour, toolchain) is still worth reporting
            return DeviceInfo(name="", vendor=self.vendor, driver_version=info["runtime_version"],
                              toolkit=info["toolchain"], flavour=self._flavour(info),
                              extra={"library": info, "device_error": str(exc)})
        clock, width = props["memory_clock_khz"], props["memory_bus_width_bits"]
        peak = 2 * clock * 1e3 * width / 8 / 1e9 if clock > 0 and width > 0 else None
        return DeviceInfo(
            name=props["name"],
            vendor=props["vendor"] or self.vendor,
            memory_bytes=props["total_memory_bytes"],
            l2_bytes=props["l2_cache_bytes"],
            sm_count=props["sm_count"],
            warp_size=props["warp_size"],
            spec_peak_gbps=peak,
            driver_version=info["runtime_version"],
            toolkit=info["toolchain"],
            flavour=self._flavour(info),
            extra={"device_index": self.device,
                   "compute_capability": f"{props['compute_major']}.{props['compute_minor']}",
                   "clock_khz": props["clock_khz"], "memory_clock_khz": clock, "memory_bus_width_bits": width,
                   "library": info},
        )

    @staticmethod
    def _flavour(info: dict[str, Any]) -> str:
        """E.g. "nvcc 13.0 sm_90 compute_90", "nvcc-shim nvcc 13.0 sm_90": a toolchain that starts with the
        flavour's own name does not repeat it."""
        toolchain = info["toolchain"]
        head = "" if toolchain.split(" ")[0] == info["flavour"] else info["flavour"]
        return " ".join(p for p in (head, toolchain, info["architectures"]) if p)

    def add_op(self, spec: Any, impl: Any) -> None:
        """Drive a third-party op through C entry points named and shaped as :mod:`oprt_core.cdecl` declares them
        from ``spec`` (``oprt_create_<op>_descriptor`` and the rest), found where the plugin's ``impl`` says:

        - :func:`c_library` (``register("nvidia", op, c_library(path))``): in a shared library of the op package's
          own, loaded on first use (:meth:`supports` says why not where it cannot be);
        - :func:`c_abi_impl`: in the backend's library itself (a backend build that compiles the op in, its cffi
          declarations including them).
        """
        if not isinstance(impl, CLibraryImpl) and impl is not c_abi_impl:
            raise InvalidArgumentError(
                f"backend {self.name!r} runs ops through C entry points: register oprt_core.compiled.c_library(path) "
                f"(the op's own library) or oprt_core.compiled.c_abi_impl for {spec.name!r}, not {impl!r}")
        if not spec.has_c_abi:
            raise InvalidArgumentError(f"op {spec.name!r} has no C ABI: every param needs a ctype")
        if isinstance(impl, CLibraryImpl):
            if spec.name in {s.name for s in c_abi_ops()}:
                raise InvalidArgumentError(f"op {spec.name!r} is one of oprt.h's: backend {self.name!r} runs it "
                                           "through its own library, not through another")
            with self._lock:
                self._op_libs[spec.name] = impl
                self._op_loaded.pop(spec.name, None)
        else:
            self._op_libs.pop(spec.name, None)
        self._specs[spec.name] = spec

    def _op_library(self, op: str) -> _OpLibrary | str:
        """The loaded library of an op registered with :func:`c_library`, or why it cannot be used (cached)."""
        got = self._op_loaded.get(op)
        if got is None:
            with self._lock:
                got = self._op_loaded.get(op)
                if got is None:
                    got = _load_op_library(self._specs[op], self._op_libs[op], self.name)
                    self._op_loaded[op] = got
        return got

    def supports(self, op: str, dtype: str, case: Any | None = None) -> Support:
        if op not in self._specs:
            what = "oprt.h's ops" if len(self._specs) == len(c_abi_ops()) else "the ops"
            return Support(False, f"backend {self.name!r} implements only {what} "
                                  f"({', '.join(self._specs)}), not {op!r}")
        try:
            dt = get_dtype(dtype)
        except UnknownNameError as exc:
            return Support(False, str(exc))
        if dt.name not in DTYPES and dt.name not in self._specs[op].dtypes:  # an opt-in dtype (e4m3): where declared
            return Support(False, f"backend {self.name!r} does not support dtype {dtype} for {op} (it does only "
                                  f"where the op declares it)")
        if op in self._op_libs:
            loaded = self._op_library(op)
            if isinstance(loaded, str):
                return Support(False, loaded)
        elif self._mod is not None and any(getattr(self._mod.lib, name, None) is None for name in entry_points(op)):
            # a library built before the op was added to oprt.h: its entry points are not in it
            return Support(False, f"backend {self.name!r}: the library does not implement {op!r} (it was built "
                                  "without the op's kernel source: rebuild it)")
        return Support(True)

    # -- memory ---------------------------------------------------------------------------------
    def _alloc(self, nbytes: int) -> tuple[int, Any]:
        """(address, owner) of a new device allocation; (0, None) for 0 bytes."""
        if nbytes <= 0:
            return 0, None
        ffi, lib = self._ready()
        p = ffi.new("void **")
        self.check(lib.oprt_malloc(p, nbytes))
        owner = ffi.gc(p[0], lib.oprt_free)
        return int(ffi.cast("uintptr_t", owner)), owner

    def _device_array(self, ptr: int, shape: Sequence[int], strides: Sequence[int], dtype: DType, owner: Any
                      ) -> DeviceArray:
        return DeviceArray(self, ptr, shape, strides, dtype, owner, cuda_interop=self.cuda_interop,
                           dlpack_device=self._dlpack_device())

    def _dlpack_device(self) -> tuple[int, int] | None:
        """(DLPack device type, device index) of memory allocated now, or None when it has no DLPack type."""
        return None if self.dlpack_device_type is None else (self.dlpack_device_type, self.device)

    def empty(self, shape: Sequence[int], dtype: str | DType) -> DeviceArray:
        """An uninitialised contiguous device array."""
        shape = tuple(int(s) for s in shape)
        if any(s < 0 for s in shape):
            raise InvalidArgumentError(f"empty: negative extent in shape {shape}")
        dt = get_dtype(dtype, index=True)
        ptr, owner = self._alloc(math.prod(shape) * dt.itemsize)
        return self._device_array(ptr, shape, contiguous_strides(shape), dt, owner)

    def to_device(self, array: Any) -> DeviceArray:
        """A device copy of a host array that keeps its layout: the byte span from its lowest- to its
        highest-addressed element is copied, so views (negative, zero or stepped strides, offsets) stay views."""
        arr = np.asarray(array)
        dt = dtype_of(arr.dtype, index=True)
        if any(s % dt.itemsize for s in arr.strides):
            arr = np.ascontiguousarray(arr)
        strides = tuple(s // dt.itemsize for s in arr.strides)
        if arr.size == 0:
            self._ready()
            return self._device_array(0, arr.shape, strides, dt, None)
        lo, hi = element_span(arr.shape, strides)
        nbytes = (hi - lo + 1) * dt.itemsize
        src = arr.__array_interface__["data"][0] + lo * dt.itemsize
        # keep the host view's misalignment against 16 bytes (a view starting at an odd element stays
        # misaligned on the device, so kernels' vector-load fast paths see the case they must handle)
        pad = src % 16
        base, owner = self._alloc(nbytes + pad)
        ffi, lib = self.ffi, self.lib
        self.check(lib.oprt_memcpy(ffi.cast("void *", base + pad), ffi.cast("void *", src), nbytes, _H2D))
        return self._device_array(base + pad - lo * dt.itemsize, arr.shape, strides, dt, owner)

    def to_host(self, array: DeviceArray) -> np.ndarray:
        """A contiguous host numpy array with the same shape and values."""
        if isinstance(array, np.ndarray):
            return array.copy()
        if not isinstance(array, DeviceArray):
            array = self.asarray(array)
        dt = array.dtype_info
        if array.size == 0:
            return np.empty(array.shape, dt.numpy)
        lo, nbytes = array.span()
        host = np.empty(nbytes // dt.itemsize, dt.numpy)
        ffi, lib = self._ready()
        self.check(lib.oprt_memcpy(ffi.cast("void *", host.ctypes.data), ffi.cast("void *", array.ptr + lo),
                                   nbytes, _D2H))
        origin = host[-lo // dt.itemsize:]
        view = np.lib.stride_tricks.as_strided(origin, array.shape, array.strides)
        return np.array(view, copy=True, order="C")

    def fill_nan(self, array: DeviceArray) -> None:
        """Poison an array with NaN: ``oprt_memset`` of 0xFF over its byte span.

        All-ones bits are a (negative, quiet) NaN in f32, f16 and bf16 alike.
        """
        array = self._as_output(array)
        lo, nbytes = array.span()
        if nbytes:
            ffi, lib = self._ready()
            self.check(lib.oprt_memset(ffi.cast("void *", array.ptr + lo), 0xFF, nbytes))

    def asarray(self, obj: Any) -> DeviceArray:
        """The op API's view of a caller's array: a DeviceArray of this backend as is, an object with
        ``__cuda_array_interface__`` zero-copy (owner = the object), a numpy array copied to the device.

        A foreign array's ``stream`` is not waited on: oprt runs on the default stream, so the caller
        synchronises work it queued on other streams before handing the array over."""
        if isinstance(obj, DeviceArray):
            if obj.backend is not self:
                raise InvalidArgumentError(
                    f"array belongs to backend {obj.backend.name!r}, not {self.name!r}; copy it through the host")
            return obj
        try:
            cai = getattr(obj, "__cuda_array_interface__", None) if not isinstance(obj, np.ndarray) else None
        except RuntimeError as exc:  # torch, for a tensor that requires grad: its own words say what to do
            raise InvalidArgumentError(f"backend {self.name!r} cannot use this {type(obj).__name__}: {exc}") from exc
        except KeyError as exc:  # torch, for a dtype its typestr table lacks (float8 and others)
            cai = _torch_bf16_cai(obj)  # torch before bfloat16 had a typestr ("<V2", as oprt's)
            if cai is not None:
                return self._from_cai(obj, cai)
            raise InvalidArgumentError(
                f"backend {self.name!r} cannot use this {type(obj).__name__}: its __cuda_array_interface__ has no "
                f"typestr for dtype {exc.args[0] if exc.args else '?'} (supported: f32, f16, bf16)") from exc
        if cai is not None:
            if not self.cuda_interop:  # a CUDA pointer handed to another vendor's kernels: refused, not launched
                raise InvalidArgumentError(
                    f"backend {self.name!r} cannot use a {type(obj).__module__}.{type(obj).__name__}: its memory is "
                    "CUDA memory (__cuda_array_interface__) and this backend's is not; pass a numpy array (copied) "
                    "or one of the backend's own arrays")
            return self._from_cai(obj, cai)
        if isinstance(obj, (np.ndarray, np.generic)):
            return self.to_device(obj)
        raise InvalidArgumentError(
            f"backend {self.name!r} cannot use a {type(obj).__module__}.{type(obj).__name__}: expected a DeviceArray, "
            "an object with __cuda_array_interface__ (CuPy array, torch tensor) or a numpy array")

    def _from_cai(self, obj: Any, cai: Mapping[str, Any]) -> DeviceArray:
        dev = _cuda_device_of(obj)
        if dev is not None and dev != self.device:  # its pointer is another GPU's: this backend launches on its own
            raise InvalidArgumentError(
                f"backend {self.name!r} runs on CUDA device {self.device}, and this {type(obj).__name__} is on device "
                f"{dev}: move it there (torch: .to('cuda:{self.device}'); CuPy: copy it under "
                f"cupy.cuda.Device({self.device})) or select device {dev} with the backend's set_device")
        typestr = cai.get("typestr", "")
        try:
            dt = DTYPES["bf16"] if typestr in (BF16_TYPESTR, "|V2") else dtype_of(np.dtype(typestr), index=True)
        except (TypeError, UnknownNameError) as exc:
            raise InvalidArgumentError(
                f"__cuda_array_interface__ typestr {typestr!r} is not a supported dtype "
                f"(valid: {np.dtype(np.float32).str}, {np.dtype(np.float16).str}, {BF16_TYPESTR} for bf16)") from exc
        shape = tuple(int(s) for s in cai["shape"])
        ptr, readonly = cai["data"]
        if cai.get("strides") is None:
            strides = contiguous_strides(shape)
        else:
            byte_strides = tuple(int(s) for s in cai["strides"])
            if any(s % dt.itemsize for s in byte_strides):
                raise InvalidArgumentError(f"__cuda_array_interface__ strides {byte_strides} are not multiples of "
                                           f"the {dt.name} itemsize {dt.itemsize}")
            strides = tuple(s // dt.itemsize for s in byte_strides)
        return DeviceArray(self, int(ptr or 0), shape, strides, dt, obj, cuda_interop=self.cuda_interop,
                           readonly=bool(readonly), dlpack_device=self._dlpack_device())

    def _as_output(self, obj: Any, name: str = "out") -> DeviceArray:
        if isinstance(obj, (np.ndarray, np.generic)):
            raise InvalidArgumentError(f"the output of backend {self.name!r} must be a device array "
                                       f"(backend.empty(...)), not a numpy array")
        arr = self.asarray(obj)
        if arr.readonly:
            raise InvalidArgumentError(f"{name} is read-only; pass a writeable array")
        return arr

    # -- ops ------------------------------------------------------------------------------------
    def _tensor_desc(self, arr: DeviceArray, what: str, ffi: Any = None) -> Any:
        """A new ``oprt_tensor_desc_t *`` of ``ffi`` (default the backend's): the FFI of the function it is passed
        to (cffi structs of one FFI cannot be passed to another's functions)."""
        if arr.ndim > _MAX_NDIM:
            raise InvalidArgumentError(f"{what} has {arr.ndim} dims; oprt.h tensors have at most {_MAX_NDIM}")
        t = (self.ffi if ffi is None else ffi).new("oprt_tensor_desc_t *")
        t.dtype = arr.dtype_info.code
        t.ndim = arr.ndim
        for i, (n, s) in enumerate(zip(arr.shape, arr.strides_elements)):
            t.shape[i] = n
            t.strides[i] = s
        return t

    def prepare(self, op: str, inputs: Sequence[Any], output: Any, params: Mapping[str, Any] | None = None
                ) -> CompiledLauncher:
        """Create the op's C descriptor once; returns a launcher (see CompiledLauncher).

        Param *types* are validated here from the op spec; shapes, strides, dtypes and
        axes are validated by the library, so its statuses surface as the mapped exceptions.
        """
        spec = self._specs.get(op)
        if spec is None:
            raise UnknownNameError(f"op of backend {self.name!r}", op, self._specs)
        spec.check_input_count(len(inputs))
        full = spec.validate_params(params)
        ffi, lib = self._ready()
        check: Callable[[int], None] | None = None
        if op in self._op_libs:  # the op's own library: its ffi for every struct passed, its error text
            loaded = self._op_library(op)
            if isinstance(loaded, str):
                raise UnsupportedCase(loaded)
            ffi, (create, get_ws, fn, destroy), check = loaded.ffi, loaded.functions, loaded.check
            self._note_library_op(op)
        else:
            create, get_ws, fn, destroy = (getattr(lib, name, None) for name in entry_points(op))
            if create is None or fn is None or get_ws is None or destroy is None:
                raise UnsupportedCase(f"backend {self.name!r}: the library does not implement {op!r}")
            self._note_library_op(None)
        ins = [self.asarray(x) for x in inputs]
        if spec.multi_output:
            if not isinstance(output, (tuple, list)) or len(output) != spec.n_outputs:
                raise InvalidArgumentError(f"{op} has {spec.n_outputs} outputs ({', '.join(spec.output_names)}): "
                                           f"pass a tuple of as many arrays, got {type(output).__name__}")
            out: Any = tuple(self._as_output(o, name) for o, name in zip(output, spec.output_names))
        else:
            out = self._as_output(output)
        tds = [self._tensor_desc(o, name, ffi) for o, name in zip(as_outputs(out), spec.output_names)]
        tds += [self._tensor_desc(x, n, ffi) for x, n in zip(ins, spec.input_names)]
        absent = spec.n_inputs - len(ins)  # optional inputs left out: NULL descriptors and pointers
        tds += [ffi.NULL] * absent
        extra = c_params(spec, full)
        check_create = check or self.check
        p = ffi.new(f"oprt_{op}_descriptor_t *")
        check_create(create(p, *tds, *extra))
        desc = ffi.gc(p[0], destroy)
        size = ffi.new("size_t *")
        check_create(get_ws(desc, size))
        ws_size = int(size[0])
        workspace = None
        if ws_size:
            ptr, owner = self._alloc(ws_size)
            workspace = RawBuffer(ptr, owner, ws_size)
        return CompiledLauncher(self, op, desc, fn, workspace, ws_size, ins, out, full,
                                fn_ptrs=None if check else getattr(lib, f"oprt_ptrs_{op}", None), absent=absent,
                                ffi=ffi, check=check)

    # -- timing ---------------------------------------------------------------------------------
    def synchronize(self) -> None:
        _, lib = self._ready()
        self.check(lib.oprt_device_synchronize())

    def event(self) -> CompiledEvent:
        self._ready()
        return CompiledEvent(self)

    def flush_cache(self, clean: bool = False) -> None:
        """Overwrite a device buffer of max(2 x L2, 8 MiB) bytes (allocated once) with oprt_memset.

        ``clean``: then read it back with the library's own op of role ``sum-all`` (oprt_core.operators.with_role:
        the buffer as f32 summed into one element), prepared once: the memset's dirty lines are written back during
        that read."""
        ffi, lib = self._ready()
        if self._flush is None:
            l2 = self.device_properties()["l2_cache_bytes"]
            nbytes = -(-max(2 * l2, FLUSH_MIN_BYTES) // 16) * 16
            ptr, owner = self._alloc(nbytes)
            self._flush = RawBuffer(ptr, owner, nbytes)
        self._flush_value = (self._flush_value + 1) & 0xFF
        self.check(lib.oprt_memset(ffi.cast("void *", self._flush.ptr), self._flush_value, self._flush.nbytes))
        if clean:
            if self._flush_reader is None:
                words = self._flush.nbytes // 4
                whole = self._device_array(self._flush.ptr, (words,), (1,), get_dtype("f32"), self._flush)
                reader, params = with_role("sum-all")
                self._flush_reader = self.prepare(reader.name, [whole], self.empty((), "f32"), params)
            self._flush_reader()


    # -- calibration probes (oprt_core.backend.CalibrationProbes) --------------------------------------
    def _memcpy_d2d_call(self, dst: RawBuffer, src: RawBuffer, nbytes: int) -> Callable[[], None]:
        ffi, lib = self._ready()
        memcpy, check = lib.oprt_memcpy, self.check
        d, s = ffi.cast("void *", dst.ptr), ffi.cast("void *", src.ptr)

        def run() -> None:
            check(memcpy(d, s, nbytes, _D2D))

        run.buffers = (dst, src)  # type: ignore[attr-defined]  # the buffers live as long as the callable
        return run

    def copy_probe(self, nbytes: int) -> Callable[[], None]:
        """One ``oprt_memcpy`` device-to-device (kind 2) of ``nbytes`` between two buffers allocated here."""
        nbytes = int(nbytes)
        if nbytes <= 0:
            raise InvalidArgumentError(f"copy_probe needs a positive byte count, got {nbytes}")
        src = RawBuffer(*self._alloc(nbytes), nbytes)
        dst = RawBuffer(*self._alloc(nbytes), nbytes)
        ffi, lib = self._ready()
        self.check(lib.oprt_memset(ffi.cast("void *", src.ptr), 1, nbytes))  # first touch outside the timing
        self.check(lib.oprt_memset(ffi.cast("void *", dst.ptr), 0, nbytes))
        return self._memcpy_d2d_call(dst, src, nbytes)

    def empty_launch_probe(self) -> Callable[[], None]:
        """The cheapest call through this backend: an ``oprt_memcpy`` D2D of one 4-byte element."""
        src = RawBuffer(*self._alloc(4), 4)
        dst = RawBuffer(*self._alloc(4), 4)
        return self._memcpy_d2d_call(dst, src, 4)

    def timer_resolution_ms(self) -> float | None:
        """CUDA events' documented ~0.5 us on CUDA-like backends; unknown (None) otherwise."""
        return CUDA_EVENT_RESOLUTION_MS if self.cuda_interop else None



@dataclass(frozen=True)
class CLibraryImpl:
    """An op's implementation for a compiled backend in a shared library of the op package's own (make one with
    :func:`c_library`). The library exports the op's four entry points as :func:`oprt_core.cdecl.prototypes`
    declares them and, from one translation unit compiled with ``OPRT_IMPLEMENTATION`` defined before
    ``oprt_validate.h``, ``oprt_last_error_message``, ``oprt_status_string`` and ``oprt_library_abi_version``.

    :param path: the library's file (``liboprt_gelu_nvidia.so``)
    :param missing: why the file may be absent (the package built without the backend's compiler), or a zero-argument
        callable returning it, asked only when the file is absent; quoted in :meth:`CompiledBackend.supports`
    """

    path: str
    missing: str | Callable[[], str] = ""

    def __call__(self, *_args: Any) -> None:
        raise TypeError("a c_library implementation names a library a compiled backend loads; it is not called")


def c_library(path: str | os.PathLike[str], *, missing: str | Callable[[], str] = "") -> CLibraryImpl:
    """The implementation a plugin registers for a compiled backend when its op's kernels are a shared library of
    its own, built at its install: ``register("nvidia", "gelu_tanh", c_library(HERE / "liboprt_gelu_nvidia.so"))``.

    Nothing is loaded here (registering stays cheap): the backend loads the library with cffi's ABI mode
    (``ffi.dlopen``) the first time the op is asked for, declaring the op's entry points from its spec
    (:mod:`oprt_core.cdecl`) with oprt.h's types, and takes the op's four entry points from it; descriptors and
    launches go through them, statuses become exceptions with the library's own ``oprt_last_error_message()``,
    and memory, events, streams and the device stay the backend's. The launch gets the backend's stream (NULL, the
    default stream, unless a caller passes one), so the backend's events time it. A library that is absent, fails
    to load, lacks an entry point or was built against another oprt.h makes :meth:`CompiledBackend.supports`
    answer unsupported, with the reason (``missing`` says why the build left it out)."""
    return CLibraryImpl(os.fspath(path), missing)


@dataclass
class _OpLibrary:
    """An op library loaded: its ffi, the four entry points (create, workspace size, launch, destroy) and the
    status check that reads its own error text."""

    path: str
    ffi: Any
    lib: Any
    functions: tuple[Any, Any, Any, Any]
    check: Callable[[int], None]


# what oprt_validate.h's OPRT_IMPLEMENTATION defines besides oprt.h's functions
_OP_LIBRARY_EXTRA_CDEF = "int32_t oprt_library_abi_version(void);\n"


def _op_library_cdef(spec: Any) -> str:
    """The cffi declarations of an op library: oprt.h's types and functions without oprt.h's ops, then the op's
    entry points as generated from its spec."""
    text = cdef()
    head, _, rest = text.partition(OPS_BEGIN)
    return head + rest.partition(OPS_END)[2] + _OP_LIBRARY_EXTRA_CDEF + prototypes(spec)


def _load_op_library(spec: Any, impl: CLibraryImpl, backend: str) -> _OpLibrary | str:
    """Load ``impl``'s library for ``spec`` (cffi ABI mode), or say why it cannot be used; never raises."""
    what = f"{spec.name} on backend {backend!r}: its library {impl.path}"
    if not os.path.isfile(impl.path):
        try:
            why = impl.missing() if callable(impl.missing) else impl.missing
        except Exception as exc:  # noqa: BLE001 - the reason is still worth giving without it
            why = f"(and asking why failed: {type(exc).__name__}: {exc})"
        return f"{what} is not there" + (f": {why}" if why else "")
    try:
        import cffi

        ffi = cffi.FFI()
        ffi.cdef(_op_library_cdef(spec))
        lib = ffi.dlopen(impl.path)
    except Exception as exc:  # noqa: BLE001 - cffi missing, an unreadable file, an unresolved symbol...
        text = str(exc).split(".  Additionally, ctypes.util.find_library()", 1)[0]  # cffi's second guess says nothing
        return f"{what} cannot be loaded: {type(exc).__name__}: {text}"
    needed = (*entry_points(spec.name), "oprt_last_error_message", "oprt_status_string", "oprt_library_abi_version")
    found = {}
    for name in needed:
        try:
            found[name] = getattr(lib, name)
        except AttributeError:
            if name in entry_points(spec.name):
                return f"{what} lacks the entry point {name} (its four: {', '.join(entry_points(spec.name))})"
            return (f"{what} lacks {name}: compile one of its sources with OPRT_IMPLEMENTATION defined before "
                    "including oprt_validate.h (with oprt.h of this oprt-core)")
    built, want = int(found["oprt_library_abi_version"]()), abi_version()
    if built != want:
        return (f"{what} was built against oprt.h ABI version {built}, but the installed oprt-core expects version "
                f"{want}; rebuild the op package against this oprt-core (reinstall it)")

    def check(status: int) -> None:
        if status:
            raise_for_status(ffi, lib, status, backend)

    create, get_ws, launch, destroy = (found[name] for name in entry_points(spec.name))
    return _OpLibrary(impl.path, ffi, lib, (create, get_ws, launch, destroy), check)


def c_abi_impl(*_args: Any) -> None:
    """The implementation a plugin registers for a compiled backend, ``register("nvidia", "square", c_abi_impl)``:
    the op runs through the backend library's own entry points (:meth:`CompiledBackend.add_op`). A marker, never
    called."""
    raise TypeError("c_abi_impl marks an op a compiled backend runs through its library; it is not called")
