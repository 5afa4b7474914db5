"""Aliasing of ``out`` and the inputs: exact in place where the op allows it (``OpSpec.inplace``), every other
overlap refused, on the numpy backend (oprt_core.validate.check_overlap) and in C (oprt_validate.h's
oprt_check_alias, status OPRT_STATUS_OVERLAP) through the host library, the op API's fast path included."""

from __future__ import annotations

import re

import numpy as np
import pytest
from op_helpers import host_ops as host_library_ops

from oprt_core import cdecl, hookimpl, operators, ops
from oprt_core.compiled import DeviceArray
from oprt_core.dtypes import get_dtype
from oprt_core.errors import InvalidArgumentError, OverlapError
from oprt_core.numpy_backend import NumpyBackend
from oprt_core.plugins import Registry, get_plugin_manager
from oprt_core.spec import OpSpec
from oprt_core.validate import check_overlap

DTYPES = ("f32", "f16", "bf16")
OVERLAP = 12  # OPRT_STATUS_OVERLAP


def rand(shape, dtype="f32", seed=0):
    return np.random.default_rng(seed).uniform(-2.0, 2.0, shape).astype(get_dtype(dtype).numpy)


def partial(op, name, allowed=True):
    hint = f", or {name} itself as out \\(in place\\)" if allowed else ""
    return f"{op}: out overlaps input {name} \\(partial overlap of the same memory\\); use a separate output{hint}$"


def other_layout(op, name, allowed=True):
    hint = f", or {name} itself as out \\(in place\\)" if allowed else ""
    return f"{op}: out overlaps input {name} \\(the same memory in another layout\\); use a separate output{hint}$"


def not_in_place(op, name="x"):
    return f"{op}: out is input {name} itself, and {op} cannot run in place; use a separate output$"


@pytest.fixture(autouse=True)
def fresh_cache():
    ops.clear_cache()
    yield
    ops.clear_cache()


def test_inplace_must_name_inputs():
    spec = operators.spec("relu")
    with pytest.raises(InvalidArgumentError, match=r"relu: inplace names 'y', which are not inputs \(inputs: x\)"):
        OpSpec(name="relu", doc="", n_inputs=1, input_names=("x",), reference_fn=spec.reference_fn,
               bytes_fn=spec.bytes_fn, flops_fn=spec.flops_fn, budgets=spec.budgets, case_sets={}, inplace=("y",))


# ---------------------------------------------------------------------------------------------
# numpy backend


def test_numpy_partial_overlap_is_refused_and_nothing_written():
    x = rand(4097)
    before = x.copy()
    with pytest.raises(OverlapError, match=partial("copy", "x")) as info:
        ops.copy(x[:-1], out=x[1:])
    assert info.value.backend == "numpy" and info.value.status is None
    with pytest.raises(OverlapError, match=partial("relu", "x")):
        ops.relu(x[1:], out=x[:-1])
    np.testing.assert_array_equal(x, before)


def test_numpy_same_memory_in_another_layout_is_refused():
    y = rand((6, 6))
    before = y.copy()
    with pytest.raises(OverlapError, match=other_layout("copy", "x")):
        ops.copy(y.T, out=y)
    with pytest.raises(OverlapError, match=other_layout("softmax", "x")):
        ops.softmax(y, out=y.T, axis=0)
    with pytest.raises(OverlapError, match=partial("softmax", "x")):
        ops.softmax(y, out=y[::-1], axis=-1)  # reversed rows: out starts at x's last row
    with pytest.raises(OverlapError, match=other_layout("vector_add", "a")):
        ops.vector_add(y.T, rand((6, 6), seed=1), out=y)
    np.testing.assert_array_equal(y, before)


