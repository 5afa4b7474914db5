"""NumpyBackend passes every case of every case set of every core op in every dtype, as the runner drives it.

The ``large`` set (up to 2^28 elements) and the ``models`` set (published models' shapes, up to GBs a case) run
only with ``OPRT_TEST_LARGE=1``.
"""

from __future__ import annotations

import os
import zlib

import numpy as np
import pytest

from oprt_core import operators
from oprt_core.backend import Availability, Backend, DeviceInfo, Event, Launcher
from oprt_core.dtypes import get_dtype
from oprt_core.errors import InvalidArgumentError, OprtError, UnknownNameError
from oprt_core.numpy_backend import NumpyBackend, NumpyEvent
from oprt_core.spec import CASE_SETS

RUN_LARGE = os.environ.get("OPRT_TEST_LARGE") == "1"
DTYPES = ("f32", "f16", "bf16")


def _params():
    for spec in operators.specs("core"):
        for case_set in CASE_SETS:
            marks = [] if case_set not in ("large", "models") or RUN_LARGE else [
                pytest.mark.skip(reason=f"{case_set} case set: set OPRT_TEST_LARGE=1 to run it")]
            for case in spec.cases(case_set):
                for dtype in spec.dtypes:
                    yield pytest.param(spec.name, case_set, case, dtype, marks=marks,
                                       id=f"{spec.name}-{case_set}-{case.name}-{dtype}")


def seed_of(*parts: object) -> int:
    """A fixed seed per case, stable across runs and processes (unlike hash())."""
    return zlib.crc32("/".join(map(str, parts)).encode())


@pytest.fixture(scope="module")
def backend() -> NumpyBackend:
    return operators.equip(NumpyBackend())


def run_case(be, spec, case, dtype, seed):
    params = spec.validate_params(case.param_dict, [t.shape for t in case.inputs])
    inputs = spec.make_inputs(case, dtype, np.random.default_rng(seed))
    dev_inputs = [be.to_device(x) for x in inputs]
    out = be.empty(spec.output_shape([x.shape for x in inputs], params), dtype)
    be.fill_nan(out)
    launcher = be.prepare(spec.name, dev_inputs, out, params)
    launcher()
    be.synchronize()
    return inputs, params, launcher, out


@pytest.mark.parametrize(("op", "case_set", "case", "dtype"), list(_params()))
def test_every_case(backend, op, case_set, case, dtype):
    spec = operators.spec(op)
    assert backend.supports(op, dtype, case).ok
    inputs, params, _, out = run_case(backend, spec, case, dtype, seed_of(op, case_set, case.name, dtype))
    host = backend.to_host(out)
    assert host.dtype == get_dtype(dtype).numpy and host.shape == out.shape
    # check() counts a NaN where the reference has none as an error: the poison must be overwritten everywhere
    res = spec.check(host, inputs, dtype, params)
    assert res.ok, f"{op}/{case_set}/{case.name}/{dtype}: {res.message}"


@pytest.mark.parametrize("op", list(operators.names("core")))
def test_prepare_once_run_many(backend, op):
    spec = operators.spec(op)
    case = spec.cases("smoke")[0]
    inputs, params, launcher, out = run_case(backend, spec, case, "f32", 1)
    assert isinstance(launcher, Launcher)
    first = backend.to_host(out)
    # calling the launcher again on the same buffers gives the same result
    backend.fill_nan(out)
    launcher()
    np.testing.assert_array_equal(backend.to_host(out), first)
    # run() reuses the descriptor on other buffers of the same layout
    for seed in (2, 3):
        new_inputs = spec.make_inputs(case, "f32", np.random.default_rng(seed))
        new_out = backend.empty(out.shape, "f32")
        backend.fill_nan(new_out)
        launcher.run([backend.to_device(x) for x in new_inputs], new_out)
        res = spec.check(backend.to_host(new_out), new_inputs, "f32", params)
        assert res.ok, res.message
        assert not np.array_equal(backend.to_host(new_out), first)
    # the original buffers are untouched by run() on others
    np.testing.assert_array_equal(backend.to_host(out), first)


def test_run_rejects_another_layout(backend):
    x = np.ones((4, 5), np.float32)
    out = backend.empty((4, 5), "f32")
    launcher = backend.prepare("copy", [x], out, {})
    with pytest.raises(InvalidArgumentError, match="copy: prepared for"):
        launcher.run([np.ones((5, 4), np.float32)], backend.empty((5, 4), "f32"))
    with pytest.raises(InvalidArgumentError, match="prepared for"):
        launcher.run([np.ones((4, 5), np.float16)], backend.empty((4, 5), "f16"))


