"""DLPack export (oprt_core.dlpack, DeviceArray.__dlpack__) and the op API's "what goes in comes out", on the CPU.

The host library's arrays are host memory, so its backend exports them as kDLCPU (``dlpack_device_type=1``) and
``numpy.from_dlpack`` consumes them: the capsule, the deleter and the strides are exercised here; the kDLCUDA
hand-over to torch and CuPy is the GPU suite's (tests/oprt_nvidia/test_nvidia_ops.py, tests/examples/test_triton.py).
"""

from __future__ import annotations

import ctypes
import gc
import sys
import types
import weakref

import numpy as np
import pytest

from oprt_core import dlpack, hookimpl, ops
from oprt_core.device_array import DeviceArray
from oprt_core.dtypes import get_dtype
from oprt_core.plugins import Registry, get_plugin_manager

BF16 = get_dtype("bf16").numpy

_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_GetPointer.restype = ctypes.c_void_p
_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_GetName = ctypes.pythonapi.PyCapsule_GetName
_GetName.restype = ctypes.c_char_p
_GetName.argtypes = [ctypes.py_object]


def rand(shape, dtype="f32", seed=0):
    return np.random.default_rng(seed).uniform(-4, 4, shape).astype(get_dtype(dtype).numpy)


def read_capsule(cap):
    """(name, DLTensor, flags or None) of an unconsumed capsule, read back through the structs."""
    name = _GetName(cap)
    ptr = _GetPointer(cap, name)
    if name == b"dltensor_versioned":
        m = dlpack.DLManagedTensorVersioned.from_address(ptr)
        return name, m.dl_tensor, int(m.flags), (m.version.major, m.version.minor)
    return name, dlpack.DLManagedTensor.from_address(ptr).dl_tensor, None, None


def tensor_facts(t):
    n = t.ndim
    return ((t.device.device_type, t.device.device_id), (t.dtype.code, t.dtype.bits, t.dtype.lanes),
            tuple(t.shape[i] for i in range(n)), tuple(t.strides[i] for i in range(n)), t.data or 0, t.byte_offset)


def test_struct_layouts_are_dlpacks():
    """The C layouts of dlpack.h (64-bit): field offsets and sizes a consumer reads."""
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        pytest.skip("the offsets below are for 64-bit pointers")
    t = dlpack.DLTensor
    assert [getattr(t, f).offset for f in ("data", "device", "ndim", "dtype", "shape", "strides", "byte_offset")] \
        == [0, 8, 16, 20, 24, 32, 40]
    assert ctypes.sizeof(t) == 48 and ctypes.sizeof(dlpack.DLDataType) == 4 and ctypes.sizeof(dlpack.DLDevice) == 8
    m = dlpack.DLManagedTensor
    assert (m.manager_ctx.offset, m.deleter.offset, ctypes.sizeof(m)) == (48, 56, 64)
    v = dlpack.DLManagedTensorVersioned
    assert (v.manager_ctx.offset, v.deleter.offset, v.flags.offset, v.dl_tensor.offset, ctypes.sizeof(v)) \
        == (8, 16, 24, 32, 80)


def test_dtype_codes():
    assert dlpack.dl_dtype(get_dtype("f32")) == (2, 32, 1)
    assert dlpack.dl_dtype(get_dtype("f16")) == (2, 16, 1)
    assert dlpack.dl_dtype(get_dtype("bf16")) == (4, 16, 1)  # kDLBfloat


@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_numpy_from_dlpack_views_a_host_device_array(host_backend, dtype):
    x = rand((5, 7), dtype)
    d = host_backend.to_device(x)
    assert d.__dlpack_device__() == (1, 0)
    y = np.from_dlpack(d)
    np.testing.assert_array_equal(y, x)
    assert y.ctypes.data == d.ptr and y.flags.writeable  # a view, not a copy
    y[2, 3] = 100
    assert host_backend.to_host(d)[2, 3] == 100


