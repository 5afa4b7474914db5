"""The base of the baseline backends (``torch``, ``cupy``, ...), and of third-party backends built like them.

:class:`BaselineBackend` holds what every baseline does the same way: its library
imported lazily by the first ``availability()`` (a missing or broken install is a
reason, never a crash), the answer cached, ``_require`` for the device calls, the ops
it is given through ``add_op`` (each op's implementation lives in its folder,
``oprt_core/operators/<op>/baselines.py``), and the checks of ``supports`` and
``prepare`` before the library's own. :class:`Launcher` is the prepared call that
``prepare`` returns, :class:`CudaEvent` the recorded-event bookkeeping of both CUDA
event types. Nothing here imports torch or cupy.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..backend import Availability, Support
from ..dtypes import get_dtype
from ..errors import BackendUnavailable, InvalidArgumentError, UnknownNameError
from ..spec import OpSpec
from ..validate import check_call

__all__ = ["MiB", "Impl", "BaselineBackend", "CudaEvent", "Launcher", "is_installed", "import_library",
           "spec_peak_gbps", "cuda_version_text", "flush_bytes", "positive_nbytes"]

MiB = 1 << 20
# an op implementation: (library, inputs, out, params) -> a zero-argument call doing one run
Impl = Callable[..., Callable[[], Any]]


def is_installed(module: str) -> bool:
    """Whether ``module`` is installed (an ImportError may come from one of its own dependencies)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError, AttributeError):  # e.g. sys.modules[module] is None
        return False


def import_library(module: str) -> tuple[Any, Availability | None]:
    """Import ``module``: ``(module, None)``, or ``(None, why it is unavailable)``; never raises."""
    try:
        return importlib.import_module(module), None
    except ImportError as exc:
        if not is_installed(module):
            return None, Availability(False, f"{module} not installed ({exc})")
        return None, Availability(False, f"{module} is installed but failed to import: {exc}")
    except Exception as exc:  # noqa: BLE001 - a broken install is a reason, never a crash
        return None, Availability(False, f"{module} failed to import: {type(exc).__name__}: {exc}")


# -- device facts ------------------------------------------------------------------------------------------

def spec_peak_gbps(memory_clock_khz: int | None, bus_width_bits: int | None) -> float | None:
    """Spec DRAM bandwidth from the driver's memory clock and bus width (double data rate), in GB/s."""
    if not memory_clock_khz or not bus_width_bits:
        return None
    return 2.0 * memory_clock_khz * 1e3 * (bus_width_bits / 8) / 1e9


def cuda_version_text(version: int) -> str:
    """A CUDA version number as the driver and runtime give it (13000) in words ("13.0")."""
    return f"{version // 1000}.{version % 1000 // 10}"


