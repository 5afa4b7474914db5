"""One row computed in this process: the case's inputs and reference, the correctness check, the timing.

The in-process path of :class:`~oprt_bench.runners.Runners` and a backend's worker
(:mod:`oprt_bench.worker`) both fill rows with :func:`fill_row`; the worker draws the inputs from the
row's seed itself (:func:`run_row_here`), so no array crosses the pipe.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oprt_core import UnsupportedCase
from oprt_core.spec import Case, OpSpec, as_outputs

from .errors import one_line
from .faults import sticky_error, sticky_message
from .flags import row_flags
from .graph import measure_graph
from .memory import memory_refusal
from .model import BackendEntry, Row
from .peaks import compute_peak, pct_of_compute
from .shared_case import SharedCase, SharedPrepared, attach
from .telemetry import RowTelemetry
from .timing import Measurement, TimingConfig, measure

__all__ = ["Prepared", "prepare_case", "CasePreparer", "fill_row", "refused", "too_big", "run_row_here"]

# (inputs, float64 reference, setup error, inputs in float64): the arrays are None when the op lacks the dtype
# or the setup failed (then the error says why); the float64 inputs are converted once, for the reference and
# every backend's check. A multi-output op's reference is a tuple of one array per output.
Prepared = tuple[list[np.ndarray] | None, Any, str, list[np.ndarray] | None]


def _kernel_of(backend: Any) -> str | None:
    """What the backend says its last launch ran (:class:`oprt_core.backend.KernelNames`), None where it cannot say;
    a failure to ask is written into the cell, never into the row's status (the measurement stands)."""
    ask = getattr(backend, "last_launch", None)
    if ask is None:
        return None
    try:
        name: str | None = ask()
        return name
    except Exception as exc:  # noqa: BLE001 - the kernel name is a note on the row, not a result
        return "unknown (" + one_line(exc) + ")"