def test_numpy_interleaved_rows_that_share_no_byte_are_accepted():
    """x[::2] and x[1::2], or a row's two halves: their spans intersect, but laid out as rows of one stride their rows
    share no byte (the rows test), so the op runs and writes only out."""
    x = rand(16)
    src = x[::2].copy()
    ops.copy(x[::2], out=x[1::2])
    np.testing.assert_array_equal(x[1::2], src)
    np.testing.assert_array_equal(x[::2], src)
    y = rand((4, 8))
    left = y[:, :4].copy()
    ops.relu(y[:, :4], out=y[:, 4:], negative_slope=0.5)
    assert operators.spec("relu").check(y[:, 4:].copy(), [left], "f32", {"negative_slope": 0.5}).ok
    np.testing.assert_array_equal(y[:, :4], left)


def test_numpy_interleaved_views_of_other_strides_are_refused_conservatively():
    """x[::4] and x[1::2] share no element, but their strides differ, so the rows test cannot tell: refused. Rows
    that overlap by one element (a row's first five and last four of eight) are refused too."""
    x = rand(16)
    with pytest.raises(OverlapError, match=partial("copy", "x")):
        ops.copy(x[::4], out=x[1::2][:4])
    y = rand((4, 9))
    with pytest.raises(OverlapError, match=partial("relu", "x")):
        ops.relu(y[:, :5], out=y[:, 4:])


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_disjoint_views_of_one_buffer_are_accepted(dtype):
    x = rand(16, dtype)
    src = x[:8].copy()
    ops.copy(x[:8], out=x[8:])
    np.testing.assert_array_equal(x[8:], src)
    y = rand((8, 5), dtype, 2)
    top = y[:4].copy()
    ops.relu(y[:4], out=y[4:], negative_slope=0.5)
    res = operators.spec("relu").check(y[4:], [top], dtype, {"negative_slope": 0.5})
    assert res.ok, res.message


def _in_place_calls():
    """(op, params, input shapes, which input is out) of each core op's smoke and edge cases (empty ones too), for
    every input the op may write in place whose shape is the output's."""
    for spec in operators.specs("core"):
        for case in spec.cases("smoke") + spec.cases("edge"):
            shapes = [t.shape for t in case.inputs]
            params = spec.validate_params(case.param_dict, shapes)
            for k, name in enumerate(spec.input_names):
                if name in spec.inplace and shapes[k] == spec.output_shape(shapes, params):
                    yield pytest.param(spec.name, case.param_dict, shapes, k, id=f"{spec.name}-{case.name}-{name}")


IN_PLACE = list(_in_place_calls())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op, params, shapes, k", IN_PLACE)
def test_numpy_exact_in_place_is_right(op, params, shapes, k, dtype):
    """out = input k itself: the result matches the float64 reference of the inputs as they were (and differs from
    them, unless the op gives back that input)."""
    spec = operators.spec(op)
    inputs = [rand(s, dtype, seed=i + 1) for i, s in enumerate(shapes)]
    before = [x.copy() for x in inputs]
    out = ops.run(op, inputs, params, out=inputs[k])
    assert out is inputs[k]
    res = spec.check(inputs[k], before, dtype, params)
    assert res.ok, res.message
    identity = np.array_equal(spec.reference(before, spec.validate_params(params, shapes)), before[k])
    assert not np.array_equal(inputs[k], before[k]) or identity


def test_numpy_exact_in_place_of_a_strided_view():
    """A transposed view as its own out: the same memory and the same strides, so exact."""
    base = rand((40, 30), "f16", 4)
    view = base.T
    before = view.copy()
    ops.softmax(view, axis=0, out=view)
    res = operators.spec("softmax").check(view, [before], "f16", {"axis": 0})
    assert res.ok, res.message


def test_numpy_backend_refuses_overlap_without_the_op_api():
    """prepare() and a prepared launcher's run() on other buffers check too (the benchmark harness's way in)."""
    be = operators.equip(NumpyBackend())
    x = rand(33)
    with pytest.raises(OverlapError, match=partial("copy", "x")):
        be.prepare("copy", [x[:-1]], x[1:], {})
    launcher = be.prepare("copy", [rand(32, seed=1)], np.empty(32, np.float32), {})
    with pytest.raises(OverlapError, match=partial("copy", "x")):
        launcher.run([x[1:]], x[:-1])


