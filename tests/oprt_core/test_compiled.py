"""CompiledBackend and DeviceArray, on the host (CPU) implementation of oprt.h."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest
from op_helpers import host_ops

import oprt_core.errors as E
from oprt_core import cdecl, operators
from oprt_core.backend import Availability, Backend, DeviceInfo, Launcher
from oprt_core.cabi import abi_version
from oprt_core.compiled import FLUSH_MIN_BYTES, CompiledBackend, CompiledEvent, DeviceArray, entry_points
from oprt_core.dtypes import DTYPES
from oprt_core.plugins import get_registry
from oprt_core.spec import as_outputs

DTYPE_NAMES = tuple(DTYPES)


def run_case(backend, spec, case, dtype, seed=0):
    """The measurement protocol: fresh inputs, NaN-poisoned output, prepare, run, compare with float64."""
    inputs = spec.make_inputs(case, dtype, np.random.default_rng(seed))
    params = spec.validate_params(case.param_dict)
    dev_inputs = [backend.to_device(x) for x in inputs]
    out = spec.new_outputs(backend, [x.shape for x in inputs], params, dtype)  # a tuple for a multi-output op
    for o in as_outputs(out):
        backend.fill_nan(o)
    launcher = backend.prepare(spec.name, dev_inputs, out, params)
    launcher()
    backend.synchronize()
    host = tuple(backend.to_host(o) for o in as_outputs(out))
    result = spec.check(host if spec.multi_output else host[0], inputs, dtype, params)
    return result, launcher, inputs, dev_inputs, out


DEFAULT_MAX_NUMEL = 1 << 20  # the default sets' larger cases take seconds each on the host library


def _case_params():
    for spec in cdecl.c_abi_ops():
        if spec.name not in host_ops():
            continue
        for case_set in ("smoke", "edge", "default"):
            for case in spec.cases(case_set):
                if case_set == "default" and case.numel > DEFAULT_MAX_NUMEL:
                    continue
                for dtype in DTYPE_NAMES:
                    yield pytest.param(spec.name, case, dtype, id=f"{case_set}-{case}-{dtype}")


@pytest.mark.parametrize("op, case, dtype", list(_case_params()))
def test_case_sets(host_backend, op, case, dtype):
    assert host_backend.supports(op, dtype, case)
    result, *_ = run_case(host_backend, get_registry().get_op(op), case, dtype)
    assert result.ok, result.message


# ---------------------------------------------------------------------------------------------
# protocol, construction, loading


def test_is_a_backend(host_backend):
    assert isinstance(host_backend, Backend)


def test_construction_is_cheap_and_load_is_cached(host_lib_path, make_host_loader):
    calls = []
    load = make_host_loader(host_lib_path)

    def loader():
        calls.append(1)
        return load()

    backend = CompiledBackend("host", loader)
    assert backend.supports("softmax", "bf16")
    assert calls == []
    assert backend.availability().ok
    backend.empty((3,), "f32")
    backend.availability()
    assert calls == [1]


def test_availability_and_device_info(host_backend):
    avail = host_backend.availability()
    assert avail == Availability(True, avail.reason, "host-cpu") and "host-cpu" in avail.reason
    info = host_backend.device_info()
    assert isinstance(info, DeviceInfo)
    assert info.name == "host-cpu" and info.vendor == "host"
    assert info.memory_bytes > 0 and info.l2_bytes > 0 and info.sm_count >= 1 and info.warp_size == 1
    assert info.spec_peak_gbps == pytest.approx(2 * 1_600_000e3 * 64 / 8 / 1e9)
    assert info.flavour.startswith("host-c ") and info.toolkit in info.flavour
    assert info.driver_version
    lib_info = host_backend.library_info()
    assert lib_info["abi_version"] == abi_version() and lib_info["backend"] == "host"
    assert info.to_dict()["extra"]["library"] == lib_info


def test_supports(host_backend):
    for op in operators.names("core"):
        for dtype in DTYPE_NAMES:
            assert host_backend.supports(op, dtype) or op not in host_ops()
    no = host_backend.supports("gelu", "f32")
    assert not no and "gelu" in no.reason
    no = host_backend.supports("copy", "f64")
    assert not no and "f64" in no.reason


def test_an_op_of_oprt_h_the_library_lacks_is_unsupported(host_lib_path, make_host_loader):
    """A library built before an op was added to oprt.h has none of its entry points: supports() says so (after
    the library loads), rather than prepare() failing."""
    load = make_host_loader(host_lib_path)
    op = operators.names("core")[-1]
    missing = set(entry_points(op))

    def load_without_op():
        mod = load()

        class Lacking:  # the library as built without the op's kernel source
            def __getattr__(self, name):
                if name in missing:
                    raise AttributeError(name)
                return getattr(mod.lib, name)

        return SimpleNamespace(ffi=mod.ffi, lib=Lacking())

    backend = CompiledBackend("host", load_without_op, vendor="host")
    assert backend.availability().ok
    sup = backend.supports(op, "f32")
    assert not sup.ok and f"does not implement {op!r}" in sup.reason
    assert all(backend.supports(other, "f32") for other in operators.names("core")[:-1] if other in host_ops())


def test_loader_that_raises_gives_unavailable():
    calls = []

    def loader():
        calls.append(1)
        raise ImportError("No module named 'oprt_nvidia._oprt_nvidia'")

    backend = CompiledBackend("nvidia", loader, cuda_interop=True)
    avail = backend.availability()
    assert not avail.ok
    assert avail.reason.startswith("extension failed to import: ") and "_oprt_nvidia" in avail.reason
    assert not backend.availability().ok and calls == [1]  # the failure is cached too
    with pytest.raises(E.BackendUnavailable, match="extension failed to import"):
        backend.empty((3,), "f32")
    with pytest.raises(E.BackendUnavailable):
        backend.device_info()


@pytest.mark.parametrize("exc", [OSError("cannot open shared object file"), RuntimeError("boom"),
                                 AttributeError("no ffi")])
def test_loader_failures_never_raise_from_availability(exc):
    def loader():
        raise exc

    avail = CompiledBackend("x", loader).availability()
    assert not avail.ok and str(exc) in avail.reason


def test_loader_without_ffi_or_lib():
    avail = CompiledBackend("x", lambda: SimpleNamespace(lib=None)).availability()
    assert not avail.ok and "extension failed to import" in avail.reason


class _Proxy:
    """A fake lib: the real one with some attributes replaced or hidden."""

    def __init__(self, lib, hide=(), **override):
        self._lib, self._hide, self._override = lib, set(hide), override

    def __getattr__(self, name):
        if name in self._hide:
            raise AttributeError(f"function/symbol {name!r} not found in library")
        if name in self._override:
            return self._override[name]
        return getattr(self._lib, name)


def test_abi_version_mismatch(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib

    def fake_info(info):
        status = lib.oprt_get_library_info(info)
        info.abi_version = abi_version() + 41
        return status

    fake = _Proxy(lib, oprt_get_library_info=fake_info)
    backend = CompiledBackend("nvidia", lambda: SimpleNamespace(ffi=ffi, lib=fake))
    avail = backend.availability()
    assert not avail.ok
    assert "ABI version mismatch" in avail.reason
    assert f"version {abi_version() + 41}" in avail.reason and f"expects version {abi_version()}" in avail.reason
    assert "rebuild" in avail.reason and "pip install" in avail.reason and "oprt_nvidia" in avail.reason
    with pytest.raises(E.BackendUnavailable, match="ABI version mismatch"):
        backend.prepare("copy", [np.ones(3, np.float32)], None, {})



def test_abi_wrapper_mismatch(host_raw):
    """The cffi wrapper's OPRT_ABI_VERSION is compared in the same check as the library's."""
    ffi, lib = host_raw.ffi, host_raw.lib
    fake = _Proxy(lib, OPRT_ABI_VERSION=abi_version() + 2)
    avail = CompiledBackend("nvidia", lambda: SimpleNamespace(ffi=ffi, lib=fake)).availability()
    assert not avail.ok
    assert "ABI version mismatch" in avail.reason
    assert f"wrapper was built for version {abi_version() + 2}" in avail.reason


def test_no_device_second_copy(tmp_path, build_host_lib, make_host_loader, monkeypatch):
    path = build_host_lib(tmp_path, "liboprt_host_nodev")
    monkeypatch.setenv("OPRT_HOST_DEVICE_COUNT", "0")
    backend = CompiledBackend("host", make_host_loader(path))
    avail = backend.availability()
    assert not avail.ok
    assert "no host device found" in avail.reason and "OPRT_HOST_DEVICE_COUNT=0" in avail.reason
    with pytest.raises(E.NoDeviceError, match="OPRT_HOST_DEVICE_COUNT=0") as info:
        backend.empty((4,), "f32")
    assert isinstance(info.value, E.BackendUnavailable) and info.value.reason
    info = backend.device_info()  # the build is still described without a device
    assert info.name == "" and info.flavour.startswith("host-c") and "OPRT_HOST_DEVICE_COUNT=0" in info.extra[
        "device_error"]


def test_no_device_in_a_fresh_process(host_lib_path):
    code = textwrap.dedent(f"""
        import os, cffi
        from types import SimpleNamespace
        from oprt_core.cabi import cdef
        from oprt_core.compiled import CompiledBackend
        def load():
            ffi = cffi.FFI(); ffi.cdef(cdef())
            return SimpleNamespace(ffi=ffi, lib=ffi.dlopen({str(host_lib_path)!r}))
        avail = CompiledBackend("host", load).availability()
        print(avail.ok, avail.reason)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "OPRT_HOST_DEVICE_COUNT": "0"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("False ") and "OPRT_HOST_DEVICE_COUNT=0" in proc.stdout


