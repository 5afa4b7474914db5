"""Bad input through C and Python returns the matching status and raises the matching exception.

Argument validation happens before any CUDA call, so most of these run on any machine; the Python
op-level checks and the device-index check need the GPU.
"""

from __future__ import annotations

import numpy as np
import pytest
from gpu_helpers import check_device_index_out_of_range

import oprt_core.errors as E
from oprt_core import operators
from oprt_core.compiled import OPRT_AXIS_ALL, raise_for_status

ST = {
    "NULL_POINTER": 1, "BAD_SHAPE": 2, "BAD_STRIDES": 3, "BAD_PARAM": 4, "UNSUPPORTED_DTYPE": 5,
    "INSUFFICIENT_WORKSPACE": 7, "NO_DEVICE": 10, "BAD_DEVICE": 11,
}
EXC = {
    "NULL_POINTER": E.NullPointerError, "BAD_SHAPE": E.ShapeError, "BAD_STRIDES": E.StrideError,
    "BAD_PARAM": E.ParamError, "UNSUPPORTED_DTYPE": E.UnsupportedDtypeError,
    "INSUFFICIENT_WORKSPACE": E.WorkspaceError, "NO_DEVICE": E.NoDeviceError, "BAD_DEVICE": E.BadDeviceError,
}
FAKE = 0x10000  # a non-NULL address never dereferenced: validation fails first


def expect(ext, status: int, name: str, *words: str) -> None:
    ffi, lib = ext.ffi, ext.lib
    msg = ffi.string(lib.oprt_last_error_message()).decode()
    assert status == ST[name], f"expected {name}, got {status}: {msg}"
    assert status == getattr(lib, f"OPRT_STATUS_{name}")
    for w in words:
        assert w in msg, msg
    with pytest.raises(EXC[name]) as info:
        raise_for_status(ffi, lib, status, "nvidia")
    assert info.value.message == msg


def create(ext, op, *args):
    p = ext.ffi.new(f"oprt_{op}_descriptor_t *")
    return getattr(ext.lib, f"oprt_create_{op}_descriptor")(p, *args), p


# ---- descriptors -------------------------------------------------------------------------------

def test_null_descriptor_pointers(nvidia_ext, tdesc):
    ffi, lib = nvidia_ext.ffi, nvidia_ext.lib
    expect(nvidia_ext, lib.oprt_create_copy_descriptor(ffi.NULL, tdesc((3,)), tdesc((3,))), "NULL_POINTER")
    st, _ = create(nvidia_ext, "copy", ffi.NULL, tdesc((3,)))
    expect(nvidia_ext, st, "NULL_POINTER", "out")
    for op in operators.names("core"):
        expect(nvidia_ext, getattr(lib, f"oprt_destroy_{op}_descriptor")(ffi.NULL), "NULL_POINTER")
        expect(nvidia_ext, getattr(lib, f"oprt_get_{op}_workspace_size")(ffi.NULL, ffi.new("size_t *")),
               "NULL_POINTER")


def test_mismatched_shapes(nvidia_ext, tdesc):
    st, _ = create(nvidia_ext, "copy", tdesc((3, 4)), tdesc((4, 3)))
    expect(nvidia_ext, st, "BAD_SHAPE", "(4, 3)")
    st, _ = create(nvidia_ext, "vector_add", tdesc((3, 4)), tdesc((3, 4)), tdesc((3,)))
    expect(nvidia_ext, st, "BAD_SHAPE")
    st, _ = create(nvidia_ext, "reduce_sum", tdesc((3, 4)), tdesc((3, 4)), 1, 0)
    expect(nvidia_ext, st, "BAD_SHAPE", "expected (3,)")
    st, _ = create(nvidia_ext, "softmax", tdesc((3,)), tdesc((3, 4)), -1)
    expect(nvidia_ext, st, "BAD_SHAPE")


def test_overlapping_output_strides(nvidia_ext, tdesc):
    st, _ = create(nvidia_ext, "relu", tdesc((4, 4), strides=(1, 1)), tdesc((4, 4)), 0.0)
    expect(nvidia_ext, st, "BAD_STRIDES")


@pytest.mark.parametrize("code", [3, 7, -1, 1 << 20])
def test_unsupported_dtype_code(nvidia_ext, tdesc, code):
    st, _ = create(nvidia_ext, "copy", tdesc((3,), code), tdesc((3,), code))
    expect(nvidia_ext, st, "UNSUPPORTED_DTYPE", str(code))
    st, _ = create(nvidia_ext, "softmax", tdesc((3,), 0), tdesc((3,), 1), -1)
    expect(nvidia_ext, st, "UNSUPPORTED_DTYPE", "mismatch")