@pytest.mark.parametrize("view", ["transposed", "reversed", "stepped", "offset", "broadcast"])
def test_strided_views_round_trip(host_backend, view):
    x = rand((6, 8))
    host = {"transposed": x.T, "reversed": x[::-1], "stepped": x[:, ::3], "offset": x[1:, 2:],
            "broadcast": np.broadcast_to(x[0], (4, 8))}[view]
    d = host_backend.to_device(host)
    y = np.from_dlpack(d)
    np.testing.assert_array_equal(y, host)
    assert y.strides == d.strides


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_capsules_carry_shape_strides_dtype_and_device(host_backend, dtype):
    x = rand((3, 4), dtype)
    d = host_backend.to_device(x.T)
    code = (4, 16, 1) if dtype == "bf16" else (2, get_dtype(dtype).itemsize * 8, 1)
    legacy = d.__dlpack__()
    name, t, flags, _ = read_capsule(legacy)
    assert name == b"dltensor" and flags is None
    assert tensor_facts(t) == ((1, 0), code, (4, 3), (1, 4), d.ptr, 0)
    versioned = d.__dlpack__(max_version=(1, 2))
    name, t, flags, version = read_capsule(versioned)
    assert name == b"dltensor_versioned" and flags == 0 and version == (1, 0)
    assert tensor_facts(t) == ((1, 0), code, (4, 3), (1, 4), d.ptr, 0)
    # a legacy request (max_version below 1) gets the legacy struct
    assert read_capsule(d.__dlpack__(max_version=(0, 8)))[0] == b"dltensor"


def test_bf16_goes_through_dlpack_and_numpy_refuses_it_with_its_own_error(host_backend):
    """numpy has no bfloat16: it refuses the kDLBfloat capsule, and its own error reaches the caller (the capsule
    has no Python destructor that could replace it); the tensor is released at the next export."""
    d = host_backend.to_device(rand((4,), "bf16"))
    ref = weakref.ref(d)
    with pytest.raises((RuntimeError, BufferError, TypeError), match="(?i)dtype"):
        np.from_dlpack(d)
    del d
    gc.collect()
    assert ref() is not None  # held by the refused capsule's tensor until the next export
    host_backend.to_device(rand((2,))).__dlpack__()
    gc.collect()
    assert ref() is None


def test_the_consumer_keeps_the_array_alive_and_its_deleter_releases_it(host_backend):
    x = rand((64,))
    d = host_backend.to_device(x)
    ref = weakref.ref(d)
    y = np.from_dlpack(d)
    del d
    gc.collect()
    assert ref() is not None
    np.testing.assert_array_equal(y, x)  # the memory is still the allocation's
    del y
    gc.collect()
    assert ref() is None


def test_an_unconsumed_capsule_is_released_at_the_next_export(host_backend):
    d = host_backend.to_device(rand((8,)))
    ref = weakref.ref(d)
    cap = d.__dlpack__(max_version=(1, 0))
    del d
    gc.collect()
    assert ref() is not None  # the capsule's tensor holds it
    host_backend.to_device(rand((2,))).__dlpack__()
    assert ref() is not None  # still held: the capsule is alive
    del cap
    host_backend.to_device(rand((2,))).__dlpack__()
    gc.collect()
    assert ref() is None


def test_a_read_only_array_is_flagged_or_refused(host_backend):
    base = host_backend.to_device(rand((5,)))
    ro = DeviceArray(host_backend, base.ptr, (5,), (1,), "f32", base, readonly=True, dlpack_device=(1, 0))
    with pytest.raises(BufferError, match="read-only"):
        ro.__dlpack__()
    _, _, flags, _ = read_capsule(ro.__dlpack__(max_version=(1, 0)))
    assert flags == dlpack.FLAG_READ_ONLY
    y = np.from_dlpack(ro)
    assert not y.flags.writeable
    np.testing.assert_array_equal(y, host_backend.to_host(base))