def test_check_overlap_reads_any_array_interface():
    """Objects exposing only ``__array_interface__`` (or ``__cuda_array_interface__``) are judged from it."""

    class Iface:
        def __init__(self, arr, name):
            self._name, self._iface = name, dict(arr.__array_interface__)

        def __getattr__(self, item):
            if item == self._name:
                return self._iface
            raise AttributeError(item)

    x = rand(10)
    for name in ("__array_interface__", "__cuda_array_interface__"):
        with pytest.raises(OverlapError, match=partial("copy", "x")):
            check_overlap(operators.spec("copy"), Iface(x[1:], name), [Iface(x[:-1], name)], "torch")
        check_overlap(operators.spec("copy"), Iface(x[5:], name), [Iface(x[:5], name)], "torch")
        check_overlap(operators.spec("copy"), Iface(x, name), [Iface(x, name)], "torch")  # exact
        with pytest.raises(OverlapError, match=not_in_place("reduce_sum")):
            check_overlap(operators.spec("reduce_sum"), Iface(x, name), [Iface(x, name)], "torch")
    check_overlap(operators.spec("copy"), object(), [x], "torch")  # no layout to judge by: not judged


# ---------------------------------------------------------------------------------------------
# the C library (host build of oprt_validate.h): the raw ABI, CompiledBackend and the op API's fast path


class _RegisterBackend:
    def __init__(self, backend):
        self.backend = backend

    @hookimpl
    def oprt_register_backends(self, register) -> None:
        register(self.backend)


@pytest.fixture
def host_ops(host_backend, monkeypatch):
    """The op API with the host library registered as backend ``host`` (the process-wide registry, so the fast
    path is taken)."""
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(_RegisterBackend(host_backend), "host-lib", "tests")
    reg = Registry(pm)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    return host_backend


def view(base: DeviceArray, offset: int, shape, strides=None) -> DeviceArray:
    """A view of ``base``'s memory from element ``offset`` (row-major strides unless given, in elements)."""
    if strides is None:
        strides, run = [], 1
        for n in reversed(shape):
            strides.insert(0, run)
            run *= max(n, 1)
    return DeviceArray(base.backend, base.ptr + offset * base.itemsize, shape, strides, base.dtype_info, base)


def _c_call(ffi, lib, op, out_t, in_ts, out_ptr, in_ptrs, extra=(), ws=0):
    p = ffi.new(f"oprt_{op}_descriptor_t *")
    assert getattr(lib, f"oprt_create_{op}_descriptor")(p, out_t, *in_ts, *extra) == 0
    desc = ffi.gc(p[0], getattr(lib, f"oprt_destroy_{op}_descriptor"))
    workspace = np.empty(max(ws, 1), np.uint8)
    status = getattr(lib, f"oprt_{op}")(desc, ffi.from_buffer(workspace), ws, out_ptr, *in_ptrs, ffi.NULL)
    return status, ffi.string(lib.oprt_last_error_message()).decode()


def _tdesc(ffi, shape, strides=None):
    t = ffi.new("oprt_tensor_desc_t *")
    t.dtype, t.ndim = 0, len(shape)
    if strides is None:
        strides, run = [], 1
        for n in reversed(shape):
            strides.insert(0, run)
            run *= max(n, 1)
    for i, (n, s) in enumerate(zip(shape, strides)):
        t.shape[i], t.strides[i] = n, s
    return t