@pytest.mark.parametrize("op, axis", [("reduce_sum", 2), ("reduce_sum", -3), ("softmax", 2), ("softmax", -3)])
def test_axis_out_of_range(nvidia_ext, tdesc, op, axis):
    extra = (0,) if op == "reduce_sum" else ()
    st, _ = create(nvidia_ext, op, tdesc((3, 4)), tdesc((3, 4)), axis, *extra)
    expect(nvidia_ext, st, "BAD_PARAM", f"axis {axis}")


def test_bad_relu_slope(nvidia_ext, tdesc):
    st, _ = create(nvidia_ext, "relu", tdesc((3,)), tdesc((3,)), float("nan"))
    expect(nvidia_ext, st, "BAD_PARAM")


# ---- launches: validation before any CUDA call --------------------------------------------------

def test_null_data_pointers(nvidia_ext, tdesc):
    ffi, lib = nvidia_ext.ffi, nvidia_ext.lib
    fake = ffi.cast("void *", FAKE)
    for op, args, run_args in (
        ("copy", (tdesc((5,)), tdesc((5,))), 1),
        ("relu", (tdesc((5,)), tdesc((5,)), 0.0), 1),
        ("vector_add", (tdesc((5,)), tdesc((5,)), tdesc((5,))), 2),
        ("reduce_sum", (tdesc((1,)), tdesc((1, 5)), -1, 0), 1),
        ("softmax", (tdesc((5,)), tdesc((5,)), 0), 1),
    ):
        st, p = create(nvidia_ext, op, *args)
        assert st == 0
        fn = getattr(lib, f"oprt_{op}")
        expect(nvidia_ext, fn(p[0], ffi.NULL, 0, ffi.NULL, *([fake] * run_args), ffi.NULL), "NULL_POINTER", "out")
        for k in range(run_args):
            ins = [fake] * run_args
            ins[k] = ffi.NULL
            expect(nvidia_ext, fn(p[0], ffi.NULL, 0, fake, *ins, ffi.NULL), "NULL_POINTER")
        expect(nvidia_ext, fn(ffi.NULL, ffi.NULL, 0, fake, *([fake] * run_args), ffi.NULL), "NULL_POINTER")
        getattr(lib, f"oprt_destroy_{op}_descriptor")(p[0])


def test_empty_tensors_accept_null_pointers(nvidia_ext, tdesc):
    ffi, lib = nvidia_ext.ffi, nvidia_ext.lib
    st, p = create(nvidia_ext, "copy", tdesc((0, 5)), tdesc((0, 5)))
    assert st == 0
    assert lib.oprt_copy(p[0], ffi.NULL, 0, ffi.NULL, ffi.NULL, ffi.NULL) == 0
    lib.oprt_destroy_copy_descriptor(p[0])


def test_workspace_too_small(nvidia_ext, tdesc):
    ffi, lib = nvidia_ext.ffi, nvidia_ext.lib
    st, p = create(nvidia_ext, "reduce_sum", tdesc(()), tdesc((1 << 24,)), OPRT_AXIS_ALL, 0)
    assert st == 0
    size = ffi.new("size_t *")
    assert lib.oprt_get_reduce_sum_workspace_size(p[0], size) == 0
    need = int(size[0])
    assert need > 0
    fake = ffi.cast("void *", FAKE)
    expect(nvidia_ext, lib.oprt_reduce_sum(p[0], fake, need - 1, fake, fake, ffi.NULL), "INSUFFICIENT_WORKSPACE",
           str(need))
    expect(nvidia_ext, lib.oprt_reduce_sum(p[0], ffi.NULL, 0, fake, fake, ffi.NULL), "INSUFFICIENT_WORKSPACE")
    expect(nvidia_ext, lib.oprt_reduce_sum(p[0], ffi.NULL, need, fake, fake, ffi.NULL), "NULL_POINTER")
    lib.oprt_destroy_reduce_sum_descriptor(p[0])


def test_softmax_workspace_too_small(nvidia_ext, tdesc):
    """f32 softmax over a long leading axis exchanges each strip's (max, sum) through a workspace."""
    ffi, lib = nvidia_ext.ffi, nvidia_ext.lib
    st, p = create(nvidia_ext, "softmax", tdesc((9000, 200)), tdesc((9000, 200)), 0)
    assert st == 0
    size = ffi.new("size_t *")
    assert lib.oprt_get_softmax_workspace_size(p[0], size) == 0
    need = int(size[0])
    assert need > 0
    fake = ffi.cast("void *", FAKE)
    expect(nvidia_ext, lib.oprt_softmax(p[0], fake, need - 1, fake, fake, ffi.NULL), "INSUFFICIENT_WORKSPACE",
           "softmax", str(need))
    expect(nvidia_ext, lib.oprt_softmax(p[0], ffi.NULL, need, fake, fake, ffi.NULL), "NULL_POINTER", "workspace")
    lib.oprt_destroy_softmax_descriptor(p[0])


