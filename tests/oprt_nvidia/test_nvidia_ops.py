"""Correctness of every op on the GPU against the float64 reference (skips without a GPU).

Every case set (smoke, default, edge; large with OPRT_TEST_LARGE=1) of every op in every dtype,
misaligned views, descriptor reuse, tensors over 2^31 elements (slow), CuPy and torch zero-copy.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from gpu_helpers import check_op_api_fast_path, check_torch_inputs, check_what_goes_in_comes_out

import oprt_core.errors as E
import oprt_core.ops as ops
from oprt_core import operators
from oprt_core.cdecl import c_abi_ops
from oprt_core.compiled import DeviceArray
from oprt_core.dtypes import DTYPES
from oprt_core.operators.cross_entropy import cross_entropy_case
from oprt_core.operators.rms_norm import norm_case
from oprt_core.operators.silu_mul import silu_mul_case
from oprt_core.spec import as_outputs

CASE_SETS = ("smoke", "default", "edge") + (("large",) if os.environ.get("OPRT_TEST_LARGE") == "1" else ())


def run_case(backend, spec, case, dtype, rng):
    """Fresh inputs, NaN-poisoned output, prepare, run, compare with the float64 reference."""
    inputs = spec.make_inputs(case, dtype, rng)
    params = spec.validate_params(case.param_dict)
    out = spec.new_outputs(backend, [x.shape for x in inputs], params, dtype)  # a tuple for several outputs
    for o in as_outputs(out):
        backend.fill_nan(o)
    dev = [backend.to_device(x) for x in inputs]
    launcher = backend.prepare(spec.name, dev, out, params)
    launcher()
    backend.synchronize()
    host = tuple(backend.to_host(o) for o in as_outputs(out))
    return spec.check(host if spec.multi_output else host[0], inputs, dtype, params), launcher, inputs


def _cases():
    for spec in c_abi_ops():
        # the model ops' default sets (up to 134 M elements) are checked by the GPU suite's sweep, which runs every
        # case through the same check
        sets = (CASE_SETS if spec in operators.specs("core")
                else tuple(c for c in CASE_SETS if c not in ("default", "large")))
        for case_set in sets:
            for case in spec.cases(case_set):
                for dtype in DTYPES:
                    marks = [pytest.mark.slow] if case_set == "large" else []
                    yield pytest.param(spec.name, case, dtype, id=f"{spec.name}-{case_set}-{case.name}-{dtype}",
                                       marks=marks)


@pytest.mark.gpu
@pytest.mark.parametrize("op, case, dtype", list(_cases()))
def test_case_sets(nvidia_backend, rng, op, case, dtype):
    assert nvidia_backend.supports(op, dtype, case)
    result, *_ = run_case(nvidia_backend, operators.spec(op), case, dtype, rng)
    assert result.ok, result.message


# ---- the norms' and silu_mul's paths: every rows configuration (warp groups, block rows of 2/4/8 packs, 16-bit raw
# packs), the generic kernels (odd widths, strided rows, rows past the registers), short and long rows --------------

NORM_WIDTHS = (8, 24, 64, 128, 256, 512, 1000, 1024, 2048, 4096, 5120, 8192, 14336, 16384, 20480, 32768, 65536, 70000)


def _norm_path_cases():
    for op in (spec.name for spec in operators.specs() if hasattr(operators.module(spec.name), "norm_case")):
        make = operators.module(op).norm_case
        for n in NORM_WIDTHS:
            yield pytest.param(make(op, (3, n)), id=f"{op}-3x{n}")
        yield pytest.param(make(op, (5, 4, 4096), "transposed"), id=f"{op}-transposed")
        yield pytest.param(make(op, (65, 2048), "step2"), id=f"{op}-step2")
    for shape, layout in (((1000, 4096), "contiguous"), ((333, 999), "contiguous"), ((64, 2048), "transposed")):
        yield pytest.param(silu_mul_case(shape, layout), id=f"silu_mul-{shape}-{layout}")


@pytest.mark.gpu
@pytest.mark.parametrize("case", list(_norm_path_cases()))
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_model_op_paths(nvidia_backend, rng, case, dtype):
    import oprt_nvidia

    result, *_ = run_case(nvidia_backend, operators.spec(case.op), case, dtype, rng)
    assert result.ok, result.message
    kernel = oprt_nvidia.last_launch()
    prefix = {"silu_mul": "ew_", "add_rms_norm": "add_norm_"}.get(case.op, "norm_")
    assert kernel.startswith(prefix), kernel
    # the residual added in the rows path's load, for rows of whole 16-byte packs that fit a block's registers
    # (norm.cuh's kRowsMaxPacks: 8192 packs); longer rows take the generic kernel
    packs, whole = divmod(case.shape[-1] * DTYPES[dtype].itemsize, 16)
    if case.op == "add_rms_norm" and case.inputs[0].layout == "contiguous" and whole == 0:
        assert kernel.startswith("add_norm_rows" if packs <= 8192 else "add_norm_generic"), kernel


@pytest.mark.gpu
@pytest.mark.parametrize("n", [64, 4096, 5120, 20480, 70000, 999])  # warp rows, block rows, raw packs, generic
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_add_rms_norm_in_place(nvidia_backend, rng, n, dtype):
    """vLLM's fused_add_rms_norm: out written over x and h over residual (and the other way round), on every path."""
    b, spec = nvidia_backend, operators.spec("add_rms_norm")
    case = norm_case("add_rms_norm", (7, n))
    x, r, w = spec.make_inputs(case, dtype, rng)
    for out_over, h_over in ((0, 1), (1, 0)):
        dev = [b.to_device(a) for a in (x, r, w)]
        b.prepare("add_rms_norm", dev, (dev[out_over], dev[h_over]), {})()
        b.synchronize()
        got = (b.to_host(dev[out_over]), b.to_host(dev[h_over]))
        result = spec.check(got, [x, r, w], dtype, {})
        assert result.ok, (out_over, result.message)


