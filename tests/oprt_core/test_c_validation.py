"""The C ABI and its shared validation (oprt_validate.h), driven directly through cffi on the host library.

Every oprt_status_t except SUCCESS is reached through the C API and maps to its exception class with the
library's own last-error text; bad arguments of every kind return a status and never crash the process.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from op_helpers import host_ops

import oprt_core.errors as E
from oprt_core import cdecl, operators
from oprt_core.cabi import STATUS_NAMES, abi_version
from oprt_core.compiled import OPRT_AXIS_ALL, STATUS_EXCEPTIONS, raise_for_status
from oprt_core.dtypes import get_dtype

F32, F16, BF16 = 0, 1, 2


def tdesc(ffi, shape, strides=None, dtype=F32):
    """An oprt_tensor_desc_t (contiguous strides unless given)."""
    t = ffi.new("oprt_tensor_desc_t *")
    t.dtype = dtype
    t.ndim = len(shape)
    if strides is None:
        strides, run = [], 1
        for n in reversed(shape):
            strides.insert(0, run)
            run *= max(n, 1)
    for i, (n, s) in enumerate(zip(shape, strides)):
        t.shape[i] = n
        t.strides[i] = s
    return t


def last_error(ffi, lib) -> str:
    return ffi.string(lib.oprt_last_error_message()).decode()


# ---------------------------------------------------------------------------------------------
# every status code, through the C API, to its exception class


def _null_pointer(ffi, lib, mp):
    return lib.oprt_get_device_count(ffi.NULL)


def _bad_shape(ffi, lib, mp):
    return lib.oprt_create_copy_descriptor(ffi.new("oprt_copy_descriptor_t *"), tdesc(ffi, (4, 5)), tdesc(ffi, (5, 4)))


def _bad_strides(ffi, lib, mp):
    out = tdesc(ffi, (4, 5), (0, 1))
    return lib.oprt_create_relu_descriptor(ffi.new("oprt_relu_descriptor_t *"), out, tdesc(ffi, (4, 5)), 0.0)


def _bad_param(ffi, lib, mp):
    return lib.oprt_create_softmax_descriptor(ffi.new("oprt_softmax_descriptor_t *"), tdesc(ffi, (4, 5)),
                                              tdesc(ffi, (4, 5)), 2)


def _unsupported_dtype(ffi, lib, mp):
    return lib.oprt_create_copy_descriptor(ffi.new("oprt_copy_descriptor_t *"), tdesc(ffi, (3,), dtype=7),
                                           tdesc(ffi, (3,), dtype=7))


def _unsupported_case(ffi, lib, mp):
    mp.setenv("OPRT_HOST_UNSUPPORTED_OPS", "relu,softmax")
    return lib.oprt_create_softmax_descriptor(ffi.new("oprt_softmax_descriptor_t *"), tdesc(ffi, (4, 5)),
                                              tdesc(ffi, (4, 5)), -1)


def _insufficient_workspace(ffi, lib, mp):
    p = ffi.new("oprt_reduce_sum_descriptor_t *")
    assert lib.oprt_create_reduce_sum_descriptor(p, tdesc(ffi, (4,)), tdesc(ffi, (4, 5)), -1, 0) == 0
    desc = ffi.gc(p[0], lib.oprt_destroy_reduce_sum_descriptor)
    x = np.ones((4, 5), np.float32)
    out = np.empty(4, np.float32)
    return lib.oprt_reduce_sum(desc, ffi.NULL, 0, ffi.from_buffer(out), ffi.from_buffer(x), ffi.NULL)


def _device_error(ffi, lib, mp):
    events = []
    for _ in range(2):
        p = ffi.new("oprt_event_t *")
        assert lib.oprt_event_create(p) == 0
        events.append(ffi.gc(p[0], lib.oprt_event_destroy))
    assert lib.oprt_event_record(events[0], ffi.NULL) == 0
    return lib.oprt_event_elapsed_ms(ffi.new("float *"), events[0], events[1])  # end never recorded


def _device_fault(ffi, lib, mp):
    """A planned fault of the host library (OPRT_HOST_FAULT_OPS): sticky until the variable is unset."""
    x = np.arange(-3, 5, dtype=np.float32)
    out = np.empty_like(x)
    desc = ffi.new("oprt_relu_descriptor_t *")
    assert lib.oprt_create_relu_descriptor(desc, tdesc(ffi, (8,)), tdesc(ffi, (8,)), 0.0) == 0
    desc = ffi.gc(desc[0], lib.oprt_destroy_relu_descriptor)
    mp.setenv("OPRT_HOST_FAULT_OPS", "relu")
    return lib.oprt_relu(desc, ffi.NULL, 0, ffi.from_buffer(out), ffi.from_buffer(x), ffi.NULL)


def _out_of_memory(ffi, lib, mp):
    p = ffi.new("void **")
    return lib.oprt_malloc(p, 1 << 62)


def _no_device(ffi, lib, mp):
    mp.setenv("OPRT_HOST_DEVICE_COUNT", "0")
    return lib.oprt_set_device(0)


def _bad_device(ffi, lib, mp):
    return lib.oprt_set_device(7)


def _overlap(ffi, lib, mp):
    p = ffi.new("oprt_copy_descriptor_t *")
    assert lib.oprt_create_copy_descriptor(p, tdesc(ffi, (4,)), tdesc(ffi, (4,))) == 0
    desc = ffi.gc(p[0], lib.oprt_destroy_copy_descriptor)
    x = np.arange(5, dtype=np.float32)
    base = ffi.from_buffer(x)
    return lib.oprt_copy(desc, ffi.NULL, 0, base + 4, base, ffi.NULL)  # out = x[1:], x = x[:-1]


TRIGGERS = {
    "OPRT_STATUS_NULL_POINTER": _null_pointer,
    "OPRT_STATUS_BAD_SHAPE": _bad_shape,
    "OPRT_STATUS_BAD_STRIDES": _bad_strides,
    "OPRT_STATUS_BAD_PARAM": _bad_param,
    "OPRT_STATUS_UNSUPPORTED_DTYPE": _unsupported_dtype,
    "OPRT_STATUS_UNSUPPORTED_CASE": _unsupported_case,
    "OPRT_STATUS_INSUFFICIENT_WORKSPACE": _insufficient_workspace,
    "OPRT_STATUS_DEVICE_ERROR": _device_error,
    "OPRT_STATUS_OUT_OF_MEMORY": _out_of_memory,
    "OPRT_STATUS_NO_DEVICE": _no_device,
    "OPRT_STATUS_BAD_DEVICE": _bad_device,
    "OPRT_STATUS_OVERLAP": _overlap,
    "OPRT_STATUS_DEVICE_FAULT": _device_fault,
}


@pytest.mark.parametrize("code", sorted(c for c in STATUS_NAMES if c != 0), ids=lambda c: STATUS_NAMES[c])
def test_every_status_code_is_reached_and_mapped(code, host_backend, host_raw, monkeypatch):
    name = STATUS_NAMES[code]
    assert name in TRIGGERS, f"no test reaches {name} through the C API"
    ffi, lib = host_raw.ffi, host_raw.lib
    status = TRIGGERS[name](ffi, lib, monkeypatch)
    assert status == code, f"expected {name}, got {STATUS_NAMES.get(status, status)}: {last_error(ffi, lib)}"
    text = last_error(ffi, lib)
    assert text and text != ffi.string(lib.oprt_status_string(code)).decode()
    with pytest.raises(STATUS_EXCEPTIONS[code]) as info:
        host_backend.check(status)
    err = info.value
    assert type(err) is STATUS_EXCEPTIONS[code]
    assert isinstance(err, E.BackendError) and isinstance(err, E.OprtError)
    assert err.status == code and err.status_name == name and err.backend == "host"
    assert err.message == text and text in str(err) and name in str(err)


def test_status_mapping_covers_the_header_exactly():
    assert set(STATUS_EXCEPTIONS) == set(STATUS_NAMES) - {0}
    assert len(set(STATUS_EXCEPTIONS.values())) == len(STATUS_EXCEPTIONS)  # one class per status


def test_unknown_status_is_a_plain_backend_error(host_backend):
    with pytest.raises(E.BackendError) as info:
        host_backend.check(99)
    assert type(info.value) is E.BackendError and info.value.status == 99


def test_success_does_not_raise(host_backend, host_raw):
    host_backend.check(0)
    raise_for_status(host_raw.ffi, host_raw.lib, 0)


def test_status_strings(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    strings = {c: ffi.string(lib.oprt_status_string(c)).decode() for c in STATUS_NAMES}
    assert strings[0] == "success"
    assert len(set(strings.values())) == len(strings)
    assert ffi.string(lib.oprt_status_string(1234)).decode() == "unknown status"


def test_library_info(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    info = ffi.new("oprt_library_info_t *")
    assert lib.oprt_get_library_info(info) == 0
    assert info.abi_version == abi_version()
    assert ffi.string(info.backend) == b"host" and ffi.string(info.flavour) == b"host-c"
    assert ffi.string(info.toolchain)
    assert lib.oprt_get_library_info(ffi.NULL) == 1


# ---------------------------------------------------------------------------------------------
# tensor descriptors


@pytest.mark.parametrize(
    "mutate, status, words",
    [
        (lambda t: setattr(t, "dtype", -1), 5, "unknown dtype code -1"),
        (lambda t: setattr(t, "ndim", 9), 2, "ndim 9"),
        (lambda t: setattr(t, "ndim", -1), 2, "ndim -1"),
        (lambda t: t.shape.__setitem__(0, -3), 2, "negative extent"),
        (lambda t: t.strides.__setitem__(0, 1 << 62), 3, "overflows"),
    ],
    ids=["dtype", "ndim>8", "ndim<0", "negative-extent", "stride-overflow"],
)
def test_bad_tensor_descriptor(host_raw, mutate, status, words):
    ffi, lib = host_raw.ffi, host_raw.lib
    x = tdesc(ffi, (4, 5))
    mutate(x)
    got = lib.oprt_create_copy_descriptor(ffi.new("oprt_copy_descriptor_t *"), tdesc(ffi, (4, 5)), x)
    assert got == status, last_error(ffi, lib)
    assert words in last_error(ffi, lib)


def test_too_many_elements(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    big = tdesc(ffi, (1 << 31, 1 << 31, 1 << 10))
    assert lib.oprt_create_copy_descriptor(ffi.new("oprt_copy_descriptor_t *"), big, big) == 2
    assert "too many elements" in last_error(ffi, lib)


def _entry_call(ffi, op):
    """(output descriptors, input descriptors with NULL for absent optional ones, the C params) of the op's first
    smoke case, each tensor in the dtype the op gives it (f32, an index input its first index dtype)."""
    spec = operators.spec(op)
    case = spec.cases("smoke")[0]
    shapes = [t.shape for t in case.inputs]
    params = spec.validate_params(case.param_dict, shapes)
    outs = [tdesc(ffi, s) for s in spec.output_shapes(shapes, params)]
    index = {name: get_dtype(dts[0], index=True).code for name, dts in spec.index_inputs.items()}
    ins = [tdesc(ffi, s, dtype=index.get(name, F32)) for name, s in zip(spec.input_names, shapes)]
    ins += [ffi.NULL] * (spec.n_inputs - len(ins))
    return outs, ins, len(shapes), cdecl.c_params(spec, params)


@pytest.mark.parametrize("op", [op for op in operators.names() if op in host_ops()])
def test_null_descriptor_arguments(host_raw, op):
    ffi, lib = host_raw.ffi, host_raw.lib
    create = getattr(lib, f"oprt_create_{op}_descriptor")
    outs, ins, given, extra = _entry_call(ffi, op)
    tensors = outs + ins
    # NULL output handle
    assert create(ffi.NULL, *tensors, *extra) == 1
    assert "desc" in last_error(ffi, lib)
    # each NULL tensor descriptor the call needs (an absent optional input is NULL already)
    for k in range(len(outs) + given):
        args = list(tensors)
        args[k] = ffi.NULL
        assert create(ffi.new(f"oprt_{op}_descriptor_t *"), *args, *extra) == 1, last_error(ffi, lib)
    # NULL descriptor to the other entry points
    assert getattr(lib, f"oprt_get_{op}_workspace_size")(ffi.NULL, ffi.new("size_t *")) == 1
    run = getattr(lib, f"oprt_{op}")
    nulls = [ffi.NULL] * len(tensors)
    assert run(ffi.NULL, ffi.NULL, 0, *nulls, ffi.NULL) == 1
    assert getattr(lib, f"oprt_destroy_{op}_descriptor")(ffi.NULL) == 1
    # a real descriptor with NULL workspace-size pointer and NULL data pointers
    p = ffi.new(f"oprt_{op}_descriptor_t *")
    assert create(p, *tensors, *extra) == 0, last_error(ffi, lib)
    desc = ffi.gc(p[0], getattr(lib, f"oprt_destroy_{op}_descriptor"))
    assert getattr(lib, f"oprt_get_{op}_workspace_size")(desc, ffi.NULL) == 1
    size = ffi.new("size_t *")
    assert getattr(lib, f"oprt_get_{op}_workspace_size")(desc, size) == 0
    ws = ffi.new("char[]", max(int(size[0]), 1))
    assert run(desc, ws, size[0], *nulls, ffi.NULL) == 1
    assert f"argument '{operators.spec(op).output_names[0]}' is NULL" in last_error(ffi, lib)
    buffers = [ffi.new("char[]", 1 << 20) for _ in outs]  # larger than any smoke case's output
    assert run(desc, ws, size[0], *buffers, *nulls[len(outs):], ffi.NULL) == 1
    assert "is NULL" in last_error(ffi, lib)


def test_zero_size_ops_accept_null_pointers(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    p = ffi.new("oprt_copy_descriptor_t *")
    assert lib.oprt_create_copy_descriptor(p, tdesc(ffi, (0, 5)), tdesc(ffi, (0, 5))) == 0
    desc = ffi.gc(p[0], lib.oprt_destroy_copy_descriptor)
    assert lib.oprt_copy(desc, ffi.NULL, 0, ffi.NULL, ffi.NULL, ffi.NULL) == 0


# ---------------------------------------------------------------------------------------------
# shapes, broadcasting, strides, axes


def _create(ffi, lib, op, out, *ins, extra=()):
    p = ffi.new(f"oprt_{op}_descriptor_t *")
    status = getattr(lib, f"oprt_create_{op}_descriptor")(p, out, *ins, *extra)
    if status == 0:
        getattr(lib, f"oprt_destroy_{op}_descriptor")(p[0])
    return status


@pytest.mark.parametrize(
    "a, b, out, status",
    [
        ((4, 5), (4, 5), (4, 5), 0),
        ((4, 5), (5,), (4, 5), 0),
        ((4, 1), (1, 5), (4, 5), 0),
        ((5, 1, 7), (3, 1), (5, 3, 7), 0),
        ((), (3,), (3,), 0),
        ((0, 3), (3,), (0, 3), 0),
        ((4, 5), (4,), (4, 5), 2),        # trailing dims differ
        ((4, 5), (4, 5), (4, 6), 2),      # out is not the broadcast shape
        ((4, 5), (5,), (2, 4, 5), 2),     # out larger than the broadcast shape
        ((3,), (3,), (1, 3), 2),
    ],
)
def test_vector_add_broadcasting(host_raw, a, b, out, status):
    ffi, lib = host_raw.ffi, host_raw.lib
    got = _create(ffi, lib, "vector_add", tdesc(ffi, out), tdesc(ffi, a), tdesc(ffi, b))
    assert got == status, last_error(ffi, lib)
    if status:
        assert "do not broadcast" in last_error(ffi, lib)


def test_dtype_mismatch(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    got = _create(ffi, lib, "vector_add", tdesc(ffi, (3,)), tdesc(ffi, (3,)), tdesc(ffi, (3,), dtype=F16))
    assert got == 5 and "dtype mismatch" in last_error(ffi, lib) and "f16" in last_error(ffi, lib)
    got = _create(ffi, lib, "softmax", tdesc(ffi, (3,), dtype=BF16), tdesc(ffi, (3,)), extra=(-1,))
    assert got == 5 and "bf16" in last_error(ffi, lib)


@pytest.mark.parametrize(
    "shape, strides, status",
    [
        ((4, 5), (5, 1), 0),
        ((4, 5), (1, 4), 0),          # transposed output
        ((4, 5), (-5, -1), 0),        # reversed output
        ((4, 5), (10, 2), 0),         # stepped output
        ((4, 5), (0, 1), 3),          # broadcast output
        ((4, 5), (1, 1), 3),          # overlapping rows
        ((4, 5), (4, 1), 3),          # rows overlap by one element
        ((4, 5), (-4, 1), 3),
        ((1, 5), (0, 1), 0),          # zero stride on an extent-1 dim is harmless
        ((0, 5), (0, 0), 0),          # nothing to write
    ],
)
def test_output_strides(host_raw, shape, strides, status):
    ffi, lib = host_raw.ffi, host_raw.lib
    got = _create(ffi, lib, "copy", tdesc(ffi, shape, strides), tdesc(ffi, shape))
    assert got == status, last_error(ffi, lib)
    if status:
        assert "overlapping strides" in last_error(ffi, lib)


def test_inputs_may_have_zero_and_negative_strides(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    assert _create(ffi, lib, "copy", tdesc(ffi, (4, 5)), tdesc(ffi, (4, 5), (0, -1))) == 0
    assert _create(ffi, lib, "softmax", tdesc(ffi, (4, 5)), tdesc(ffi, (4, 5), (0, 0)), extra=(-1,)) == 0


@pytest.mark.parametrize("axis, status", [(-3, 4), (-2, 0), (-1, 0), (0, 0), (1, 0), (2, 4), (100, 4),
                                          (OPRT_AXIS_ALL, 0)])
def test_reduce_sum_axis(host_raw, axis, status):
    ffi, lib = host_raw.ffi, host_raw.lib
    if status:
        out_shape = (4,)
    elif axis == OPRT_AXIS_ALL:
        out_shape = ()
    else:
        out_shape = tuple(n for i, n in enumerate((4, 5)) if i != axis % 2)
    got = _create(ffi, lib, "reduce_sum", tdesc(ffi, out_shape), tdesc(ffi, (4, 5)), extra=(axis, 0))
    assert got == status, last_error(ffi, lib)
    if status:
        assert "out of range" in last_error(ffi, lib) and "-2..1" in last_error(ffi, lib)


@pytest.mark.parametrize(
    "x, out, axis, keepdims, status",
    [
        ((4, 5), (4, 1), -1, 1, 0),
        ((4, 5), (1, 1), OPRT_AXIS_ALL, 1, 0),
        ((4, 5), (1, 5), 0, 1, 0),
        ((4, 5), (5,), 0, 0, 0),
        ((), (), OPRT_AXIS_ALL, 0, 0),
        ((4, 5), (4,), -1, 1, 2),      # keepdims wants (4, 1)
        ((4, 5), (5,), -1, 0, 2),
        ((4, 5), (1,), OPRT_AXIS_ALL, 0, 2),
    ],
)
def test_reduce_sum_out_shape(host_raw, x, out, axis, keepdims, status):
    ffi, lib = host_raw.ffi, host_raw.lib
    got = _create(ffi, lib, "reduce_sum", tdesc(ffi, out), tdesc(ffi, x), extra=(axis, keepdims))
    assert got == status, last_error(ffi, lib)
    if status:
        assert "expected" in last_error(ffi, lib)


@pytest.mark.parametrize("axis, status", [(-3, 4), (-2, 0), (1, 0), (2, 4)])
def test_softmax_axis(host_raw, axis, status):
    ffi, lib = host_raw.ffi, host_raw.lib
    assert _create(ffi, lib, "softmax", tdesc(ffi, (4, 5)), tdesc(ffi, (4, 5)), extra=(axis,)) == status


def test_softmax_of_a_0d_tensor_has_no_axis(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    assert _create(ffi, lib, "softmax", tdesc(ffi, ()), tdesc(ffi, ()), extra=(0,)) == 4


def test_softmax_and_copy_shape_mismatch(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    assert _create(ffi, lib, "softmax", tdesc(ffi, (4, 5)), tdesc(ffi, (5, 4)), extra=(-1,)) == 2
    assert "softmax needs out (4, 5) to equal x (5, 4)" in last_error(ffi, lib)
    assert _create(ffi, lib, "copy", tdesc(ffi, (3,)), tdesc(ffi, (3, 1))) == 2
    assert "(3,)" in last_error(ffi, lib)


@pytest.mark.parametrize("slope, status", [(0.0, 0), (-2.5, 0), (math.inf, 4), (math.nan, 4)])
def test_relu_slope(host_raw, slope, status):
    ffi, lib = host_raw.ffi, host_raw.lib
    assert _create(ffi, lib, "relu", tdesc(ffi, (3,)), tdesc(ffi, (3,)), extra=(slope,)) == status
    if status:
        assert "negative_slope must be finite" in last_error(ffi, lib)


# ---------------------------------------------------------------------------------------------
# runtime: devices, memory, streams, events


def test_devices(host_raw, monkeypatch):
    ffi, lib = host_raw.ffi, host_raw.lib
    n = ffi.new("int32_t *")
    assert lib.oprt_get_device_count(n) == 0 and n[0] == 1
    props = ffi.new("oprt_device_properties_t *")
    assert lib.oprt_get_device_properties(0, props) == 0
    assert ffi.string(props.name) == b"host-cpu" and props.l2_cache_bytes > 0 and props.warp_size == 1
    assert lib.oprt_get_device_properties(0, ffi.NULL) == 1
    assert lib.oprt_get_device_properties(1, props) == 11 and "out of range (valid: 0..0)" in last_error(ffi, lib)
    assert lib.oprt_get_device_properties(-1, props) == 11
    assert lib.oprt_set_device(-1) == 11
    monkeypatch.setenv("OPRT_HOST_DEVICE_COUNT", "3")
    assert lib.oprt_get_device_count(n) == 0 and n[0] == 3
    assert lib.oprt_set_device(2) == 0 and lib.oprt_set_device(3) == 11
    monkeypatch.setenv("OPRT_HOST_DEVICE_COUNT", "0")
    assert lib.oprt_get_device_count(n) == 0 and n[0] == 0
    assert lib.oprt_get_device_properties(0, props) == 10 and "OPRT_HOST_DEVICE_COUNT=0" in last_error(ffi, lib)
    assert lib.oprt_device_synchronize() == 10
    monkeypatch.delenv("OPRT_HOST_DEVICE_COUNT")
    assert lib.oprt_set_device(0) == 0 and lib.oprt_device_synchronize() == 0


def test_memory(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    p = ffi.new("void **")
    assert lib.oprt_malloc(ffi.NULL, 16) == 1
    assert lib.oprt_malloc(p, 16) == 0 and p[0] != ffi.NULL
    src = np.arange(4, dtype=np.float32)
    dst = np.zeros(4, np.float32)
    assert lib.oprt_memcpy(p[0], ffi.from_buffer(src), 16, 0) == 0
    assert lib.oprt_memset(p[0], 0, 4) == 0
    assert lib.oprt_memcpy(ffi.from_buffer(dst), p[0], 16, 1) == 0
    np.testing.assert_array_equal(dst, [0, 1, 2, 3])
    assert lib.oprt_memcpy(p[0], ffi.NULL, 16, 2) == 1
    assert lib.oprt_memcpy(ffi.NULL, p[0], 16, 2) == 1
    assert lib.oprt_memcpy(ffi.NULL, ffi.NULL, 0, 2) == 0
    assert lib.oprt_memcpy(p[0], p[0], 16, 9) == 4 and "unknown kind 9" in last_error(ffi, lib)
    assert lib.oprt_memset(ffi.NULL, 0, 16) == 1
    assert lib.oprt_free(p[0]) == 0
    assert lib.oprt_free(ffi.NULL) == 0
    assert lib.oprt_malloc(p, (1 << 64) - 1) == 9 and "cannot allocate" in last_error(ffi, lib)


def test_streams_and_events(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    s = ffi.new("oprt_stream_t *")
    assert lib.oprt_stream_create(ffi.NULL) == 1
    assert lib.oprt_stream_create(s) == 0
    assert lib.oprt_stream_synchronize(s[0]) == 0 and lib.oprt_stream_synchronize(ffi.NULL) == 0
    a, b = ffi.new("oprt_event_t *"), ffi.new("oprt_event_t *")
    assert lib.oprt_event_create(ffi.NULL) == 1
    assert lib.oprt_event_create(a) == 0 and lib.oprt_event_create(b) == 0
    ms = ffi.new("float *")
    assert lib.oprt_event_elapsed_ms(ms, a[0], b[0]) == 8 and "never recorded" in last_error(ffi, lib)
    assert lib.oprt_event_record(a[0], s[0]) == 0 and lib.oprt_event_record(b[0], ffi.NULL) == 0
    assert lib.oprt_event_synchronize(b[0]) == 0
    assert lib.oprt_event_elapsed_ms(ms, a[0], b[0]) == 0 and ms[0] >= 0.0
    assert lib.oprt_event_elapsed_ms(ffi.NULL, a[0], b[0]) == 1
    assert lib.oprt_event_elapsed_ms(ms, ffi.NULL, b[0]) == 1 and "'start' is NULL" in last_error(ffi, lib)
    assert lib.oprt_event_record(ffi.NULL, ffi.NULL) == 1
    assert lib.oprt_event_destroy(ffi.NULL) == 1 and lib.oprt_stream_destroy(ffi.NULL) == 1
    assert lib.oprt_event_destroy(a[0]) == 0 and lib.oprt_event_destroy(b[0]) == 0
    assert lib.oprt_stream_destroy(s[0]) == 0


def test_workspace_checks(host_raw):
    ffi, lib = host_raw.ffi, host_raw.lib
    p = ffi.new("oprt_reduce_sum_descriptor_t *")
    assert lib.oprt_create_reduce_sum_descriptor(p, tdesc(ffi, (3,)), tdesc(ffi, (3, 7)), 1, 0) == 0
    desc = ffi.gc(p[0], lib.oprt_destroy_reduce_sum_descriptor)
    size = ffi.new("size_t *")
    assert lib.oprt_get_reduce_sum_workspace_size(desc, size) == 0 and size[0] == 3 * 4
    x = np.arange(21, dtype=np.float32).reshape(3, 7)
    out = np.zeros(3, np.float32)
    args = (ffi.from_buffer(out), ffi.from_buffer(x), ffi.NULL)
    assert lib.oprt_reduce_sum(desc, ffi.new("char[]", 11), 11, *args) == 7
    assert "needs 12 bytes" in last_error(ffi, lib)
    assert lib.oprt_reduce_sum(desc, ffi.NULL, 12, *args) == 1 and "workspace" in last_error(ffi, lib)
    assert lib.oprt_reduce_sum(desc, ffi.new("char[]", 12), 12, *args) == 0
    np.testing.assert_array_equal(out, x.sum(axis=1))


def test_unsupported_ops_knob(host_raw, monkeypatch):
    ffi, lib = host_raw.ffi, host_raw.lib
    monkeypatch.setenv("OPRT_HOST_UNSUPPORTED_OPS", "vector_add, copy")
    assert _create(ffi, lib, "copy", tdesc(ffi, (3,)), tdesc(ffi, (3,))) == 6
    assert "copy is not supported" in last_error(ffi, lib)
    assert _create(ffi, lib, "vector_add", tdesc(ffi, (3,)), tdesc(ffi, (3,)), tdesc(ffi, (3,))) == 6
    assert _create(ffi, lib, "relu", tdesc(ffi, (3,)), tdesc(ffi, (3,)), extra=(0.0,)) == 0
    monkeypatch.setenv("OPRT_HOST_UNSUPPORTED_OPS", "cop")  # prefixes do not match
    assert _create(ffi, lib, "copy", tdesc(ffi, (3,)), tdesc(ffi, (3,))) == 0


@pytest.mark.parametrize("dtype, np_dtype", [(F16, np.float16), (BF16, "bfloat16")])
def test_half_conversions_round_to_nearest_even(host_raw, dtype, np_dtype):
    """copy is bit exact; relu with slope 1 goes through f32 and back: every half value must survive it,
    and vector_add of x and 0 rounds f32 sums exactly like numpy/ml_dtypes do."""
    import ml_dtypes  # noqa: F401 - registers bfloat16 with numpy

    ffi, lib = host_raw.ffi, host_raw.lib
    dt = np.dtype(np_dtype)
    bits = np.arange(1 << 16, dtype=np.uint16)
    x = bits.view(dt)
    out = np.empty_like(x)
    p = ffi.new("oprt_relu_descriptor_t *")
    assert lib.oprt_create_relu_descriptor(p, tdesc(ffi, x.shape, dtype=dtype), tdesc(ffi, x.shape, dtype=dtype),
                                           1.0) == 0
    desc = ffi.gc(p[0], lib.oprt_destroy_relu_descriptor)
    assert lib.oprt_relu(desc, ffi.NULL, 0, ffi.from_buffer(out), ffi.from_buffer(x), ffi.NULL) == 0
    finite = np.isfinite(x.astype(np.float32))
    np.testing.assert_array_equal(out.view(np.uint16)[finite], bits[finite])
    assert np.isnan(out.astype(np.float32)[np.isnan(x.astype(np.float32))]).all()
    # f32 -> half rounding: sums of two halves, compared with numpy's own f32 -> half cast
    rng = np.random.default_rng(1)
    a32 = rng.standard_normal(20000).astype(np.float32) * np.float32(10.0) ** rng.integers(-8, 5, 20000)
    a = a32.astype(dt)
    b = (a32 - a.astype(np.float32)).astype(dt)  # the rounding residue: a + b hits ties and near-ties
    a = np.concatenate([a, x[finite]])
    b = np.concatenate([b, x[finite][::-1]])
    out = np.empty_like(a)
    p = ffi.new("oprt_vector_add_descriptor_t *")
    t = tdesc(ffi, a.shape, dtype=dtype)
    assert lib.oprt_create_vector_add_descriptor(p, t, t, t) == 0
    desc = ffi.gc(p[0], lib.oprt_destroy_vector_add_descriptor)
    assert lib.oprt_vector_add(desc, ffi.NULL, 0, ffi.from_buffer(out), ffi.from_buffer(a), ffi.from_buffer(b),
                               ffi.NULL) == 0
    with np.errstate(over="ignore", invalid="ignore"):
        want = (a.astype(np.float32) + b.astype(np.float32)).astype(dt)
    both_nan = np.isnan(want.astype(np.float32)) & np.isnan(out.astype(np.float32))
    np.testing.assert_array_equal(out.view(np.uint16)[~both_nan], want.view(np.uint16)[~both_nan])


INT64_MIN = -(1 << 63)


@pytest.mark.parametrize("stride", [INT64_MIN, INT64_MIN + 1], ids=["INT64_MIN", "INT64_MIN+1"])
@pytest.mark.parametrize("which", ["x", "out"])
@pytest.mark.parametrize("op", ["copy", "reduce_sum"])
def test_extreme_negative_strides_are_rejected(host_raw, op, which, stride):
    """|INT64_MIN| is not an int64: its stride must be refused, never negated (UB) into a 'valid' one."""
    ffi, lib = host_raw.ffi, host_raw.lib
    x = tdesc(ffi, (4, 5))
    out = tdesc(ffi, (4,) if op == "reduce_sum" else (4, 5))
    (x if which == "x" else out).strides[0] = stride
    extra = (-1, 0) if op == "reduce_sum" else ()
    assert _create(ffi, lib, op, out, x, extra=extra) == 3, last_error(ffi, lib)
    assert str(stride) in last_error(ffi, lib)


@pytest.mark.parametrize("op", ["copy", "reduce_sum"])
def test_int64_min_stride_of_an_empty_tensor_is_rejected(host_raw, op):
    """Backends negate the strides of empty dims too (canonicalize), so INT64_MIN is refused on any dim."""
    ffi, lib = host_raw.ffi, host_raw.lib
    x = tdesc(ffi, (0, 5), (INT64_MIN, 1))
    out = tdesc(ffi, (0,) if op == "reduce_sum" else (0, 5))
    extra = (-1, 0) if op == "reduce_sum" else ()
    assert _create(ffi, lib, op, out, x, extra=extra) == 3, last_error(ffi, lib)


def test_a_device_fault_is_sticky_until_the_process_leaves(host_backend, host_raw, monkeypatch):
    """After OPRT_STATUS_DEVICE_FAULT every device call fails with it too (as after CUDA's illegal address), and
    the op API raises DeviceFaultError, a DeviceError; other statuses never stick."""
    ffi, lib = host_raw.ffi, host_raw.lib
    assert _device_fault(ffi, lib, monkeypatch) == 13
    assert "illegal memory access" in last_error(ffi, lib)
    assert lib.oprt_device_synchronize() == 13
    assert lib.oprt_memset(ffi.from_buffer(np.empty(4, np.uint8)), 0, 4) == 13
    with pytest.raises(E.DeviceFaultError) as info:
        host_backend.synchronize()
    assert isinstance(info.value, E.DeviceError) and info.value.status_name == "OPRT_STATUS_DEVICE_FAULT"
    assert "sticky" in str(info.value)
    monkeypatch.delenv("OPRT_HOST_FAULT_OPS")  # the host library's way out (a GPU context has none)
    assert lib.oprt_device_synchronize() == 0
    assert _device_error(ffi, lib, monkeypatch) == 8 and lib.oprt_device_synchronize() == 0
