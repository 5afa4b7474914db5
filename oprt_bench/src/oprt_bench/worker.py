"""Fault isolation: each backend's work runs in a worker process of its own.

A kernel that faults (segfault, illegal address, trap) kills the worker, not the sweep; one that
hangs past the case timeout is killed; one that leaves the device context unusable (a sticky device
error, :mod:`oprt_bench.faults`, or an error row after which the backend cannot synchronize) makes the
worker leave. Either way the row becomes ``error`` with the reason, the worker is replaced (lazily,
before the backend's next row) and the sweep goes on. See docs/reliability.md.

Design:

- Workers start with the ``forkserver`` context where it exists (Linux), else ``spawn``: never a
  ``fork`` of a parent that may have initialised CUDA. The fork server preloads only this module
  (numpy, oprt_core, no device runtime), so a replacement worker starts in milliseconds.
- The worker rebuilds its backend itself (:class:`~oprt_bench.model.WorkerSource`): from the installed
  entry points (``get_registry()`` in the child, under the same ``OPRT_*`` environment) when the sweep's
  registry is the process-wide one, else from a pickled copy of the backend object or, failing that, by calling
  its class (importable, no arguments) -- in-process test backends -- with the core op specs. A
  backend that can be none of these runs in-process, with a note.
- The parent sends one small message per row (a pickled :class:`~oprt_bench.model.RowTask`: the
  backend's entry without its backend object, op name, case, dtype, the row with its fixed columns and
  seed) and receives the finished :class:`~oprt_bench.model.Row`. The worker draws the inputs from the
  row's seed and computes the float64 reference itself, so no array crosses the pipe; it keeps the backend (its context,
  streams, flush buffer) alive between rows. Calibration runs in the worker too.
- The worker ignores SIGINT (Ctrl-C reaches the parent, which stops the workers) and dies with
  its parent (``PR_SET_PDEATHSIG`` on Linux; EOF on the pipe elsewhere).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from oprt_core import operators

from .calibrate import Calibration, TimerCheck, calibrate, timer_check
from .errors import one_line
from .execute import run_row_here
from .faults import STICKY_TAG, error_in_text, is_sticky, sticky_error, sticky_message
from .model import ISOLATIONS, CalibrationTask, Row, RowTask, WorkerSource
from .timing import flush

__all__ = ["ISOLATIONS", "WorkerSource", "WorkerFailure", "BackendWorker", "worker_source", "mp_context",
           "describe_exit", "is_sticky", "broken_context"]

START_TIMEOUT_S = 120.0  # spawning a worker and building its backend (imports, plugin loading)
MAX_WAIT_S = 3600.0  # one wait's slice: the OS refuses huge timeouts, a longer one is waited for in slices


def broken_context(backend: Any, message: str) -> str | None:
    """After an ``error`` row in a worker: the row's new message when the device context is unusable (the worker
    must leave), else None. Sticky when the message names a sticky error (:mod:`oprt_bench.faults`), or when a
    synchronize of the backend, the probe for errors the table does not know, fails."""
    if is_sticky(message):
        if STICKY_TAG + ")" in message:
            return message.replace(STICKY_TAG + ")", STICKY_TAG + "; worker replaced)", 1)
        named = error_in_text(message)
        return f"{named.fault if named else 'device fault'} {STICKY_TAG}; worker replaced): {message}"
    try:
        backend.synchronize()
    except Exception as exc:  # noqa: BLE001 - any failure: the context cannot be trusted with the next row
        named = sticky_error(exc)
        return (f"{named.fault if named else 'device context unusable'} {STICKY_TAG}, found by a synchronize "
                f"after the error; worker replaced): {message}; then {one_line(exc)}")
    return None


def worker_source(registry: Any, name: str, op_names: list[str]) -> WorkerSource | str:
    """The :class:`WorkerSource` of backend ``name``, or why it must run in-process."""
    from oprt_core import plugins

    default = plugins.get_registry.cache_info().currsize and registry is plugins.get_registry()
    if default:
        return WorkerSource(name, "entrypoints")
    # the built-in ops (core, model and compute-bound ops) are in every worker's registry
    builtin = operators.names()
    missing = [op for op in op_names if op not in builtin]
    if missing:
        return f"ops {', '.join(missing)} are not built-in ops and the registry is not the installed one"
    backend = registry.get_backend(name)
    try:
        payload = pickle.dumps(backend)
        pickle.loads(payload)
        return WorkerSource(name, "pickle", payload)
    except Exception as exc:  # noqa: BLE001 - any reason means: try the class
        why = f"{type(exc).__name__}: {exc}"
    # a factory: the backend's class, importable by name and constructible without arguments
    cls = type(backend)
    try:
        if "<locals>" in cls.__qualname__:
            raise TypeError(f"{cls.__qualname__} is a local class")
        payload = pickle.dumps(cls)
        fresh = cls()
        if getattr(fresh, "name", None) != name:
            raise TypeError(f"{cls.__qualname__}() is named {getattr(fresh, 'name', None)!r}, not {name!r}")
        return WorkerSource(name, "class", payload)
    except Exception as exc:  # noqa: BLE001 - any reason means: in-process
        return (f"the backend object cannot be sent to a worker ({why}) nor rebuilt from its class "
                f"({type(exc).__name__}: {exc})")


def mp_context() -> Any:
    """``forkserver`` (preloading this module) where available, else ``spawn``; never ``fork``."""
    if "forkserver" in multiprocessing.get_all_start_methods() and sys.platform != "darwin":
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload([__name__])
        return ctx
    return multiprocessing.get_context("spawn")


def describe_exit(exitcode: int | None) -> str:
    """``killed by SIGSEGV (signal 11)`` / ``exited with status 3``."""
    if exitcode is None:
        return "still running"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"killed by {name} (signal {-exitcode})"
    return f"exited with status {exitcode}"


_START_LOCK = threading.Lock()  # sys.modules["__main__"] is swapped while a process starts: one start at a time


@contextlib.contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Start a worker without re-importing the parent's ``__main__`` in it (spawn and forkserver do, to find
    targets defined there): the target lives in this module, and a script's top level (a user's driver,
    ``python -c``) must not run again in every worker."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


class WorkerFailure(Exception):
    """The worker died, hung past its timeout, or could not start; ``str()`` is the row's reason."""