@pytest.mark.gpu
def test_add_rms_norm_refuses_overlapping_outputs(nvidia_backend, rng):
    b = nvidia_backend
    x, r = (b.to_device(rng.uniform(-1, 1, (4, 256)).astype(np.float32)) for _ in range(2))
    w = b.to_device(rng.uniform(-1, 1, 256).astype(np.float32))
    o = b.empty((4, 256), "f32")
    with pytest.raises(E.OverlapError, match="add_rms_norm: outputs out and h share memory"):
        b.prepare("add_rms_norm", [x, r, w], (o, o), {})()


@pytest.mark.gpu
def test_silu_mul_packed_halves_and_in_place(nvidia_backend, rng):
    """One [..., 2d] tensor split in halves (strided views, nothing copied), and out = gate itself."""
    b, spec = nvidia_backend, operators.spec("silu_mul")
    t = rng.uniform(-4, 4, (257, 2 * 1536)).astype(np.float32)
    dt = b.to_device(t)
    gate = DeviceArray(b, dt.ptr, (257, 1536), (3072, 1), "f32", dt.owner)
    up = DeviceArray(b, dt.ptr + 1536 * 4, (257, 1536), (3072, 1), "f32", dt.owner)
    out = b.empty((257, 1536), "f32")
    b.prepare("silu_mul", [gate, up], out, {})()
    assert spec.check(b.to_host(out), [t[:, :1536], t[:, 1536:]], "f32", {}).ok
    g = b.to_device(t[:, :1536].copy())
    b.prepare("silu_mul", [g, b.to_device(t[:, 1536:].copy())], g, {})()
    assert spec.check(b.to_host(g), [t[:, :1536], t[:, 1536:]], "f32", {}).ok