def _compile_s_of(launch: Any) -> float | None:
    """The seconds ``prepare`` spent compiling the launcher (a ``compile_s`` attribute: the torch-compile
    backend's), None where it compiled nothing or cannot say."""
    value = getattr(launch, "compile_s", None)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _run_backend(entry: BackendEntry, spec: OpSpec, case: Case, dtype: str, inputs: list[np.ndarray],
                 ref: Any, mode: str, timing: TimingConfig, row: Row,
                 inputs64: list[np.ndarray] | None = None) -> None:
    """Check and time one backend on one (case, dtype); fills ``row`` in place."""
    backend = entry.backend
    params = case.param_dict
    arrays: list[Any] = []
    try:
        support = backend.supports(spec.name, dtype, case)
        if not support:
            row.status, row.message = "unsupported", support.reason or "unsupported by the backend"
            return
        arrays = [backend.to_device(x) for x in inputs]
        out_shape = spec.output_shape([x.shape for x in inputs], params)  # a tuple of shapes for several outputs
        out = spec.new_outputs(backend, [x.shape for x in inputs], params, dtype)  # a tuple for a multi-output op
        arrays.append(out)
        for o in as_outputs(out):
            backend.fill_nan(o)
        launch = backend.prepare(spec.name, arrays[:-1], out, params)
        row.compile_s = _compile_s_of(launch)
        try:
            launch()
        finally:  # a launch that raised keeps what the backend names for it (the kernels it tried)
            row.kernel = _kernel_of(backend)  # the same thread, before anything else calls into the backend
        backend.synchronize()
        first = _to_host(backend, spec, out)
        check = spec.check(first, inputs, dtype, params, ref, inputs64)
        row.max_abs_err, row.max_rel_err = check.max_abs_err, check.max_rel_err
        if not check.ok:
            row.status, row.message = "failed", check.message
            return
        if mode == "test":
            row.status = "ok"
            return
        m: Measurement | None = None
        with RowTelemetry(entry.telemetry) as telemetry:  # clocks and power while the row is timed
            if timing.timer == "graph":
                m, row.timer_note = measure_graph(backend, launch, arrays[:-1], out, inputs, out_shape,
                                                  spec.output_dtype(dtype).name,  # out's (bf16 in an e4m3 row)
                                                  timing, entry.device_info)
            row.timer = "events" if m is None else "graph"
            if m is None:
                m = measure(backend, launch, timing)
        telemetry.fill(row)
        if row.timer == "graph" and entry.timer and m.summary.median_ms < (entry.timer.launch_bound_below_ms or 0.0):
            # launch-bound by the events' threshold: the events' figure beside the graph's
            row.event_median_ms = measure(backend, launch, timing).summary.median_ms
        s = m.summary
        row.status = "ok"
        row.median_ms, row.p10_ms, row.p90_ms, row.min_ms = s.median_ms, s.p10_ms, s.p90_ms, s.min_ms
        row.samples, row.ci_rel, row.stopped_by = s.samples, s.ci_rel, m.stopped_by
        if s.median_ms > 0:
            gbps = (row.bytes or 0) / (s.median_ms * 1e6)
            row.gbps = gbps
            row.tflops = row.flops / (s.median_ms * 1e9) if row.flops else None
            if entry.peak.gbps:
                row.pct_of_peak = 100.0 * gbps / entry.peak.gbps
            if entry.spec.gbps:
                row.pct_of_spec = 100.0 * gbps / entry.spec.gbps
            row.pct_of_compute = pct_of_compute(row.tflops, row.flops, row.bytes, dtype, params,
                                                compute_peak(entry.device_info))
        # a graph row's window holds no launch: only the timer's resolution bounds what it can tell apart
        floor = (entry.timer.resolution_ms if row.timer == "graph" else entry.timer.floor_ms) if entry.timer else None
        row.flags = ";".join(row_flags(
            row, floor_ms=floor,
            l2_bytes=entry.device_info.get("l2_bytes"), measured_peak_gbps=entry.peak.gbps, cold=timing.cold))
        if mode == "all":
            again = _to_host(backend, spec, out)
            # a bit-identical output needs no second check; a different one (atomics, races) gets one
            if not all(np.array_equal(a, f, equal_nan=True) for a, f in zip(as_outputs(again), as_outputs(first))):
                recheck = spec.check(again, inputs, dtype, params, ref, inputs64)
                row.max_abs_err = max(check.max_abs_err, recheck.max_abs_err)
                row.max_rel_err = max(check.max_rel_err, recheck.max_rel_err)
                if not recheck.ok:
                    row.status, row.message = "failed", "after timing: " + recheck.message
    except UnsupportedCase as exc:
        row.status, row.message = "unsupported", one_line(exc)
    except Exception as exc:  # noqa: BLE001 - one broken case is a row, the sweep goes on
        sticky = sticky_error(exc)  # named first in the row: the device context is unusable after it
        row.status, row.message = "error", sticky_message(sticky, one_line(exc)) if sticky else one_line(exc)
    finally:
        arrays.clear()


def _to_host(backend: Any, spec: OpSpec, out: Any) -> Any:
    """The output(s) on the host: one array, or a multi-output op's tuple."""
    if spec.multi_output:
        return tuple(backend.to_host(o) for o in out)
    return backend.to_host(out)


def prepare_case(spec: OpSpec, case: Case, dtype: str, seed: int) -> Prepared:
    """(inputs, float64 reference, setup error, float64 inputs) of one (case, dtype), drawn from the row's seed."""
    try:
        if dtype in spec.dtypes:
            inputs = spec.make_inputs(case, dtype, np.random.default_rng(seed))
            inputs64 = spec.inputs64(inputs)  # value inputs in float64, index inputs (targets) in int64
            for x in inputs64:  # shared by the reference and every check: a reference that writes to its inputs fails
                x.flags.writeable = False
            return inputs, spec.reference(inputs64, case.param_dict), "", inputs64
        return None, None, "", None
    except Exception as exc:  # noqa: BLE001 - the case itself is broken: every backend's row says so
        return None, None, "setting up the case: " + one_line(exc), None


