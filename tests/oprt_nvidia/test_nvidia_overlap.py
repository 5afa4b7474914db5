"""Aliasing on the GPU (skips without one): an ``out`` that overlaps an input beyond exact in place is refused by
the library's launch (OPRT_STATUS_OVERLAP) with nothing written, through the C ABI, CompiledBackend and the op
API (its fast path included, on torch tensors and device arrays); exact in-place calls the op allows are right on
sizes that take every kernel family (multi-block elementwise, softmax rows, cluster rows and columns)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import oprt_core.ops as ops
from oprt_core import get_registry, operators
from oprt_core.cdecl import c_params
from oprt_core.compiled import DeviceArray
from oprt_core.dtypes import get_dtype
from oprt_core.errors import OverlapError

DTYPES = ("f32", "f16", "bf16")
OVERLAP = 12  # OPRT_STATUS_OVERLAP
PARTIAL = "{op}: out overlaps input {name} (partial overlap of the same memory); use a separate output"


@pytest.fixture(autouse=True)
def fresh_cache():
    ops.clear_cache()
    yield
    ops.clear_cache()


def _registered(backend):
    """The op API's instance of ``backend`` (its arrays are the ones ops.* accepts)."""
    return get_registry().get_backend(backend.name)


def _view(base: DeviceArray, offset: int, shape, strides=None) -> DeviceArray:
    if strides is None:
        strides, run = [], 1
        for n in reversed(shape):
            strides.insert(0, run)
            run *= max(n, 1)
    return DeviceArray(base.backend, base.ptr + offset * base.itemsize, shape, strides, base.dtype_info, base,
                       cuda_interop=base.cuda_interop)


@pytest.mark.gpu
def test_the_finding_on_torch_tensors(nvidia_backend):
    """``ops.copy(x[:-1], out=x[1:])`` with 4194305 elements: refused, on the full path and on the fast path (the
    layout filed by a call on separate tensors), and x is left as it was."""
    if not nvidia_backend.cuda_interop:
        pytest.skip("this build's memory is not CUDA memory: no torch tensors")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    name = nvidia_backend.name
    x = torch.arange(4194305.0, device="cuda")
    before = x.clone()
    with pytest.raises(OverlapError, match=re.escape(PARTIAL.format(op="copy", name="x"))):
        ops.copy(x[:-1], out=x[1:], backend=name)
    ops.copy(torch.ones(4194304, device="cuda"), out=torch.empty(4194304, device="cuda"), backend=name)
    assert ops._fast
    with pytest.raises(OverlapError, match=re.escape(PARTIAL.format(op="copy", name="x"))) as info:
        ops.copy(x[:-1], out=x[1:], backend=name)
    assert info.value.status == OVERLAP  # the library's launch refused it, on the fast path
    torch.cuda.synchronize()
    assert torch.equal(x, before)
    ops.relu(x - 2e6, out=x, backend=name)  # not x itself: a new tensor in, x out
    ops.relu(x, negative_slope=0.5, out=x, backend=name)  # exact in place
    torch.cuda.synchronize()
    expected = torch.relu(before - 2e6)
    assert torch.equal(x, expected)