def test_protocol_arguments_are_checked(host_backend):
    d = host_backend.to_device(rand((3,)))
    with pytest.raises(BufferError, match="stream must be None for a CPU array"):
        d.__dlpack__(stream=1)
    with pytest.raises(BufferError, match="copy=True"):
        d.__dlpack__(copy=True)
    with pytest.raises(BufferError, match=r"DLPack device \(1, 0\), not \(2, 0\)"):
        d.__dlpack__(dl_device=(2, 0))
    assert read_capsule(d.__dlpack__(dl_device=(1, 0), copy=False))[0] == b"dltensor"


def test_cuda_streams_wait_only_when_the_consumers_stream_may_not_be_ordered(host_backend):
    """On a kDLCUDA array: None, -1, 1 and 2 export at once; another stream first synchronizes the device; 0 is
    refused (ambiguous)."""

    class Backend:
        name = "cudalike"
        device = 0
        syncs = 0

        def synchronize(self):
            Backend.syncs += 1

    base = host_backend.to_device(rand((4,)))
    d = DeviceArray(Backend(), base.ptr, (4,), (1,), "f32", base, cuda_interop=True)
    assert d.__dlpack_device__() == (2, 0)
    for stream in (None, -1, 1, 2):
        name, t, _, _ = read_capsule(d.__dlpack__(stream=stream))
        assert tensor_facts(t)[0] == (2, 0)
    assert Backend.syncs == 0
    d.__dlpack__(stream=0x7F00)
    assert Backend.syncs == 1
    with pytest.raises(ValueError, match="stream 0 is ambiguous"):
        d.__dlpack__(stream=0)


def test_memory_without_a_dlpack_device_type_is_refused(host_lib_path, make_host_loader):
    from oprt_core.compiled import CompiledBackend

    be = CompiledBackend("opaque", make_host_loader(host_lib_path))  # neither CUDA-like nor declared
    d = be.to_device(rand((3,)))
    with pytest.raises(BufferError, match="backend 'opaque' has memory DLPack has no device type for"):
        d.__dlpack_device__()
    with pytest.raises(BufferError, match=r"copy the array to the host with \.get\(\)"):
        np.from_dlpack(d)


def test_cuda_like_backends_export_kdlcuda_on_their_device(host_lib_path, make_host_loader):
    from oprt_core.compiled import CompiledBackend

    be = CompiledBackend("cudalike", make_host_loader(host_lib_path), cuda_interop=True)
    assert be.to_device(rand((2,))).__dlpack_device__() == (2, 0)
    be.set_device(0)
    assert be.empty((2,), "bf16").__dlpack_device__() == (2, 0)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_host_view_exports_numpy_arrays_bf16_included(dtype):
    x = rand((3, 5), dtype)[:, ::2]
    name, t, _, _ = read_capsule(dlpack.host_view(x).__dlpack__())
    facts = tensor_facts(t)
    assert name == b"dltensor" and facts[0] == (1, 0) and facts[2:5] == ((3, 3), (5, 2), x.ctypes.data)
    assert facts[1] == ((4, 16, 1) if dtype == "bf16" else (2, x.itemsize * 8, 1))
    if dtype != "bf16":
        np.testing.assert_array_equal(np.from_dlpack(dlpack.host_view(x)), x)
    with pytest.raises(TypeError, match="host_view takes a numpy array"):
        dlpack.host_view([1.0])


# -- the op API: what goes in comes out --------------------------------------------------------------------------


class _Register:
    def __init__(self, backend):
        self.backend = backend

    @hookimpl
    def oprt_register_backends(self, register):
        register(self.backend)


@pytest.fixture
def host_registry(host_backend):
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(_Register(host_backend), "host-dlpack", "tests")
    return Registry(pm)


def test_numpy_in_numpy_out_on_every_backend(host_backend, host_registry):
    x = rand((3, 6))
    got = ops.run("softmax", [x], {"axis": -1}, backend="numpy")
    assert type(got) is np.ndarray
    on_host = ops.run("softmax", [x], {"axis": -1}, backend="host", registry=host_registry)
    assert type(on_host) is np.ndarray  # copied back, as the input was copied to the device
    np.testing.assert_allclose(on_host, got, rtol=1e-6)
    assert type(ops.relu([-1.0, 2.0])) is np.ndarray  # Python lists count as numpy