def test_runtime_null_arguments(nvidia_ext):
    ffi, lib = nvidia_ext.ffi, nvidia_ext.lib
    expect(nvidia_ext, lib.oprt_get_library_info(ffi.NULL), "NULL_POINTER")
    expect(nvidia_ext, lib.oprt_get_device_count(ffi.NULL), "NULL_POINTER")
    expect(nvidia_ext, lib.oprt_malloc(ffi.NULL, 16), "NULL_POINTER")
    expect(nvidia_ext, lib.oprt_memcpy(ffi.NULL, ffi.cast("void *", FAKE), 16, 0), "NULL_POINTER")
    expect(nvidia_ext, lib.oprt_memset(ffi.NULL, 0, 16), "NULL_POINTER")
    expect(nvidia_ext, lib.oprt_event_elapsed_ms(ffi.NULL, ffi.NULL, ffi.NULL), "NULL_POINTER")
    expect(nvidia_ext, lib.oprt_stream_destroy(ffi.NULL), "NULL_POINTER")
    expect(nvidia_ext, lib.oprt_event_create(ffi.NULL), "NULL_POINTER")
    expect(nvidia_ext, lib.oprt_memcpy(ffi.cast("void *", FAKE), ffi.cast("void *", FAKE), 16, 9), "BAD_PARAM")
    assert lib.oprt_free(ffi.NULL) == 0


def test_device_index_out_of_range(nvidia_ext):
    """BAD_DEVICE with a GPU; NO_DEVICE without one. Never a crash."""
    ffi, lib = nvidia_ext.ffi, nvidia_ext.lib
    count = ffi.new("int32_t *")
    have = lib.oprt_get_device_count(count) == 0
    props = ffi.new("oprt_device_properties_t *")
    for dev in (-1, 9999):
        if have:
            expect(nvidia_ext, lib.oprt_set_device(dev), "BAD_DEVICE", str(dev))
            expect(nvidia_ext, lib.oprt_get_device_properties(dev, props), "BAD_DEVICE")
        else:
            expect(nvidia_ext, lib.oprt_set_device(dev), "NO_DEVICE")
            expect(nvidia_ext, lib.oprt_get_device_properties(dev, props), "NO_DEVICE")


# ---- through Python (GPU) ----------------------------------------------------------------------------

def test_python_shape_mismatch(nvidia_backend):
    a = nvidia_backend.to_device(np.ones((3, 4), np.float32))
    out = nvidia_backend.empty((4, 3), "f32")
    with pytest.raises(E.ShapeError):
        nvidia_backend.prepare("copy", [a], out, {})
    with pytest.raises(E.ShapeError):
        nvidia_backend.prepare("vector_add", [a, nvidia_backend.to_device(np.ones((5,), np.float32))],
                               nvidia_backend.empty((3, 4), "f32"), {})


def test_python_dtype_mismatch(nvidia_backend):
    a = nvidia_backend.to_device(np.ones((3, 4), np.float32))
    with pytest.raises(E.UnsupportedDtypeError):
        nvidia_backend.prepare("relu", [a], nvidia_backend.empty((3, 4), "f16"), {})


def test_python_axis_out_of_range(nvidia_backend):
    a = nvidia_backend.to_device(np.ones((3, 4), np.float32))
    with pytest.raises(E.InvalidArgumentError):
        nvidia_backend.prepare("softmax", [a], nvidia_backend.empty((3, 4), "f32"), {"axis": 2})
    with pytest.raises(E.InvalidArgumentError):
        nvidia_backend.prepare("reduce_sum", [a], nvidia_backend.empty((3,), "f32"), {"axis": -3})


def test_python_workspace_too_small(nvidia_backend):
    x = nvidia_backend.to_device(np.ones(1 << 24, np.float16))
    out = nvidia_backend.empty((), "f16")
    launcher = nvidia_backend.prepare("reduce_sum", [x], out, {"axis": None})
    assert launcher.workspace_size > 0
    launcher.workspace_size -= 1
    launcher._args = launcher._make_args(launcher.inputs, launcher.output)
    with pytest.raises(E.WorkspaceError):
        launcher()


def test_python_device_index_out_of_range(nvidia_backend):
    from oprt_nvidia.plugin import make_backend

    check_device_index_out_of_range(nvidia_backend, make_backend)