def flush_bytes(cache_bytes: int) -> int:
    """The size of a cache-flushing buffer: 2x the last-level cache, at least 8 MiB, a multiple of 16 bytes."""
    return -(-max(2 * cache_bytes, 8 * MiB) // 16) * 16


def positive_nbytes(nbytes: int) -> int:
    """``copy_probe``'s byte count as an int; InvalidArgumentError unless it is positive."""
    nbytes = int(nbytes)
    if nbytes <= 0:
        raise InvalidArgumentError(f"copy_probe needs a positive byte count, got {nbytes}")
    return nbytes


# -- events and launchers ------------------------------------------------------------------------------------

class CudaEvent:
    """A CUDA event with timing: subclasses make ``event`` and say how to record it and time two of them."""

    event: Any
    recorded: bool = False

    def _record(self) -> None:
        raise NotImplementedError

    def _elapsed(self, end: Any) -> float:
        raise NotImplementedError

    def record(self) -> None:
        self._record()
        self.recorded = True

    def elapsed_ms(self, end: Any) -> float:
        if not (self.recorded and getattr(end, "recorded", False)):
            raise InvalidArgumentError("elapsed_ms needs two recorded events")
        end.event.synchronize()
        return float(self._elapsed(end))


class Launcher:
    """One prepared call; ``run`` rebinds it to other arrays of the same layout (once per set of arrays).

    ``bind(inputs, output)`` makes the zero-argument call (the first one now, at ``prepare``);
    ``layout_of`` is what two arrays must share to take each other's place.
    """

    __slots__ = ("call", "_bound", "_bind", "_layout_of", "_layout", "_what")

    def __init__(self, bind: Callable[[Sequence[Any], Any], Callable[[], Any]], inputs: Sequence[Any], output: Any,
                 layout_of: Callable[[Any], tuple], what: str) -> None:
        self._bind, self._what = bind, what
        # a multi-output op's output is a tuple: its layout the tuple of each output's
        self._layout_of = lambda a: tuple(layout_of(o) for o in a) if isinstance(a, tuple) else layout_of(a)
        self._layout = [layout_of(x) for x in inputs], self._layout_of(output)
        self.call = bind(inputs, output)
        self._bound: tuple[tuple[int, ...], Callable[[], Any]] | None = None

    def __call__(self) -> None:
        self.call()

    def run(self, new_inputs: Sequence[Any], new_output: Any) -> None:
        new_inputs = list(new_inputs)
        got = [self._layout_of(x) for x in new_inputs], self._layout_of(new_output)
        if got != self._layout:
            raise InvalidArgumentError(f"{self._what}: prepared for {self._layout}, called with {got}")
        key = tuple(map(id, [*new_inputs, *(new_output if isinstance(new_output, tuple) else (new_output,))]))
        if self._bound is None or self._bound[0] != key:  # bind (and allocate any workspace) once per set
            self._bound = key, self._bind(new_inputs, new_output)
        self._bound[1]()


# -- the backends ------------------------------------------------------------------------------------------------

class BaselineBackend:
    """What the baselines share; a subclass sets ``_library`` and ``impl_name`` and writes ``_probe_device``. It starts
    with no op: each comes through ``add_op`` (from the registry, or ``oprt_core.operators.equip``)."""

    name: str
    impl_name: str  # the backend name its implementations are registered under (a CPU test device's too)
    _library: str  # the module imported by the first availability(): "torch", "cupy"
    _opt_in_dtypes: tuple[str, ...] = ()  # the opt-in dtypes (e4m3) its supports() judges itself; others refused

    def __init__(self) -> None:
        self._lib: Any = None  # the imported library, once a device is found
        self._availability: Availability | None = None
        self._flush_buffer: Any = None
        # op name -> implementation: a subclass's class-level ``_impls`` where it declares one, then add_op's
        self._impls: dict[str, Any] = dict(getattr(type(self), "_impls", {}))
        self._specs: dict[str, OpSpec] = {}  # op name -> spec, from add_op

    def add_op(self, spec: OpSpec, impl: Any) -> None:
        """Run op ``spec`` with ``impl``, an :data:`Impl`: ``impl(library, inputs, out, params)`` returns a
        zero-argument call doing one run (``library`` the imported module, ``out`` a tuple for an op with several
        outputs, ``params`` complete). Cheap: nothing is imported or run here."""
        self._specs[spec.name] = spec
        self._impls[spec.name] = impl

    # -- discovery ------------------------------------------------------------------
    def availability(self) -> Availability:
        if self._availability is None:
            self._availability = self._probe()
        return self._availability

    def _probe(self) -> Availability:
        lib, unavailable = import_library(self._library)
        if unavailable is not None:
            return unavailable
        return self._probe_device(lib)

    def _probe_device(self, lib: Any) -> Availability:
        """Find the device with the imported library (setting ``_lib`` where it is available); never raises."""
        raise NotImplementedError

    def _require(self) -> Any:
        avail = self.availability()
        if not avail.ok:
            raise BackendUnavailable(self.name, avail.reason)
        return self._lib

    def _op_dtype(self, op: str, dtype: str) -> tuple[Any, Support | None]:
        """``supports``' first checks: ``(the dtype, None)``, or ``(None, why not)``."""
        if op not in self._impls:
            return None, Support(False, f"{self._library} backend has no implementation of {op!r}")
        try:
            dt = get_dtype(dtype)
        except InvalidArgumentError as exc:
            return None, Support(False, str(exc))
        if dt.opt_in and dt.name not in self._opt_in_dtypes:
            return None, Support(False, f"{self._library} backend does not run {dt} (an opt-in dtype: only the ops "
                                        "that declare it take it)")
        return dt, None

    def _impl(self, op: str) -> Any:
        """``op``'s implementation; UnknownNameError where this backend was given none (``prepare``'s first check)."""
        if op not in self._impls:
            raise UnknownNameError(f"op of the {self._library} backend", op, self._impls)
        return self._impls[op]

    def _begin(self, op: str, inputs: Sequence[Any], output: Any, params: Mapping[str, Any],
               dtype_name: Callable[[Any], str]) -> tuple[Any, Any, list[Any], Any, dict[str, Any]]:
        """``prepare``'s first steps, in the order their errors take: the library (BackendUnavailable), the op's
        implementation (UnknownNameError), the call's checks; returns ``(library, impl, inputs as a list, output
        dtype, params with defaults)``."""
        lib = self._require()
        make = self._impl(op)
        inputs = list(inputs)
        odt, full = self._check_call(op, inputs, output, params, dtype_name)
        return lib, make, inputs, odt, full

    def _check_call(self, op: str, inputs: Sequence[Any], output: Any, params: Mapping[str, Any],
                    dtype_name: Callable[[Any], str], spec: OpSpec | None = None) -> tuple[Any, dict[str, Any]]:
        """``prepare``'s argument checks: shapes and dtypes that fit the op's spec (``spec``, else the one ``add_op``
        gave); the output dtype and params."""
        spec = spec or self._specs.get(op)
        if spec is None:
            raise UnknownNameError(f"op of the {self._library} backend", op, self._specs)
        if spec.multi_output:
            if not isinstance(output, tuple) or len(output) != spec.n_outputs:
                raise InvalidArgumentError(f"{op}: pass a tuple of its {spec.n_outputs} outputs "
                                           f"({', '.join(spec.output_names)})")
            return check_call(spec, [tuple(x.shape) for x in inputs], [dtype_name(x) for x in inputs],
                              [tuple(o.shape) for o in output], [dtype_name(o) for o in output], params)
        return check_call(spec, [tuple(x.shape) for x in inputs], [dtype_name(x) for x in inputs],
                          tuple(output.shape), dtype_name(output), params)