# ---- cross_entropy's paths: packed rows of every width class (a head before the first 16-byte boundary where a row of
# an odd width starts unaligned, a tail), strided classes, leading dims, ignored rows, the mean kernel ---------------

XENT_WIDTHS = (1, 7, 31, 1000, 1001, 2048, 2049, 16384, 32000, 50257, 65537, 128256, 151936, 256000)


def _xent_path_cases():
    for v in XENT_WIDTHS:
        yield pytest.param(cross_entropy_case((3, v)), "xent_rows_packed", id=f"3x{v}")
    yield pytest.param(cross_entropy_case((2, 4, 5001), ignore_index=2), "xent_rows_packed", id="2x4x5001-ignore2")
    yield pytest.param(cross_entropy_case((9, 999), "offset1"), "xent_rows_packed", id="offset1")
    yield pytest.param(cross_entropy_case((40, 3000), "transposed"), "xent_rows_strided", id="transposed")
    yield pytest.param(cross_entropy_case((33, 20001), "step2", "reversed"), "xent_rows_strided", id="step2")
    yield pytest.param(cross_entropy_case((5000, 33), reduction="mean"), "xent_rows_packed+xent_mean", id="mean-rows")
    yield pytest.param(cross_entropy_case((2, 128256), reduction="mean"), "xent_rows_packed+xent_mean",
                       id="mean-long")
    yield pytest.param(cross_entropy_case((0, 10), reduction="mean"), "xent_mean", id="mean-of-no-row")
    yield pytest.param(cross_entropy_case((64, 50257), data="large"), "xent_rows_packed", id="large-data")


@pytest.mark.gpu
@pytest.mark.parametrize("case, kernel", list(_xent_path_cases()))
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_cross_entropy_paths(nvidia_backend, rng, case, kernel, dtype):
    result, *_ = run_case(nvidia_backend, operators.spec("cross_entropy"), case, dtype, rng)
    assert result.ok, result.message
    launched = nvidia_backend.last_launch()
    assert launched is None or launched == kernel, launched  # None: a backend that cannot say (metax)


@pytest.mark.gpu
def test_cross_entropy_ignored_and_out_of_range_rows(nvidia_backend):
    """Ignored rows are exactly 0, a target outside [0, V) gives NaN, a mean over no row is NaN (as torch)."""
    b = nvidia_backend
    x = np.random.default_rng(7).uniform(-3, 3, (4, 70000)).astype(np.float32)
    t = np.array([5, -100, 70000, 69999])
    out = b.empty((4,), "f32")
    b.prepare("cross_entropy", [b.to_device(x), b.to_device(t)], out, {})()
    got = b.to_host(out)
    ref = operators.spec("cross_entropy").reference([x, t])
    assert got[1] == 0.0 and np.isnan(got[2]) and np.allclose(got[[0, 3]], ref[[0, 3]], rtol=1e-5)
    mean = b.empty((), "f32")
    b.prepare("cross_entropy", [b.to_device(x), b.to_device(np.full(4, 3))], mean, {"ignore_index": 3,
                                                                                     "reduction": "mean"})()
    assert np.isnan(b.to_host(mean))


# ---- extra layouts the case sets do not reach ---------------------------------------------------------