def test_c_refuses_partial_overlap_with_status_and_message(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    x = rand(201)
    before = x.copy()
    base = ffi.from_buffer(x)
    t = _tdesc(ffi, (100,))
    status, msg = _c_call(ffi, lib, "copy", t, [t], base + 4, [base])
    assert status == OVERLAP and re.fullmatch(partial("copy", "x"), msg), msg
    status, msg = _c_call(ffi, lib, "relu", t, [t], base, [base + 4], extra=(0.0,))
    assert status == OVERLAP and re.fullmatch(partial("relu", "x"), msg), msg
    status, msg = _c_call(ffi, lib, "vector_add", t, [t, t], base + 400, [base, base + 4])  # out after a, on b
    assert status == OVERLAP and re.fullmatch(partial("vector_add", "b"), msg), msg
    status, msg = _c_call(ffi, lib, "softmax", t, [t], base + 200, [base], extra=(-1,))
    assert status == OVERLAP and re.fullmatch(partial("softmax", "x"), msg), msg
    t2, t1 = _tdesc(ffi, (10, 10)), _tdesc(ffi, (10,))
    status, msg = _c_call(ffi, lib, "reduce_sum", t1, [t2], base + 40, [base], extra=(-1, 0), ws=40)
    assert status == OVERLAP and re.fullmatch(partial("reduce_sum", "x", allowed=False), msg), msg
    np.testing.assert_array_equal(x, before)  # nothing was written
    assert lib.oprt_status_string(OVERLAP) != ffi.NULL
    assert ffi.string(lib.oprt_status_string(OVERLAP)).decode() == "out overlaps an input"


def test_c_refuses_the_same_memory_in_another_layout(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    y = rand((8, 8))
    base = ffi.from_buffer(y)
    status, msg = _c_call(ffi, lib, "copy", _tdesc(ffi, (8, 8)), [_tdesc(ffi, (8, 8), (1, 8))], base, [base])
    assert status == OVERLAP and re.fullmatch(other_layout("copy", "x"), msg), msg
    # b broadcast from out's first row
    status, msg = _c_call(ffi, lib, "vector_add", _tdesc(ffi, (8, 8)), [_tdesc(ffi, (8, 8)), _tdesc(ffi, (8,))],
                          base, [base, base])
    assert status == OVERLAP and re.fullmatch(other_layout("vector_add", "b"), msg), msg


@pytest.mark.parametrize("op", [op for op in operators.names("core") if op in host_library_ops()])
def test_c_allows_exact_in_place_as_the_spec_says(host_raw, op):
    """C (oprt_plan_*'s alias.inplace) and the Python spec (OpSpec.inplace) agree op by op, input by input, on
    inputs and an out of one layout: (6, 4), or (6, 1) kept as is by an op that keeps its reduced axis."""
    ffi, lib = host_raw.ffi, host_raw.lib
    spec = operators.spec(op)
    keep = {"keepdims": True} if any(p.name == "keepdims" for p in spec.params) else {}
    params = spec.validate_params(keep)
    shape = next(s for s in ((6, 4), (6, 1)) if spec.output_shape([s] * spec.n_inputs, params) == s)
    extra = cdecl.c_params(spec, params)
    for k, name in enumerate(spec.input_names):
        xs = [rand(shape, seed=i + 1) for i in range(spec.n_inputs)]
        before = [x.copy() for x in xs]
        bufs = [ffi.from_buffer(x) for x in xs]
        t = _tdesc(ffi, shape)
        status, msg = _c_call(ffi, lib, op, t, [t] * spec.n_inputs, bufs[k], bufs, extra=extra, ws=64)
        if name in spec.inplace:
            assert status == 0, msg
            res = spec.check(xs[k], before, "f32", params)
            assert res.ok, res.message
        else:
            assert status == OVERLAP and re.fullmatch(not_in_place(op, name), msg), msg
            np.testing.assert_array_equal(xs[k], before[k])


def test_c_accepts_disjoint_pointers_into_one_buffer(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    x = rand(20)
    src = x[:10].copy()
    base = ffi.from_buffer(x)
    t = _tdesc(ffi, (10,))
    status, msg = _c_call(ffi, lib, "copy", t, [t], base + 40, [base])
    assert status == 0, msg
    np.testing.assert_array_equal(x[10:], src)
    # reversed: x's span ends where out's starts
    status, msg = _c_call(ffi, lib, "copy", t, [_tdesc(ffi, (10,), (-1,))], base + 40, [base + 36])
    assert status == 0, msg
    np.testing.assert_array_equal(x[10:], src[::-1])


def test_c_accepts_interleaved_rows_that_share_no_byte(host_raw):
    """The halves of each row of a (6, 10) buffer: spans intersect, rows share no byte (oprt_rows_disjoint)."""
    ffi, lib = host_raw.ffi, host_raw.lib
    x = rand((6, 10))
    left = x[:, :5].copy()
    base = ffi.from_buffer(x)
    t = _tdesc(ffi, (6, 5), (10, 1))
    status, msg = _c_call(ffi, lib, "copy", t, [t], base + 20, [base])
    assert status == 0, msg
    np.testing.assert_array_equal(x[:, 5:], left)
    # six columns from column 4 overlap the first five by one: refused
    status, msg = _c_call(ffi, lib, "copy", _tdesc(ffi, (6, 6), (10, 1)), [_tdesc(ffi, (6, 6), (10, 1))], base + 16,
                          [base])
    assert status != 0 and "out overlaps input x (partial overlap of the same memory)" in msg


def test_compiled_backend_raises_overlap_error(host_backend):
    be = host_backend
    base = be.to_device(rand(65))
    with pytest.raises(OverlapError, match=partial("copy", "x")) as info:
        be.prepare("copy", [view(base, 0, (64,))], view(base, 1, (64,)), {})()
    assert info.value.status == OVERLAP and info.value.status_name == "OPRT_STATUS_OVERLAP"
    assert info.value.backend == "host"


def test_op_api_on_the_host_library(host_ops):
    be = host_ops
    host = rand(4097)
    base = be.to_device(host)
    with pytest.raises(OverlapError, match=partial("copy", "x")):
        ops.copy(view(base, 0, (4096,)), backend="host", out=view(base, 1, (4096,)))
    np.testing.assert_array_equal(be.to_host(base), host)
    x = view(base, 0, (4097,))
    ops.relu(x, negative_slope=0.25, backend="host", out=x)
    res = operators.spec("relu").check(be.to_host(base), [host], "f32", {"negative_slope": 0.25})
    assert res.ok, res.message


def test_fast_path_refuses_overlap_in_c(host_ops):
    """A layout launched before (disjoint buffers) is launched again from the fast path's cache on new pointers:
    the C library refuses the overlapping ones (the finding: x[:-1] into x[1:] has a fresh array's layout)."""
    be = host_ops
    n = 4096
    a, out = be.to_device(rand(n)), be.empty((n,), "f32")
    ops.copy(a, backend="host", out=out)
    assert len(ops._fast) == 1
    host = rand(n + 1, seed=5)
    base = be.to_device(host)
    launched = []
    real_full = ops._full
    ops._full = lambda *args: (launched.append(args[0]), real_full(*args))[1]
    try:
        with pytest.raises(OverlapError, match=partial("copy", "x")) as info:
            ops.copy(view(base, 0, (n,)), backend="host", out=view(base, 1, (n,)))
    finally:
        ops._full = real_full
    assert launched == [], "the call did not take the fast path"
    assert info.value.status == OVERLAP  # refused by the library, not by Python
    np.testing.assert_array_equal(be.to_host(base), host)
    # exact in place through the fast path: the same layout, the same pointer
    x = view(base, 0, (n,))
    ops.copy(x, backend="host", out=x)
    np.testing.assert_array_equal(be.to_host(base), host)
    ops.relu(x, backend="host", out=out)
    ops.relu(x, backend="host", out=x)  # fast path (the layout is filed), in place
    res = operators.spec("relu").check(be.to_host(x), [host[:n]], "f32", {"negative_slope": 0.0})
    assert res.ok, res.message