@pytest.mark.gpu
@pytest.mark.parametrize("op", [spec.name for spec in operators.specs("core") if spec.n_inputs == 1])
def test_partial_overlap_is_refused_through_the_c_abi(nvidia_backend, nvidia_ext, tdesc, op):
    """Every core op of one input, default params, on (2, 4096) f32 with out 8 elements into x."""
    ffi, lib = nvidia_ext.ffi, nvidia_ext.lib
    be = nvidia_backend
    host = np.arange(2 * 4096 + 8, dtype=np.float32)
    base = be.to_device(host)
    shape = (2, 4096)
    spec = operators.spec(op)
    params = spec.validate_params({}, [shape])
    out_shape = spec.output_shape([shape], params)
    p = ffi.new(f"oprt_{op}_descriptor_t *")
    extra = c_params(spec, params)
    assert getattr(lib, f"oprt_create_{op}_descriptor")(p, tdesc(out_shape), tdesc(shape), *extra) == 0
    desc = ffi.gc(p[0], getattr(lib, f"oprt_destroy_{op}_descriptor"))
    size = ffi.new("size_t *")
    assert getattr(lib, f"oprt_get_{op}_workspace_size")(desc, size) == 0
    ws = be.empty((max(int(size[0]), 4) // 4,), "f32")
    status = getattr(lib, f"oprt_{op}")(desc, ffi.cast("void *", ws.ptr), int(size[0]),
                                        ffi.cast("void *", base.ptr + 8 * 4), ffi.cast("void *", base.ptr), ffi.NULL)
    msg = ffi.string(lib.oprt_last_error_message()).decode()
    assert status == OVERLAP, msg
    assert msg.startswith(PARTIAL.format(op=op, name="x")), msg
    be.synchronize()
    np.testing.assert_array_equal(be.to_host(base), host)


@pytest.mark.gpu
def test_overlap_is_refused_on_device_arrays(nvidia_backend, rng):
    be = _registered(nvidia_backend)
    n = 1 << 22
    host = rng.uniform(-2, 2, n + 64).astype(np.float32)
    base = be.to_device(host)
    name = be.name
    with pytest.raises(OverlapError, match=re.escape(PARTIAL.format(op="copy", name="x"))):
        ops.copy(_view(base, 0, (n,)), out=_view(base, 1, (n,)), backend=name)
    with pytest.raises(OverlapError, match=re.escape(PARTIAL.format(op="vector_add", name="b"))):
        ops.vector_add(_view(base, 64, (n,)), _view(base, 32, (n,)), out=_view(base, 64, (n,)), backend=name)
    sq = _view(base, 0, (2048, 2048))
    with pytest.raises(OverlapError, match="copy: out overlaps input x \\(the same memory in another layout\\)"):
        ops.copy(_view(base, 0, (2048, 2048), (1, 2048)), out=sq, backend=name)
    with pytest.raises(OverlapError, match="reduce_sum: out is input x itself, and reduce_sum cannot run in place"):
        col = _view(base, 0, (4096, 1))
        ops.reduce_sum(col, axis=-1, keepdims=True, out=col, backend=name)
    be.synchronize()
    np.testing.assert_array_equal(be.to_host(base), host)


IN_PLACE = [  # (op, params, input shapes, which input is out): sizes that take the multi-block kernels
    ("copy", {}, [((1 << 20) + 3,)], 0),
    ("relu", {"negative_slope": 0.1}, [((1 << 20) + 3,)], 0),
    ("relu", {"negative_slope": 0.0}, [(1031, 1027)], 0),
    ("vector_add", {}, [((1 << 20) + 3,), ((1 << 20) + 3,)], 0),
    ("vector_add", {}, [(1024, 1024), (1024, 1024)], 1),
    ("vector_add", {}, [(1024, 1024), (1024,)], 0),
    ("softmax", {"axis": -1}, [(1000, 33)], 0),
    ("softmax", {"axis": -1}, [(512, 4096)], 0),
    ("softmax", {"axis": -1}, [(16, 65536)], 0),
    ("softmax", {"axis": -1}, [(2, 1 << 20)], 0),
    ("softmax", {"axis": 0}, [(1000, 256)], 0),
    ("softmax", {"axis": 0}, [(16384, 128)], 0),
    ("softmax", {"axis": 0}, [(20000, 64)], 0),
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op, params, shapes, k", IN_PLACE, ids=str)
def test_exact_in_place_is_right(nvidia_backend, rng, op, params, shapes, k, dtype):
    """out = input k itself (device arrays, the op API): the result matches the float64 reference of the inputs
    as they were; twice, the second through the fast path."""
    be = _registered(nvidia_backend)
    spec = operators.spec(op)
    for attempt in range(2):
        hosts = [rng.uniform(-3, 3, s).astype(get_dtype(dtype).numpy) for s in shapes]
        dev = [be.to_device(h) for h in hosts]
        ops.run(op, dev, params, backend=be.name, out=dev[k])
        res = spec.check(be.to_host(dev[k]), hosts, dtype, params)
        assert res.ok, f"attempt {attempt}: {res.message}"
    assert ops._fast


@pytest.mark.gpu
@pytest.mark.parametrize("force", ["", "stash", "group"])
@pytest.mark.parametrize("shape", [(4096, 256), (12000, 128)], ids=str)
def test_softmax_columns_in_place_on_a_transposed_view(nvidia_backend, rng, monkeypatch, force, shape):
    """Softmax along axis 0 in place on contiguous and on transposed (strided) views; OPRT_NVIDIA_SOFTMAX_COLS
    reaches the nvidia fallbacks (ignored elsewhere)."""
    monkeypatch.setenv("OPRT_NVIDIA_SOFTMAX_COLS", force)
    be = _registered(nvidia_backend)
    for transposed in (False, True):
        host = rng.uniform(-3, 3, shape[::-1] if transposed else shape).astype(np.float32)
        dev = be.to_device(host)
        x = _view(dev, 0, shape, (1, shape[0])) if transposed else dev  # x[a, b] = host[b, a]
        ops.softmax(x, axis=0, backend=be.name, out=x)
        res = operators.spec("softmax").check(be.to_host(x), [host.T if transposed else host], "f32", {"axis": 0})
        assert res.ok, f"transposed={transposed}: {res.message}"