EXTRA = [
    ("reduce_sum", [(3, 4096, 4)], {"axis": 1, "keepdims": False}),
    ("reduce_sum", [(8, 1 << 18)], {"axis": -1, "keepdims": True}),     # few long rows: split + workspace
    ("reduce_sum", [(1 << 17, 2)], {"axis": 0, "keepdims": False}),     # narrow columns, split
    ("reduce_sum", [(2, 3, 4, 5)], {"axis": None, "keepdims": False}),
    ("reduce_sum", [(100003,)], {"axis": None, "keepdims": False}),
    ("softmax", [(3, 40000)], {"axis": -1}),                            # online rows
    ("softmax", [(5, 2000)], {"axis": -1}),                             # block rows
    ("softmax", [(3, 12289)], {"axis": 1}),                             # block rows, odd length
    ("softmax", [(2, 1000, 70)], {"axis": 1}),                          # columns with outer dims
    ("softmax", [(2, 7)], {"axis": 0}),
    ("copy", [(3, 64, 96)], {}),
    ("vector_add", [(2048, 33), (33,)], {}),
    ("vector_add", [(2048, 256), (2048, 1)], {}),
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("op, shapes, params", EXTRA, ids=[f"{o}-{s}-{p}" for o, s, p in EXTRA])
def test_extra_layouts(nvidia_backend, rng, op, shapes, params, dtype):
    spec = operators.spec(op)
    inputs = [rng.uniform(-1, 1, s).astype(DTYPES[dtype].numpy) for s in shapes]
    _check(nvidia_backend, spec, inputs, params, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("op, axis", [("reduce_sum", 0), ("reduce_sum", 1), ("reduce_sum", None), ("softmax", 0),
                                      ("softmax", 1), ("copy", None), ("relu", None)])
def test_permuted_views(nvidia_backend, rng, op, axis, dtype):
    """Transposed and reversed 3-d views: the canonical-layout paths."""
    spec = operators.spec(op)
    base = rng.uniform(-1, 1, (40, 33, 70)).astype(DTYPES[dtype].numpy)
    params = {"axis": axis} if op == "softmax" else {"axis": axis, "keepdims": False} if op == "reduce_sum" else {}
    for view in (base.transpose(2, 0, 1), base.transpose(1, 2, 0)[:, ::-1], base[::-1, :, ::2]):
        _check(nvidia_backend, spec, [view], params, dtype)


def _check(backend, spec, inputs, params, dtype, out=None):
    params = spec.validate_params(params)
    if out is None:
        out = backend.empty(spec.output_shape([x.shape for x in inputs], params), dtype)
    backend.fill_nan(out)
    launcher = backend.prepare(spec.name, [backend.to_device(x) for x in inputs], out, params)
    launcher()
    backend.synchronize()
    result = spec.check(backend.to_host(out), inputs, dtype, params)
    assert result.ok, result.message
    return launcher


# ---- misaligned pointers ------------------------------------------------------------------------------

def _view(backend, base: DeviceArray, offset: int, shape) -> DeviceArray:
    """A contiguous view of ``shape`` starting ``offset`` elements into ``base`` (misaligned when odd)."""
    strides, run = [], 1
    for n in reversed(shape):
        strides.append(run)
        run *= n
    return DeviceArray(backend, base.ptr + offset * base.itemsize, shape, tuple(reversed(strides)), base.dtype_info,
                       owner=base, cuda_interop=True)


MISALIGNED = [
    ("copy", [(1000,)], {}),
    ("relu", [(4099,)], {"negative_slope": 0.1}),
    ("vector_add", [(4101,), (4101,)], {}),
    ("reduce_sum", [(37, 1001)], {"axis": -1, "keepdims": False}),
    ("reduce_sum", [(300, 64)], {"axis": 0, "keepdims": False}),
    ("reduce_sum", [(1 << 20,)], {"axis": None, "keepdims": False}),
    ("softmax", [(37, 1000)], {"axis": -1}),
    ("softmax", [(7, 5000)], {"axis": -1}),
    ("softmax", [(2, 20000)], {"axis": -1}),
    ("softmax", [(100, 64)], {"axis": 0}),
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("op, shapes, params", MISALIGNED, ids=[m[0] + str(m[1][0]) for m in MISALIGNED])
@pytest.mark.parametrize("offsets", [(1, 0), (3, 3), (0, 5), (7, 2)], ids=lambda o: f"in{o[0]}-out{o[1]}")
def test_misaligned_views(nvidia_backend, rng, op, shapes, params, dtype, offsets):
    spec = operators.spec(op)
    np_dtype = DTYPES[dtype].numpy
    params = spec.validate_params(params)
    host = [rng.uniform(-1, 1, s).astype(np_dtype) for s in shapes]
    ins = []
    for k, x in enumerate(host):
        off = offsets[0] + k  # a second input gets another misalignment still
        base = nvidia_backend.to_device(np.concatenate([np.ones(off, np_dtype), x.ravel()]))
        ins.append(_view(nvidia_backend, base, off, x.shape))
    out_shape = spec.output_shape(shapes, params)
    out_base = nvidia_backend.empty((math.prod(out_shape) + offsets[1],), dtype)
    out = _view(nvidia_backend, out_base, offsets[1], out_shape)
    nvidia_backend.fill_nan(out)
    nvidia_backend.prepare(op, ins, out, params)()
    nvidia_backend.synchronize()
    result = spec.check(nvidia_backend.to_host(out), host, dtype, params)
    assert result.ok, result.message


# ---- descriptor reuse ---------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("op, shapes, params", [
    ("copy", [(513, 3)], {}), ("relu", [(1 << 16,)], {}), ("vector_add", [(64, 33), (33,)], {}),
    ("reduce_sum", [(1 << 20,)], {"axis": None}), ("reduce_sum", [(64, 512)], {"axis": 0}),
    ("softmax", [(33, 777)], {"axis": -1}),
])
def test_descriptor_reuse_across_buffers(nvidia_backend, rng, op, shapes, params, dtype):
    spec = operators.spec(op)
    np_dtype = DTYPES[dtype].numpy
    params = spec.validate_params(params)
    out_shape = spec.output_shape(shapes, params)
    runs = []
    for _ in range(3):
        host = [rng.uniform(-1, 1, s).astype(np_dtype) for s in shapes]
        out = nvidia_backend.empty(out_shape, dtype)
        nvidia_backend.fill_nan(out)
        runs.append((host, [nvidia_backend.to_device(x) for x in host], out))
    launcher = nvidia_backend.prepare(op, runs[0][1], runs[0][2], params)
    for _host, dev, out in runs[1:]:
        launcher.run(dev, out)
    launcher()
    nvidia_backend.synchronize()
    for host, _, out in runs:
        result = spec.check(nvidia_backend.to_host(out), host, dtype, params)
        assert result.ok, result.message


# ---- oprt_memset: 16-byte stores by a kernel over the aligned part, the driver's memset for the rest


@pytest.mark.gpu
@pytest.mark.parametrize("offset", [0, 1, 8, 15, 16])
@pytest.mark.parametrize("nbytes", [1, 15, 16, 17, 31, 1000, 4096 + 7, (1 << 20) + 3])
def test_memset_spans(nvidia_backend, rng, offset, nbytes):
    """Exactly [offset, offset + nbytes) of a random buffer takes the byte (low 8 bits of the value); the rest stays."""
    ffi, lib = nvidia_backend.ffi, nvidia_backend.lib
    words = (offset + nbytes + 64) // 4
    host = rng.integers(0, 256, 4 * words, dtype=np.uint8).view(np.float32)  # random bytes, carried as f32
    buf = nvidia_backend.to_device(host)
    value = 0x1A5  # 0xA5 in the low byte
    nvidia_backend.check(lib.oprt_memset(ffi.cast("void *", buf.ptr + offset), value, nbytes))
    got = np.asarray(nvidia_backend.to_host(buf)).view(np.uint8)
    want = host.view(np.uint8).copy()
    want[offset : offset + nbytes] = 0xA5
    np.testing.assert_array_equal(got, want)


# ---- more than 2^31 elements ----------------------------------------------------------------------------

BIG_ROWS, BIG_COLS = (1 << 16) + 1, 1 << 15  # 2^31 + 2^15 elements of f16: 4 GiB


@pytest.fixture(scope="module")
def big_input(nvidia_backend):
    """A (2^16 + 1) x 2^15 f16 tensor: every element 0x1C1C (memset, ~0.004: no sum overflows f16) except
    the last row, 1.0."""
    x = nvidia_backend.empty((BIG_ROWS, BIG_COLS), "f16")
    ffi, lib = nvidia_backend.ffi, nvidia_backend.lib
    nvidia_backend.check(lib.oprt_memset(ffi.cast("void *", x.ptr), 0x1C, x.nbytes))
    last = np.full(BIG_COLS, 1.0, np.float16)
    dst = x.ptr + (BIG_ROWS - 1) * BIG_COLS * 2
    nvidia_backend.check(lib.oprt_memcpy(ffi.cast("void *", dst), ffi.cast("void *", last.ctypes.data),
                                         last.nbytes, 0))
    value = float(np.array([0x1C1C], np.uint16).view(np.float16)[0])
    yield x, value
    del x


@pytest.mark.gpu
@pytest.mark.slow
def test_copy_over_2_31_elements(nvidia_backend, big_input):
    x, value = big_input
    assert x.size > 1 << 31
    out = nvidia_backend.empty(x.shape, "f16")
    nvidia_backend.fill_nan(out)
    nvidia_backend.prepare("copy", [x], out, {})()
    nvidia_backend.synchronize()
    host = nvidia_backend.to_host(out)
    bits = host.view(np.uint16)
    assert np.all(bits[:-1] == 0x1C1C)
    assert np.all(host[-1] == 1.0)


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_reduce_sum_over_2_31_elements(nvidia_backend, big_input, axis):
    x, value = big_input
    out_shape = {-1: (BIG_ROWS,), 0: (BIG_COLS,), None: ()}[axis]
    dtype = "f32" if axis is None else "f16"
    if axis is None:
        # the f16 total overflows: sum an f32 reinterpretation of the same bytes instead (0x1C1C1C1C)
        xs = DeviceArray(nvidia_backend, x.ptr, (x.size // 2,), (1,), "f32", owner=x, cuda_interop=True)
        out = nvidia_backend.empty((), "f32")
        nvidia_backend.prepare("reduce_sum", [xs], out, {"axis": None})()
        nvidia_backend.synchronize()
        v32 = float(np.array([0x1C1C1C1C], np.uint32).view(np.float32)[0])
        last = float(np.array([0x3C003C00], np.uint32).view(np.float32)[0])  # two f16 1.0s
        n_last = BIG_COLS // 2
        expected = (xs.size - n_last) * v32 + n_last * last
        got = float(nvidia_backend.to_host(out))
        assert got == pytest.approx(expected, rel=1e-5)
        return
    out = nvidia_backend.empty(out_shape, dtype)
    nvidia_backend.fill_nan(out)
    nvidia_backend.prepare("reduce_sum", [x], out, {"axis": axis})()
    nvidia_backend.synchronize()
    got = nvidia_backend.to_host(out).astype(np.float64)
    if axis == -1:
        expected = np.full(BIG_ROWS, BIG_COLS * value)
        expected[-1] = BIG_COLS * 1.0
    else:
        expected = np.full(BIG_COLS, (BIG_ROWS - 1) * value + 1.0)
    assert np.all(np.isfinite(expected.astype(np.float16)))
    np.testing.assert_allclose(got, expected.astype(np.float16).astype(np.float64), rtol=2e-3)


# ---- zero-copy interop ------------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_cupy_inputs(nvidia_backend, rng, dtype):
    cp = pytest.importorskip("cupy")
    x_host = rng.uniform(-5, 5, (33, 1000)).astype(dtype)
    x = cp.asarray(x_host)
    out = ops.softmax(x, backend="nvidia")
    got = cp.asarray(out)  # zero-copy through __cuda_array_interface__
    assert got.shape == x.shape
    result = operators.spec("softmax").check(cp.asnumpy(got), [x_host], dtype.replace("float", "f"), {"axis": -1})
    assert result.ok, result.message
    # an output given as a cupy array is written in place, and strided cupy views work
    y = cp.empty_like(x[:, ::2])
    ops.relu(x[:, ::2], 0.5, backend="nvidia", out=y)
    cp.cuda.runtime.deviceSynchronize()
    ref = np.where(x_host[:, ::2] > 0, x_host[:, ::2], x_host[:, ::2] * np.float32(0.5)).astype(dtype)
    np.testing.assert_array_equal(cp.asnumpy(y), ref)
    s = ops.reduce_sum(x.T, axis=0, backend="nvidia")
    np.testing.assert_allclose(cp.asnumpy(cp.asarray(s)).astype(np.float64), x_host.astype(np.float64).sum(1),
                               rtol=1e-2, atol=1e-2)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_torch_inputs(nvidia_backend, rng, dtype):
    check_torch_inputs("nvidia", dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_what_goes_in_comes_out(nvidia_backend, rng, dtype):
    """Without ``out``: torch in, torch out (bf16 included); numpy in, numpy out; CuPy in, CuPy out; a DeviceArray
    handed to torch and CuPy through DLPack."""
    check_what_goes_in_comes_out(nvidia_backend, dtype, rng)


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["torch", "cupy"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_op_api_fast_path(nvidia_backend, rng, lib, dtype):
    """Repeated op API calls with an ``out`` (the fast path) on torch tensors and CuPy arrays: right results on
    fresh buffers in every op and layout, the full path taken once per layout."""
    check_op_api_fast_path(nvidia_backend, lib, dtype, rng)


def test_clean_flush_reads_its_buffer_on_the_gpu(nvidia_backend):
    """oprt-bench --flush clean on the nvidia backend: the memset of 2 x L2, then the library's reduce_sum over it."""
    b = nvidia_backend
    b.flush_cache(clean=True)
    b.synchronize()
    reader = b._flush_reader
    assert reader is not None and b._flush.nbytes >= 2 * b.device_info().l2_bytes
    word = np.frombuffer(bytes([b._flush_value] * 4), np.float32)[0]
    got = float(b.to_host(reader.output)[()])
    assert got == pytest.approx(float(word) * (b._flush.nbytes // 4), rel=1e-3)


@pytest.mark.gpu
def test_bench_rows_name_their_kernels(nvidia_backend):
    """oprt-bench's ``kernel`` column on the nvidia backend (results schema 3): every row of a smoke sweep names what
    its launch ran, through the backend's ``last_launch`` (oprt_nvidia.last_launch), in the op's family of kernels."""
    from op_helpers import registry_of

    from oprt_bench.sweep import SweepOptions, make_plan, run_sweep

    opts = SweepOptions(backends="nvidia", baseline="none", ops="copy,reduce_sum,softmax", dtypes="f32,f16",
                        cases="smoke", mode="test", calibrate=False, isolation="none")
    plan = make_plan(registry_of(nvidia_backend, "nvidia", "oprt-nvidia"), opts)
    rows: list[dict] = []
    run_sweep(plan, rows.append)
    bad = [r for r in rows if r["status"] != "ok"]
    assert len(rows) == plan.n_rows > 0 and not bad, bad
    family = {"copy": ("ew_", "cudaMemcpyAsync"), "reduce_sum": ("reduce_",), "softmax": ("softmax_",)}
    for r in rows:
        assert r["kernel"].startswith(family[r["op"]]), r
        if r["case"] == "33x65-transposed":
            assert "transpose" in r["kernel"], r
        if r["op"] == "reduce_sum" and r["case"].endswith("-axis0"):
            assert r["kernel"].startswith("reduce_cols"), r
        if r["op"] == "reduce_sum" and r["case"].endswith("-axis-1"):
            assert r["kernel"].startswith("reduce_rows"), r