# -- the worker process ---------------------------------------------------------------------------

def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except Exception:  # noqa: BLE001 - best effort; EOF on the pipe still ends an idle worker
            pass


def _worker_main(conn: Any, source: WorkerSource, environ: dict[str, str], prime_flush: str | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    # the fork server's environment is the parent's when the server started; the worker gets today's
    os.environ.clear()
    os.environ.update(environ)
    try:
        _serve(conn, source, prime_flush)
    except (BrokenPipeError, ConnectionResetError, EOFError):
        # the parent went away (a run refused after its workers started, Ctrl-C): nothing to report, no traceback
        return


def _serve(conn: Any, source: WorkerSource, prime_flush: str | None) -> None:
    try:
        backend, registry = source.load()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which decides
        conn.send(("init-error", one_line(exc)))
        return
    if prime_flush is not None:
        # cold rows flush before every sample: the first flush allocates and first touches the flush buffer (2 s
        # for numpy's 520 MiB on a host reporting a 260 MiB L3), a cost of the worker's start, not of its first row
        # (which a short --case-timeout would kill); a failure here is the rows' to report
        try:
            flush(backend, prime_flush)
            backend.synchronize()
        except Exception:  # noqa: BLE001
            pass
    conn.send(("ready", None))
    while True:
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError):
            return
        if kind == "close":
            return
        try:
            result = _HANDLERS[kind](backend, registry, payload)
            if _must_leave(backend, result):
                # a sticky device error (an illegal address, a trap): every later call in this context would
                # fail too, so this worker leaves and the next row gets a fresh one
                conn.send(("ok-restart", result))
                return
            conn.send(("ok", result))
        except Exception as exc:  # noqa: BLE001 - the runner catches what a row may raise; calibration raises
            text = one_line(exc) + " | " + "".join(traceback.format_exc(limit=5)).strip()
            named = sticky_error(exc)
            if named is not None:  # a calibration that met a sticky error: this worker cannot go on either
                conn.send(("error-restart", sticky_message(named, text)))
                return
            conn.send(("error", text))


def _must_leave(backend: Any, result: Any) -> bool:
    """Whether the device context is unusable after ``result`` (an ``error`` row, a calibration or timer check
    with an error): its message then says so (:func:`broken_context`)."""
    if isinstance(result, Row):
        parts: list[tuple[Any, str]] = [(result, "message")] if result.status == "error" else []
    else:
        found = result if isinstance(result, tuple) else ()
        parts = [(part, "error") for part in found if getattr(part, "error", "")]
    for part, field in parts:
        broken = broken_context(backend, getattr(part, field) or "")
        if broken is not None:
            setattr(part, field, broken)
            return True
    return False


def _do_calibrate(backend: Any, registry: Any, task: CalibrationTask) -> tuple[Calibration, TimerCheck]:
    cal = calibrate(backend, task.device_info, flush=task.flush)
    timer = timer_check(backend, cold=task.cold, flush=task.flush)
    return cal, timer


def _do_row(backend: Any, registry: Any, task: RowTask) -> Row:
    entry = replace(task.entry, backend=backend)
    return run_row_here(entry, registry.get_op(task.op), task.case, task.dtype, task.row, task.mode, task.timing,
                        task.shared)


_HANDLERS: dict[str, Callable[[Any, Any, Any], Any]] = {"calibrate": _do_calibrate, "row": _do_row}


# -- the parent's handle ----------------------------------------------------------------------------