def fill_row(entry: BackendEntry, spec: OpSpec, case: Case, dtype: str, prepared: Prepared, mode: str,
             timing: TimingConfig, row: Row) -> None:
    """Fill ``row`` (status, errors, timing) for one backend from the case's prepared inputs."""
    inputs, ref, setup_error, inputs64 = prepared
    if setup_error:
        row.status, row.message = "error", setup_error
    elif dtype not in spec.dtypes or inputs is None or ref is None:
        row.status, row.message = "unsupported", f"op {spec.name} does not define dtype {dtype}"
    else:
        _run_backend(entry, spec, case, dtype, inputs, ref, mode, timing, row, inputs64)


def refused(entry: BackendEntry, spec: OpSpec, case: Case, dtype: str, row: Row) -> bool:
    """Fill ``row`` as unsupported, and say so, where the backend refuses the case (``supports``), before its inputs
    and reference are drawn: a case no kernel runs costs no float64 reference (a 16384-square matmul's takes about
    a minute); as skipped where the case cannot fit in the host's or the device's memory (:func:`too_big`). A
    ``supports`` that raises is left to the row's own checks."""
    try:
        support = entry.backend.supports(spec.name, dtype, case)
    except Exception:  # noqa: BLE001 - reported by _run_backend, with the case drawn
        return False
    if support:
        return too_big(entry, spec, case, dtype, row)
    row.status, row.message = "unsupported", support.reason or "unsupported by the backend"
    return True


def too_big(entry: BackendEntry, spec: OpSpec, case: Case, dtype: str, row: Row) -> bool:
    """Fill ``row`` as skipped, naming what it needs and what there is, where the case cannot fit in memory
    (:func:`oprt_bench.memory.memory_refusal`), before anything is allocated."""
    why = memory_refusal(spec, case, dtype, entry.device_info)
    if why is None:
        return False
    row.status, row.message = "skipped", why
    return True


def run_row_here(entry: BackendEntry, spec: OpSpec, case: Case, dtype: str, row: Row, mode: str,
                 timing: TimingConfig, shared: SharedPrepared | None = None) -> Row:
    """One row computed in this process (the worker's side): inputs from ``row.seed`` (or mapped from the
    parent's ``shared`` copy), check, timing. ``row`` is the worker's own (unpickled) copy, filled and returned."""
    if shared is None and dtype in spec.dtypes and refused(entry, spec, case, dtype, row):
        return row
    if shared is None:
        fill_row(entry, spec, case, dtype, prepare_case(spec, case, dtype, int(row.seed)), mode, timing, row)
        return row
    attached = attach(shared)
    try:
        fill_row(entry, spec, case, dtype, attached.prepared, mode, timing, row)  # type: ignore[arg-type]
    finally:
        attached.close()
    return row


class CasePreparer:
    """Draws a case's inputs and reference once, on first call: for every in-process backend, and (through
    :meth:`shared`) for the workers when several run the case; a lone worker draws its own from the same seed."""

    def __init__(self, spec: OpSpec, case: Case, dtype: str, seed: int):
        self.args = (spec, case, dtype, seed)
        self.value: Prepared | None = None
        self._shared: SharedCase | None = None

    def __call__(self) -> Prepared:
        if self.value is None:
            self.value = prepare_case(*self.args)
        return self.value

    def shared(self) -> SharedPrepared:
        """The case in shared memory (made on first call), for the workers; :meth:`release` frees it."""
        if self._shared is None:
            self._shared = SharedCase(self())
        return self._shared.description

    def release(self) -> None:
        """Free the case: the arrays and their shared-memory copy (once every backend has run it)."""
        self.value = None
        if self._shared is not None:
            self._shared.close()
            self._shared = None