def test_prepare_rejects_bad_calls(backend):
    x = np.ones((4, 5), np.float32)
    with pytest.raises(UnknownNameError, match="unknown op of the numpy backend 'nope'; valid choices: "
                                               + ", ".join(sorted(operators.names()))):
        backend.prepare("nope", [x], backend.empty((4, 5), "f32"), {})
    with pytest.raises(InvalidArgumentError, match="shape mismatch: out has shape"):
        backend.prepare("copy", [x], backend.empty((5, 4), "f32"), {})
    with pytest.raises(InvalidArgumentError, match="dtype mismatch"):
        backend.prepare("copy", [x], backend.empty((4, 5), "f16"), {})
    with pytest.raises(InvalidArgumentError, match=r"takes 2 input\(s\) \(a, b\), got 1"):
        backend.prepare("vector_add", [x], backend.empty((4, 5), "f32"), {})
    with pytest.raises(OprtError, match="axis 2 is out of range"):
        backend.prepare("softmax", [x], backend.empty((4, 5), "f32"), {"axis": 2})


def test_output_may_be_a_view(backend):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    base = np.full((4, 3), np.nan, np.float32)
    out = base.T  # a transposed, non-contiguous output
    backend.prepare("relu", [x - 5], out, {"negative_slope": 0.5})()
    np.testing.assert_array_equal(base.T, np.where(x - 5 > 0, x - 5, (x - 5) * 0.5))


def test_events_time_work(backend):
    start, end = backend.event(), backend.event()
    assert isinstance(start, Event) and isinstance(start, NumpyEvent)
    with pytest.raises(InvalidArgumentError, match="two recorded events"):
        start.elapsed_ms(end)
    start.record()
    backend.prepare("copy", [np.ones(1 << 16, np.float32)], backend.empty((1 << 16,), "f32"), {})()
    end.record()
    backend.synchronize()
    ms = start.elapsed_ms(end)
    assert isinstance(ms, float) and 0.0 <= ms < 10_000.0
    assert end.elapsed_ms(start) <= 0.0


def test_flush_cache(backend):
    backend.flush_cache()
    backend.flush_cache()  # the flush buffer is allocated once and reused
    buf = backend._flush_buffer
    assert buf is not None and (buf == 1).all()
    llc = backend.device_info().l2_bytes
    assert buf.nbytes >= 2 * (llc or 32 << 20)


def test_clean_flush(backend):
    backend.flush_cache(clean=True)
    assert (backend._flush_buffer == 1).all()


def test_discovery_methods(backend):
    assert isinstance(backend, Backend)
    assert backend.name == "numpy"
    avail = backend.availability()
    assert isinstance(avail, Availability) and avail.ok and bool(avail) and avail.device
    info = backend.device_info()
    assert isinstance(info, DeviceInfo) and info.name and info.flavour.startswith("numpy-")
    assert set(info.to_dict()) >= {"name", "vendor", "memory_bytes", "l2_bytes", "sm_count", "flavour"}
    for op in operators.names("core"):
        for dtype in DTYPES:
            assert backend.supports(op, dtype).ok
    sup = backend.supports("conv2d", "f32")
    assert not sup.ok and not sup and "conv2d" in sup.reason


def test_memory_methods(backend):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    view = base[:, ::2].T
    dev = backend.to_device(view)
    assert dev.shape == view.shape and dev.strides == view.strides  # views stay views
    host = backend.to_host(dev)
    np.testing.assert_array_equal(host, view)
    assert not np.shares_memory(host, base)
    for dtype, np_dt in (("f32", np.float32), ("f16", np.float16), ("bf16", "bfloat16")):
        e = backend.empty((3, 0, 2) if dtype == "f16" else (3, 2), dtype)
        assert e.dtype.name == np.dtype(np_dt).name
        backend.fill_nan(e)
        assert np.isnan(e.astype(np.float64)).all()
    assert backend.asarray([1.0, 2.0]).shape == (2,)


def test_add_op_teaches_a_new_op():
    be = operators.equip(NumpyBackend())
    spec = operators.spec("copy")
    be.add_op(spec, lambda inputs, out, params: np.copyto(out, 2 * inputs[0]))
    out = be.empty((3,), "f32")
    be.prepare("copy", [np.ones(3, np.float32)], out, {})()
    np.testing.assert_array_equal(out, [2, 2, 2])
    assert operators.equip(NumpyBackend()).impls["copy"] is not be.impls["copy"]  # per instance, the others untouched


def test_cpu_name_is_a_public_helper():
    """Shared with other host backends (oprt_bench's torch CPU baseline) instead of copied."""
    from oprt_core.numpy_backend import NumpyBackend, cpu_name

    name = cpu_name()
    assert isinstance(name, str) and name
    assert operators.equip(NumpyBackend()).device_info().name == name