def test_device_array_in_device_array_out_and_mixed_inputs(host_backend, host_registry):
    a, b = rand((4, 5), seed=1), rand((4, 5), seed=2)
    da = host_backend.to_device(a)
    got = ops.run("vector_add", [da, b], backend="host", registry=host_registry)
    assert isinstance(got, DeviceArray) and got.backend is host_backend  # the first array decides
    np.testing.assert_allclose(host_backend.to_host(got), a + b, rtol=1e-6)
    got2 = ops.run("vector_add", [b, da], backend="host", registry=host_registry)
    assert type(got2) is np.ndarray
    np.testing.assert_allclose(got2, a + b, rtol=1e-6)
    got3 = ops.run("vector_add", [[1.0] * 5, da], backend="host", registry=host_registry)
    assert isinstance(got3, DeviceArray)  # a Python list does not decide while an array follows


def _fake_torch(monkeypatch):
    """A stand-in ``torch`` module (in sys.modules for this test): a CPU Tensor numpy can read, and from_numpy /
    from_dlpack that record what they were handed."""
    torch = types.ModuleType("torch")
    calls = []

    class Tensor:
        is_cuda = False

        def __init__(self, array):
            self.array = array
            self.dtype = array.dtype

        def __array__(self, dtype=None, copy=None):
            return self.array

    Tensor.__module__ = "torch"

    def from_numpy(a):
        calls.append(("from_numpy", a))
        return Tensor(a)

    def from_dlpack(obj):
        cap = obj.__dlpack__()
        calls.append(("from_dlpack", tensor_facts(read_capsule(cap)[1])))
        return Tensor(obj.array)

    torch.Tensor, torch.from_numpy, torch.from_dlpack = Tensor, from_numpy, from_dlpack
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch, calls


def test_torch_cpu_tensors_come_back_as_torch_tensors_bf16_through_dlpack(monkeypatch):
    torch, calls = _fake_torch(monkeypatch)
    x = rand((2, 3))
    got = ops.softmax(torch.Tensor(x))
    assert isinstance(got, torch.Tensor) and calls[-1][0] == "from_numpy"
    np.testing.assert_allclose(got.array.sum(-1), 1, rtol=1e-6)
    xb = rand((2, 3), "bf16")
    gotb = ops.relu(torch.Tensor(xb))
    assert isinstance(gotb, torch.Tensor) and calls[-1][0] == "from_dlpack"
    assert calls[-1][1][1] == (4, 16, 1)  # kDLBfloat: torch.from_numpy cannot take ml_dtypes' bfloat16
    np.testing.assert_array_equal(gotb.array.astype(np.float32), np.maximum(xb.astype(np.float32), 0))


def test_torch_dtype_names_are_read_for_new_outputs():
    """A torch dtype (no ``name``; numpy cannot read it) names the new output's dtype: the triton backend's calls
    without ``out`` once failed on it (unknown dtype torch.float32)."""

    class TorchDtype:
        itemsize = 2

        def __init__(self, text):
            self.text = text

        def __str__(self):
            return self.text

    for text, name in (("torch.float32", "f32"), ("torch.float16", "f16"), ("torch.bfloat16", "bf16")):
        assert ops._dtype_name(types.SimpleNamespace(dtype=TorchDtype(text))) == name
    assert ops._dtype_name(np.zeros(1, BF16)) == "bf16"


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_index_arrays_through_device_arrays_and_dlpack(host_backend, dtype):
    b = host_backend
    host = np.array([[7, -100, 3], [0, 2**31 - 1, -5]], dtype)[:, ::-1]  # a reversed view
    d = b.to_device(host)
    assert d.dtype_info.name == {np.int64: "i64", np.int32: "i32"}[dtype] and d.strides_elements == (3, -1)
    np.testing.assert_array_equal(b.to_host(d), host)
    viewed = np.from_dlpack(d)  # kDLInt of 64 or 32 bits
    assert viewed.dtype == dtype and viewed.tolist() == host.tolist()