def test_device_index_out_of_range(host_lib_path, make_host_loader, host_backend):
    backend = CompiledBackend("host", make_host_loader(host_lib_path), device=3)
    avail = backend.availability()
    assert not avail.ok and "out of range" in avail.reason
    with pytest.raises(E.BadDeviceError, match=r"device index 3 is out of range \(valid: 0..0\)"):
        backend.empty((2,), "f32")
    with pytest.raises(E.BadDeviceError):
        host_backend.set_device(5)
    host_backend.set_device(0)


def test_op_missing_from_the_library(host_raw):
    hidden = ("oprt_create_softmax_descriptor", "oprt_softmax")
    backend = CompiledBackend("partial", lambda: SimpleNamespace(ffi=host_raw.ffi,
                                                                 lib=_Proxy(host_raw.lib, hide=hidden)))
    x = backend.to_device(np.ones((2, 3), np.float32))
    with pytest.raises(E.UnsupportedCase, match="does not implement 'softmax'"):
        backend.prepare("softmax", [x], backend.empty((2, 3), "f32"), {"axis": -1})
    backend.prepare("copy", [x], backend.empty((2, 3), "f32"), {})()


def test_unsupported_case_from_the_library(host_backend, monkeypatch):
    monkeypatch.setenv("OPRT_HOST_UNSUPPORTED_OPS", "softmax")
    x = host_backend.to_device(np.ones((2, 3), np.float32))
    with pytest.raises(E.UnsupportedCaseError, match="softmax is not supported") as info:
        host_backend.prepare("softmax", [x], host_backend.empty((2, 3), "f32"), {})
    assert isinstance(info.value, E.UnsupportedCase)