class BackendWorker:
    """The parent's end of one backend's worker: starts it on first use, replaces it after a failure."""

    def __init__(self, source: WorkerSource, ctx: Any | None = None, start_timeout_s: float = START_TIMEOUT_S,
                 prime_flush: str | None = None):
        self.source = source
        self.prime_flush = prime_flush  # the cold flush (dirty | clean) each new worker runs once before "ready"
        self.ctx = ctx or mp_context()
        self.start_timeout_s = start_timeout_s
        self.proc: Any = None
        self.conn: Any = None
        self.starts = 0  # how many worker processes were started (1 + replacements)
        self.restarts_after_device_error = 0
        self.start_error = ""
        self.cancelled = False  # cancel(): no process starts after it

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.is_alive()

    def start(self) -> float:
        """Start the worker now if it is not running (a failure is kept for the first call to report);
        returns the seconds it took."""
        t0 = time.monotonic()
        if not self.alive and not self.start_error:
            try:
                self._start()
            except WorkerFailure:
                pass  # start_error says why; the backend's first call raises it as its row's reason
        return time.monotonic() - t0

    def _start(self) -> None:
        parent, child = self.ctx.Pipe(duplex=True)
        proc = self.ctx.Process(target=_worker_main, args=(child, self.source, dict(os.environ), self.prime_flush),
                                daemon=True,
                                name=f"oprt-bench worker {self.source.backend}")
        with _START_LOCK, _main_module_hidden():  # workers start from several threads (Runners.start_all)
            if self.cancelled:
                child.close()
                parent.close()
                raise WorkerFailure("the run ended before this worker started")
            proc.start()
            self.proc, self.conn = proc, parent
        child.close()
        self.starts += 1
        try:
            kind, payload = self._receive(self.start_timeout_s, "starting the worker")
        except WorkerFailure as exc:
            self.start_error = str(exc)
            raise
        if kind != "ready":
            self._kill()
            self.start_error = f"the worker could not load backend {self.source.backend!r}: {payload}"
            raise WorkerFailure(self.start_error)

    def _receive(self, timeout_s: float, doing: str) -> tuple[str, Any]:
        deadline = time.monotonic() + timeout_s
        sentinel = self.proc.sentinel
        while True:
            left = deadline - time.monotonic()
            # waited in slices: the OS refuses a huge timeout (OverflowError), the loop re-checks the deadline
            ready = multiprocessing.connection.wait([self.conn, sentinel], timeout=min(max(0.0, left), MAX_WAIT_S))
            if self.conn in ready:
                try:
                    return self.conn.recv()
                except (EOFError, OSError):
                    pass  # died while (or instead of) answering: the sentinel tells how
            if sentinel in ready or self.conn in ready:
                self.proc.join(5)
                code = self.proc.exitcode
                self._kill()
                raise WorkerFailure(f"worker crashed {doing}: {describe_exit(code)}; worker replaced")
            if left <= 0:
                self._kill()
                raise WorkerFailure(f"timed out after {_secs(timeout_s)} s {doing} (worker killed and replaced)")

    def call(self, kind: str, payload: Any, timeout_s: float, doing: str = "running the case") -> Any:
        """Send one command and wait for its answer; raises WorkerFailure (the worker is then gone)."""
        if self.start_error:
            raise WorkerFailure(self.start_error)
        if not self.alive:
            self._start()
        try:
            self.conn.send((kind, payload))
        except (OSError, ValueError) as exc:
            self._kill()
            raise WorkerFailure(f"worker unreachable: {exc}; worker replaced") from None
        status, result = self._receive(timeout_s, doing)
        if status == "ok-restart":
            self._kill()
            self.restarts_after_device_error += 1
            return result
        if status == "error-restart":
            self._kill()
            self.restarts_after_device_error += 1
            raise WorkerFailure(f"worker error: {result}; worker replaced")
        if status != "ok":
            raise WorkerFailure(f"worker error: {result}")
        return result

    def _kill(self) -> None:
        proc, conn = self.proc, self.conn
        self.proc = self.conn = None
        if conn is not None:
            conn.close()
        if proc is not None:
            if proc.is_alive():
                proc.kill()
            proc.join(10)
            try:
                proc.close()
            except ValueError:
                pass

    def cancel(self) -> None:
        """Stop a worker whose start may still be under way in another thread (a run refused before it needed the
        worker): no process starts after this, and one started is killed. A process left to die with this one
        could be cut off mid-handshake and print multiprocessing's EOFError traceback."""
        with _START_LOCK:  # a start under way finishes its handshake first
            self.cancelled = True
            proc = self.proc
        if proc is not None and proc.is_alive():
            proc.kill()

    def close(self) -> None:
        """Stop the worker: ask it to leave, kill it if it does not within a second."""
        if self.proc is not None and self.proc.is_alive() and self.conn is not None:
            try:
                self.conn.send(("close", None))
                self.proc.join(1.0)
            except (OSError, ValueError):
                pass
        self._kill()


def _secs(value: float) -> str:
    return f"{value:g}"