# ---------------------------------------------------------------------------------------------
# memory and DeviceArray


def _views():
    base = np.arange(60, dtype=np.float32).reshape(6, 10)
    return {
        "contiguous": base,
        "transposed": base.T,
        "step2": base[:, ::2],
        "odd-offset": base.reshape(-1)[1:60:3],
        "negative": base[::-1, ::-3],
        "broadcast": np.broadcast_to(base[2], (4, 10)),
        "zero-size": base[:0],
        "zero-size-strided": base[:, 3:3],
        "0-d": np.array(3.5, np.float32),
        "0-d-view": base[2, 3],
    }


@pytest.mark.parametrize("name", list(_views()))
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_to_device_keeps_layout(host_backend, name, dtype):
    host = np.asarray(_views()[name])
    host = host.astype(DTYPES[dtype].numpy) if name in ("contiguous", "0-d") else host
    if host.dtype != DTYPES[dtype].numpy:  # keep the view: build it again on a base of this dtype
        base = np.arange(60, dtype=np.float32).reshape(6, 10).astype(DTYPES[dtype].numpy)
        host = {"transposed": base.T, "step2": base[:, ::2], "odd-offset": base.reshape(-1)[1:60:3],
                "negative": base[::-1, ::-3], "broadcast": np.broadcast_to(base[2], (4, 10)),
                "zero-size": base[:0], "zero-size-strided": base[:, 3:3], "0-d-view": base[2, 3]}[name]
        host = np.asarray(host)
    dev = host_backend.to_device(host)
    assert isinstance(dev, DeviceArray)
    assert dev.shape == host.shape and dev.strides == host.strides and dev.dtype == host.dtype
    assert dev.strides_elements == tuple(s // host.itemsize for s in host.strides)
    assert dev.ndim == host.ndim and dev.size == host.size and dev.nbytes == host.nbytes
    back = host_backend.to_host(dev)
    assert back.flags.c_contiguous and back.dtype == host.dtype
    np.testing.assert_array_equal(back, host)
    assert dev.get().tolist() == host.tolist()


def test_empty_and_fill_nan(host_backend):
    for dtype in DTYPE_NAMES:
        arr = host_backend.empty((3, 5), dtype)
        assert arr.shape == (3, 5) and arr.strides_elements == (5, 1) and arr.is_contiguous
        host_backend.fill_nan(arr)
        assert np.isnan(host_backend.to_host(arr).astype(np.float32)).all()
    zero = host_backend.empty((0, 4), "f16")
    host_backend.fill_nan(zero)
    assert host_backend.to_host(zero).shape == (0, 4)
    scalar = host_backend.empty((), "bf16")
    host_backend.fill_nan(scalar)
    assert np.isnan(float(host_backend.to_host(scalar)))
    with pytest.raises(E.InvalidArgumentError):
        host_backend.empty((-1, 3), "f32")
    with pytest.raises(E.UnknownNameError):
        host_backend.empty((3,), "f64")


def test_fill_nan_of_a_strided_view_poisons_only_its_span(host_backend):
    host = np.zeros(12, np.float32)
    dev = host_backend.to_device(host[2:10:2])
    host_backend.fill_nan(dev)
    assert np.isnan(host_backend.to_host(dev)).all()


def test_memory_is_freed_when_the_last_reference_goes(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    freed = []

    def free(ptr):
        freed.append(int(ffi.cast("uintptr_t", ptr)))
        return lib.oprt_free(ptr)

    backend = CompiledBackend("counting", lambda: SimpleNamespace(ffi=ffi, lib=_Proxy(lib, oprt_free=free)))
    dev = backend.to_device(np.arange(10, dtype=np.float32)[::-1])
    view = DeviceArray(backend, dev.ptr, (2,), (-1,), "f32", dev.owner)
    del dev
    gc.collect()
    assert freed == []
    assert backend.to_host(view).tolist() == [9.0, 8.0]
    del view
    gc.collect()
    assert len(freed) == 1


def test_asarray(host_backend, host_lib_path, make_host_loader):
    dev = host_backend.to_device(np.arange(6, dtype=np.float16))
    assert host_backend.asarray(dev) is dev
    from_numpy = host_backend.asarray(np.arange(4, dtype=np.float32))
    assert isinstance(from_numpy, DeviceArray) and host_backend.to_host(from_numpy).tolist() == [0, 1, 2, 3]
    for bad in ([1.0, 2.0], "x", 3.0, None):
        with pytest.raises(E.InvalidArgumentError, match="DeviceArray"):
            host_backend.asarray(bad)
    with pytest.raises(E.UnknownNameError):
        host_backend.asarray(np.zeros(3, np.float64))
    other = CompiledBackend("other", make_host_loader(host_lib_path))
    with pytest.raises(E.InvalidArgumentError, match="belongs to backend"):
        other.asarray(dev)


class _Foreign:
    """A stand-in for a CuPy array or torch tensor: only __cuda_array_interface__."""

    def __init__(self, cai):
        self.__cuda_array_interface__ = cai


def test_cuda_array_interface(host_lib_path, make_host_loader):
    cuda = CompiledBackend("cudalike", make_host_loader(host_lib_path), cuda_interop=True)
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    dev = cuda.to_device(host)
    cai = dev.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (3, 4) and cai["typestr"] == "<f4"
    assert cai["data"] == (dev.ptr, False) and cai["strides"] is None
    t = cuda.to_device(host.T)
    assert t.__cuda_array_interface__["strides"] == host.T.strides
    assert cuda.to_device(host.astype(DTYPES["bf16"].numpy)).__cuda_array_interface__["typestr"] == "<V2"
    assert cuda.to_device(host.astype(np.float16)).__cuda_array_interface__["typestr"] == "<f2"
    # zero copy in: an op writing through the foreign view is seen by the owner
    foreign = _Foreign(dict(dev.__cuda_array_interface__))
    view = cuda.asarray(foreign)
    assert view.ptr == dev.ptr and view.owner is foreign and view.shape == (3, 4)
    cuda.prepare("relu", [view], view, {"negative_slope": 0.0})()  # in place is allowed for elementwise ops
    np.testing.assert_array_equal(cuda.to_host(dev), host)
    neg_dev = cuda.to_device(-host)  # the producer keeps its memory alive, as a CuPy array would
    neg = _Foreign(dict(neg_dev.__cuda_array_interface__))
    cuda.prepare("copy", [neg], view, {})()
    np.testing.assert_array_equal(cuda.to_host(dev), -host)
    strided = _Foreign(dict(t.__cuda_array_interface__))
    assert cuda.asarray(strided).strides_elements == (1, 4)
    bf_dev = cuda.to_device(host.astype(DTYPES["bf16"].numpy))
    bf = _Foreign(dict(bf_dev.__cuda_array_interface__))
    assert cuda.asarray(bf).dtype_info.name == "bf16"


def test_cuda_array_interface_errors(host_lib_path, make_host_loader, host_backend):
    cuda = CompiledBackend("cudalike", make_host_loader(host_lib_path), cuda_interop=True)
    dev = cuda.to_device(np.arange(4, dtype=np.float32))
    cai = dev.__cuda_array_interface__
    with pytest.raises(E.InvalidArgumentError, match="typestr '<f8'"):
        cuda.asarray(_Foreign({**cai, "typestr": "<f8"}))
    with pytest.raises(E.InvalidArgumentError, match="not multiples"):
        cuda.asarray(_Foreign({**cai, "strides": (6,)}))
    readonly = cuda.asarray(_Foreign({**cai, "data": (cai["data"][0], True)}))
    with pytest.raises(E.InvalidArgumentError, match="read-only"):
        cuda.prepare("copy", [dev], readonly, {})
    # a backend that is not CUDA-like exports nothing
    assert not hasattr(host_backend.empty((2,), "f32"), "__cuda_array_interface__")


class _NeedsGrad:
    """As torch is for a tensor that requires grad: __cuda_array_interface__ raises RuntimeError."""

    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. If gradients "
                           "aren't required, use var.detach() to get Variable that doesn't require grad.")


class _Float8:
    """As torch is for a dtype outside its typestr table (float8_e4m3fn): __cuda_array_interface__ raises KeyError."""

    @property
    def __cuda_array_interface__(self):
        raise KeyError("torch.float8_e4m3fn")


def test_array_whose_interface_raises_is_an_invalid_argument(host_lib_path, make_host_loader):
    """torch's RuntimeError for a tensor that requires grad reaches the caller as InvalidArgumentError, torch's
    advice kept (the op API's side: tests/oprt_core/test_ops_api.py)."""
    cuda = CompiledBackend("cudalike", make_host_loader(host_lib_path), cuda_interop=True)
    with pytest.raises(E.InvalidArgumentError, match="cannot use this _NeedsGrad: .*requires grad.*detach"):
        cuda.asarray(_NeedsGrad())
    with pytest.raises(E.InvalidArgumentError, match="no typestr for dtype torch.float8_e4m3fn .supported: f32"):
        cuda.asarray(_Float8())


# ---------------------------------------------------------------------------------------------
# prepare and launchers


def test_launcher_reuse_across_buffers(host_backend):
    spec = operators.spec("softmax")
    rng = np.random.default_rng(3)
    x1 = rng.standard_normal((5, 7)).astype(np.float32)
    x2 = rng.standard_normal((5, 7)).astype(np.float32)
    d1, d2 = host_backend.to_device(x1), host_backend.to_device(x2)
    o1, o2 = host_backend.empty((5, 7), "f32"), host_backend.empty((5, 7), "f32")
    launcher = host_backend.prepare("softmax", [d1], o1, {"axis": 0})
    assert isinstance(launcher, Launcher)
    launcher()
    launcher.run([d2], o2)
    assert spec.check(host_backend.to_host(o1), [x1], "f32", {"axis": 0}).ok
    assert spec.check(host_backend.to_host(o2), [x2], "f32", {"axis": 0}).ok
    # many runs on one descriptor
    for _ in range(3):
        launcher.run([d1], o2)
    np.testing.assert_array_equal(host_backend.to_host(o2), host_backend.to_host(o1))
    # numpy inputs are copied to the device
    launcher.run([x2], o1)
    assert spec.check(host_backend.to_host(o1), [x2], "f32", {"axis": 0}).ok


@pytest.mark.parametrize(
    "make_other",
    [
        lambda b: ([b.to_device(np.ones((7, 5), np.float32))], b.empty((5, 7), "f32")),          # shape
        lambda b: ([b.to_device(np.ones((7, 5), np.float32).T)], b.empty((5, 7), "f32")),        # strides
        lambda b: ([b.to_device(np.ones((5, 7), np.float16))], b.empty((5, 7), "f16")),          # dtype
        lambda b: ([b.to_device(np.ones((5, 7), np.float32))], b.to_device(np.ones((7, 5), np.float32).T)),  # out
    ],
    ids=["shape", "strides", "dtype", "out-strides"],
)
def test_launcher_run_checks_layout(host_backend, make_other):
    launcher = host_backend.prepare("relu", [host_backend.to_device(np.ones((5, 7), np.float32))],
                                    host_backend.empty((5, 7), "f32"), {})
    inputs, out = make_other(host_backend)
    with pytest.raises(E.InvalidArgumentError, match="prepared for"):
        launcher.run(inputs, out)


def test_launcher_on_a_stream(host_backend):
    """on_stream: the launch with a stream handle in place of the default stream, on the prepared buffers or on
    others of the same layout; the library sees the handle (the host library refuses one it did not create)."""
    ffi, lib = host_backend.ffi, host_backend.lib
    made = ffi.new("oprt_stream_t *")
    host_backend.check(lib.oprt_stream_create(made))
    handle = int(ffi.cast("uintptr_t", made[0]))
    try:
        rng = np.random.default_rng(4)
        x1, x2 = (rng.standard_normal((5, 7)).astype(np.float32) for _ in range(2))
        d1, d2 = host_backend.to_device(x1), host_backend.to_device(x2)
        o1, o2 = host_backend.empty((5, 7), "f32"), host_backend.empty((5, 7), "f32")
        host_backend.fill_nan(o1)
        launcher = host_backend.prepare("relu", [d1], o1, {})
        launcher.on_stream(handle, [d2], o2)()
        host_backend.check(lib.oprt_stream_synchronize(made[0]))
        np.testing.assert_array_equal(host_backend.to_host(o2), np.maximum(x2, 0))
        assert np.isnan(host_backend.to_host(o1)).all()  # the prepared output untouched
        launcher.on_stream(handle)()
        host_backend.check(lib.oprt_stream_synchronize(made[0]))
        np.testing.assert_array_equal(host_backend.to_host(o1), np.maximum(x1, 0))
        with pytest.raises(E.InvalidArgumentError, match="prepared for"):
            launcher.on_stream(handle, [host_backend.to_device(np.ones((7, 5), np.float32))], o2)
        not_a_stream = ffi.new("int[8]")
        with pytest.raises(E.OprtError, match="invalid stream handle"):
            launcher.on_stream(int(ffi.cast("uintptr_t", not_a_stream)))()
    finally:
        host_backend.check(lib.oprt_stream_destroy(made[0]))


def test_views_odd_offset_negative_broadcast_outputs(host_backend):
    """Inputs and outputs that are views: odd element offset, negative strides, stepped, broadcast."""
    rng = np.random.default_rng(7)
    base = rng.uniform(-1, 1, 2 * 33 * 17 + 1).astype(np.float32)
    x = base[1:].reshape(33, 34)[:, ::2]                       # odd offset and a step
    a = rng.uniform(-1, 1, (33, 17)).astype(np.float32)[::-1, ::-1]  # negative strides
    row = np.broadcast_to(rng.uniform(-1, 1, 17).astype(np.float32), (33, 17))
    out_host = np.zeros((17, 2 * 33 + 1), np.float32)
    out = host_backend.to_device(out_host[::-1, 1::2].T)      # output: transposed, odd, negative, stepped
    assert out.shape == (33, 17)
    host_backend.prepare("vector_add", [host_backend.to_device(x), host_backend.to_device(a)], out, {})()
    np.testing.assert_array_equal(host_backend.to_host(out), (x + a).astype(np.float32))
    host_backend.prepare("vector_add", [host_backend.to_device(row), host_backend.to_device(x)], out, {})()
    np.testing.assert_array_equal(host_backend.to_host(out), row + x)
    host_backend.prepare("softmax", [host_backend.to_device(a)], out, {"axis": 0})()
    assert operators.spec("softmax").check(host_backend.to_host(out), [a], "f32", {"axis": 0}).ok


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_zero_size_and_0d(host_backend, dtype):
    np_dt = DTYPES[dtype].numpy
    empty = host_backend.to_device(np.zeros((0, 3), np_dt))
    out = host_backend.empty((0, 3), dtype)
    assert out.ptr == 0 and empty.ptr == 0
    for op, params in (("copy", {}), ("relu", {"negative_slope": 0.5}), ("softmax", {"axis": 0})):
        host_backend.prepare(op, [empty], out, params)()
    host_backend.prepare("vector_add", [empty, host_backend.to_device(np.ones(3, np_dt))], out, {})()
    sums = host_backend.empty((3,), dtype)
    host_backend.fill_nan(sums)
    host_backend.prepare("reduce_sum", [empty], sums, {"axis": 0})()
    assert host_backend.to_host(sums).tolist() == [0, 0, 0]
    scalar = host_backend.to_device(np.array(-2.0, np_dt))
    s_out = host_backend.empty((), dtype)
    host_backend.prepare("relu", [scalar], s_out, {"negative_slope": 0.25})()
    assert float(host_backend.to_host(s_out)) == -0.5
    host_backend.prepare("reduce_sum", [scalar], s_out, {"axis": None})()
    assert float(host_backend.to_host(s_out)) == -2.0
    host_backend.prepare("vector_add", [scalar, scalar], s_out, {})()
    assert float(host_backend.to_host(s_out)) == -4.0


def test_reduce_sum_accumulates_in_f32(host_backend):
    # 4096 ones in f16: an f16 accumulator would stall at 2048
    x = host_backend.to_device(np.ones(4096, np.float16))
    out = host_backend.empty((), "f16")
    host_backend.prepare("reduce_sum", [x], out, {"axis": None})()
    assert float(host_backend.to_host(out)) == 4096.0


def test_softmax_is_stable(host_backend):
    x = np.array([[1000.0, 1000.0], [-1000.0, 0.0]], np.float32)
    out = host_backend.empty((2, 2), "f32")
    host_backend.prepare("softmax", [host_backend.to_device(x)], out, {})()
    np.testing.assert_allclose(host_backend.to_host(out), [[0.5, 0.5], [0.0, 1.0]])


# ---------------------------------------------------------------------------------------------
# bad input through Python


def test_bad_shapes(host_backend):
    b = host_backend
    x = b.to_device(np.ones((4, 5), np.float32))
    with pytest.raises(E.ShapeError, match="shape mismatch"):
        b.prepare("copy", [x], b.empty((5, 4), "f32"), {})
    with pytest.raises(E.ShapeError, match="do not broadcast"):
        b.prepare("vector_add", [x, b.to_device(np.ones(4, np.float32))], b.empty((4, 5), "f32"), {})
    with pytest.raises(E.ShapeError, match=r"expected \(4,\)"):
        b.prepare("reduce_sum", [x], b.empty((5,), "f32"), {"axis": -1})
    with pytest.raises(E.InvalidArgumentError, match="at most 8"):
        b.prepare("copy", [b.to_device(np.ones((1,) * 9, np.float32))], b.empty((1,) * 9, "f32"), {})


def test_dtype_mismatch(host_backend):
    b = host_backend
    with pytest.raises(E.UnsupportedDtypeError, match="dtype mismatch: out is f32 but x is f16"):
        b.prepare("relu", [b.to_device(np.ones(3, np.float16))], b.empty((3,), "f32"), {})


@pytest.mark.parametrize("op, params, shape", [("softmax", {"axis": 2}, (4, 5)), ("softmax", {"axis": -3}, (4, 5)),
                                               ("reduce_sum", {"axis": 5}, (4, 5))])
def test_axis_out_of_range(host_backend, op, params, shape):
    b = host_backend
    out_shape = shape if op == "softmax" else (4,)
    with pytest.raises(E.ParamError, match="out of range"):
        b.prepare(op, [b.to_device(np.ones(shape, np.float32))], b.empty(out_shape, "f32"), params)


def test_param_types_are_checked_in_python(host_backend):
    b = host_backend
    x = b.to_device(np.ones(3, np.float32))
    out = b.empty((3,), "f32")
    with pytest.raises(E.InvalidArgumentError, match="negative_slope") as info:
        b.prepare("relu", [x], out, {"negative_slope": "0.1"})
    assert not isinstance(info.value, E.BackendError)
    with pytest.raises(E.UnknownNameError, match="slope"):
        b.prepare("relu", [x], out, {"slope": 0.1})
    with pytest.raises(E.InvalidArgumentError, match="axis"):
        b.prepare("softmax", [x], out, {"axis": 1.5})
    with pytest.raises(E.InvalidArgumentError, match="keepdims"):
        b.prepare("reduce_sum", [x], b.empty((), "f32"), {"axis": None, "keepdims": 1})
    with pytest.raises(E.InvalidArgumentError, match="int32"):
        b.prepare("softmax", [x], out, {"axis": 1 << 40})
    with pytest.raises(E.UnknownNameError, match="valid choices: " + ", ".join(sorted(operators.names()))):
        b.prepare("gelu", [x], out, {})
    with pytest.raises(E.InvalidArgumentError, match="takes 2 input"):
        b.prepare("vector_add", [x], out, {})
    with pytest.raises(E.InvalidArgumentError, match="not a numpy array"):
        b.prepare("copy", [x], np.empty(3, np.float32), {})


def test_overlapping_output(host_backend):
    b = host_backend
    x = b.to_device(np.ones((4, 4), np.float32))
    base = b.empty((7,), "f32")
    overlapping = DeviceArray(b, base.ptr, (4, 4), (1, 1), "f32", base.owner)
    with pytest.raises(E.StrideError, match="overlapping strides"):
        b.prepare("copy", [x], overlapping, {})
    broadcast = b.to_device(np.broadcast_to(np.zeros(4, np.float32), (4, 4)))
    with pytest.raises(E.StrideError):
        b.prepare("relu", [x], broadcast, {})


def test_null_pointers_through_the_raw_lib(host_backend):
    ffi, lib = host_backend.ffi, host_backend.lib
    launcher = host_backend.prepare("copy", [host_backend.to_device(np.ones(3, np.float32))],
                                    host_backend.empty((3,), "f32"), {})
    with pytest.raises(E.NullPointerError, match="'out' is NULL"):
        host_backend.check(lib.oprt_copy(launcher.desc, ffi.NULL, 0, ffi.NULL, ffi.NULL, ffi.NULL))
    with pytest.raises(E.NullPointerError, match="'desc' is NULL"):
        host_backend.check(lib.oprt_create_copy_descriptor(ffi.NULL, ffi.NULL, ffi.NULL))
    with pytest.raises(E.NullPointerError):
        host_backend.check(lib.oprt_malloc(ffi.NULL, 8))


def test_workspace_too_small(host_backend):
    b = host_backend
    ffi, lib = b.ffi, b.lib
    x = b.to_device(np.ones((6, 5), np.float32))
    out = b.empty((6,), "f32")
    launcher = b.prepare("reduce_sum", [x], out, {"axis": 1})
    assert launcher.workspace_size == 6 * 4 and launcher.workspace is not None
    args = (ffi.cast("void *", out.ptr), ffi.cast("void *", x.ptr), ffi.NULL)
    ws = ffi.cast("void *", launcher.workspace.ptr)
    with pytest.raises(E.WorkspaceError, match="needs 24 bytes"):
        b.check(lib.oprt_reduce_sum(launcher.desc, ws, 23, *args))
    launcher()
    assert b.to_host(out).tolist() == [5.0] * 6


def test_out_of_memory(host_backend):
    with pytest.raises(E.DeviceOutOfMemoryError, match="cannot allocate") as info:
        host_backend.empty((1 << 60,), "f32")
    assert isinstance(info.value, MemoryError)


def test_descriptors_and_events_are_destroyed_by_gc(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    destroyed = []

    def destroy_softmax(desc):
        destroyed.append("softmax")
        return lib.oprt_destroy_softmax_descriptor(desc)

    def destroy_event(ev):
        destroyed.append("event")
        return lib.oprt_event_destroy(ev)

    proxy = _Proxy(lib, oprt_destroy_softmax_descriptor=destroy_softmax, oprt_event_destroy=destroy_event)
    backend = CompiledBackend("counting", lambda: SimpleNamespace(ffi=ffi, lib=proxy))
    launcher = backend.prepare("softmax", [backend.to_device(np.ones((2, 3), np.float32))],
                               backend.empty((2, 3), "f32"), {})
    launcher()
    event = backend.event()
    del launcher, event
    gc.collect()
    assert sorted(destroyed) == ["event", "softmax"]


# ---------------------------------------------------------------------------------------------
# timing primitives


def test_events_synchronize_and_flush(host_backend):
    b = host_backend
    start, end = b.event(), b.event()
    assert isinstance(start, CompiledEvent)
    with pytest.raises(E.DeviceError, match="never recorded"):
        start.elapsed_ms(end)
    start.record()
    b.flush_cache()
    b.flush_cache()
    end.record()
    b.synchronize()
    assert start.elapsed_ms(end) >= 0.0
    assert b._flush is not None and b._flush.nbytes >= max(FLUSH_MIN_BYTES, 2 * b.device_info().l2_bytes)
    with pytest.raises(E.InvalidArgumentError):
        start.elapsed_ms(object())


def test_clean_flush_reads_the_buffer_back_with_the_librarys_reduce_sum(host_backend):
    b = host_backend
    b.flush_cache(clean=True)
    b.synchronize()
    reader = b._flush_reader
    assert reader is not None and reader.op == "reduce_sum"
    words = b._flush.nbytes // 4
    # the buffer holds the byte 1 everywhere (the first flush's value): each f32 word is 0x01010101
    word = np.frombuffer(bytes([b._flush_value] * 4), np.float32)[0]
    got = float(b.to_host(reader.output)[()])
    assert got == pytest.approx(float(word) * words, rel=1e-3)
    b.flush_cache(clean=True)
    assert b._flush_reader is reader  # prepared once
    b.flush_cache()  # the default flush does not read
    b.synchronize()
    # the reader's output holds the second flush's read (byte 2): the third flush (byte 3) wrote without reading
    word2 = np.frombuffer(bytes([2] * 4), np.float32)[0]
    assert float(b.to_host(reader.output)[()]) == pytest.approx(float(word2) * words, rel=1e-3)


def test_functional_op_api_style_use(host_backend):
    """prepare + run as the op API uses them: numpy in, device out, descriptor cached by the caller."""
    x = np.linspace(-1, 1, 11, dtype=np.float32)
    out = host_backend.empty(x.shape, "f32")
    launcher = host_backend.prepare("relu", [x], out, {"negative_slope": 0.5})
    launcher()
    np.testing.assert_allclose(host_backend.to_host(out), np.where(x > 0, x, 0.5 * x))


@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_to_device_keeps_misalignment_of_offset_views(host_backend, dtype):
    """A view starting at an odd element stays misaligned on the device (vector-load paths must see it)."""
    base = np.arange(1, 1002, dtype=DTYPES[dtype].numpy)
    aligned = host_backend.to_device(base)
    odd = host_backend.to_device(base[1:])
    assert aligned.ptr % 16 == base.ctypes.data % 16
    assert odd.ptr % 16 == base[1:].ctypes.data % 16 != 0
    np.testing.assert_array_equal(host_backend.to_host(odd), base[1:])
