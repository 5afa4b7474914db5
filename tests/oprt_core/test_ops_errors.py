"""The op API's own words: errors that name the op, the argument and what is accepted; the list-input rule;
docstrings on every op function; no stray numpy warnings."""

from __future__ import annotations

import re
import warnings

import ml_dtypes
import numpy as np
import pytest

from oprt_core import hookimpl, operators, ops
from oprt_core.device_array import DeviceArray
from oprt_core.errors import InvalidArgumentError, StrideError
from oprt_core.plugins import Registry, get_plugin_manager

ACCEPTED = "f32, f16 or bf16"
FLOATS = (np.float32, np.float16, ml_dtypes.bfloat16)


@pytest.fixture(autouse=True)
def fresh_cache():
    ops.clear_cache()
    yield
    ops.clear_cache()


def exact(message: str):
    """pytest.raises(InvalidArgumentError) whose message is exactly ``message``."""
    return pytest.raises(InvalidArgumentError, match=f"^{re.escape(message)}$")


# -------------------------------------------------------------------------------------------------
# inputs that are not arrays of the op's dtypes


@pytest.mark.parametrize(("value", "got"), [(None, "None"), ("abc", "str"), ({}, "dict"), (object(), "object")])
def test_not_an_array(value, got):
    with exact(f"softmax: x must be an array of {ACCEPTED}, got {got}"):
        ops.softmax(value)
    with exact(f"relu: x must be an array of {ACCEPTED}, got {got}"):
        ops.relu(value)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64, np.bool_, np.complex64, np.uint8])
def test_dtypes_the_ops_do_not_define(dtype):
    x = np.ones((2, 3), dtype)
    got = np.dtype(dtype).name
    f32 = np.ones((2, 3), np.float32)
    for spec in operators.specs("core"):  # each input in turn, the others f32
        for k, name in enumerate(spec.input_names):
            args = [x if i == k else f32 for i in range(spec.n_inputs)]
            with exact(f"{spec.name}: {name} must be an array of {ACCEPTED}, got {got}"):
                getattr(ops, spec.name)(*args)
    with exact(f"softmax: x must be an array of {ACCEPTED}, got {got}"):
        ops.run("softmax", [x])


def test_int32_example_of_the_docs():
    with exact("softmax: x must be an array of f32, f16 or bf16, got int32"):
        ops.softmax(np.arange(6, dtype=np.int32).reshape(2, 3))


def test_out_of_a_wrong_kind():
    x = np.ones((2, 3), np.float32)
    with exact(f"softmax: out must be a writable array of {ACCEPTED}, got float64"):
        ops.softmax(x, out=np.empty((2, 3)))
    with exact(f"relu: out must be a writable array of {ACCEPTED}, got list"):
        ops.relu(x, out=[[0.0] * 3] * 2)
    with exact(f"copy: out must be a writable array of {ACCEPTED}, got int32"):
        ops.copy(x, out=np.empty((2, 3), np.int32))


def test_torch_like_dtype_names_are_read_without_their_prefix():
    class TorchLike:  # a tensor stand-in: dtype prints as torch.int32
        class dtype:  # noqa: N801 - mimics torch.int32's str()
            def __str__(self) -> str:
                return "torch.int32"

        dtype = dtype()
        __cuda_array_interface__ = {}

    with exact(f"softmax: x must be an array of {ACCEPTED}, got int32"):
        ops.softmax(TorchLike())


def test_the_check_comes_before_the_backend():
    """A wrong input is named even when the backend cannot run here."""

    class Unavailable:
        name = "nowhere"

        def availability(self):
            from oprt_core.backend import Availability

            return Availability(False, "no such device")

    class Plugin:
        @hookimpl
        def oprt_register_backends(self, register) -> None:
            register(Unavailable())

    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(Plugin(), "nowhere", "tests")
    with exact(f"softmax: x must be an array of {ACCEPTED}, got None"):
        ops.run("softmax", [None], backend="nowhere", registry=Registry(pm))


# -------------------------------------------------------------------------------------------------
# Python lists and scalars: converted as numpy.asarray does, Python floats to f32


def test_a_list_of_floats_is_f32():
    out = ops.relu([-1.0, 2.0, 0.5])
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.array([0.0, 2.0, 0.5], np.float32))
    out = ops.vector_add([[1.0, 2.0]], (3.0,))
    assert out.dtype == np.float32 and out.tolist() == [[4.0, 5.0]]
    sm = ops.softmax([1, 2.5])  # ints and floats together: numpy's float64, so f32
    assert sm.dtype == np.float32 and abs(float(sm.sum()) - 1.0) < 1e-6
    assert ops.reduce_sum([1.5, 2.5]).dtype == np.float32
    assert ops.copy(2.0).dtype == np.float32 and ops.copy(2.0).shape == ()


def test_a_list_of_numpy_half_scalars_keeps_their_dtype():
    assert ops.copy([np.float16(1), np.float16(2)]).dtype == np.float16


@pytest.mark.parametrize(("value", "got"), [([1, 2, 3], "list of int64"), ((True, False), "tuple of bool"),
                                            (3, "int of int64"), ([1j], "list of complex128")])
def test_lists_of_other_numbers_are_refused(value, got):
    with exact(f"relu: x must be an array of {ACCEPTED}, got {got}"):
        ops.relu(value)


def test_a_ragged_list_is_refused():
    with pytest.raises(InvalidArgumentError, match=r"^softmax: x must be an array of f32, f16 or bf16, got a list "
                                                   r"numpy cannot make an array of \(.+\)$"):
        ops.softmax([[1.0], [2.0, 3.0]])


# -------------------------------------------------------------------------------------------------
# docstrings


@pytest.mark.parametrize("name", ["run", *operators.names("core")])
def test_every_op_function_has_a_docstring(name):
    doc = getattr(ops, name).__doc__
    assert doc, f"ops.{name} has no docstring"
    for word in ("backend", "out", "numpy.asarray", "f32"):
        assert word in doc, (name, word)
    if name != "run":
        assert "Raises" in doc and "InvalidArgumentError" in doc and "must be an array of f32, f16 or bf16" in doc


_OP_FUNCTIONS = [spec.name for spec in operators.specs()]


@pytest.mark.parametrize("name", _OP_FUNCTIONS)
def test_the_documented_dtype_error_is_the_one_raised(name):
    """Each op function's docstring quotes the error an int32 first input gets (the op, that input's name and the
    dtypes it accepts: rope's positions and cross_entropy's target are index inputs, matmul's a takes e4m3 too); the
    call raises exactly that."""
    doc = getattr(ops, name).__doc__
    quoted = re.search(r"``(\w+: \w+ must be an array of [^`]+, got int32)``", doc)
    assert quoted, f"ops.{name}'s docstring quotes no dtype error"
    spec = next(s for s in operators.specs() if s.name == name)
    bad = np.arange(6, dtype=np.int32).reshape(2, 3)
    args = [bad] + [np.ones((2, 3), np.float32)] * (spec.min_inputs - 1)
    with exact(quoted.group(1)):
        getattr(ops, name)(*args)
    assert "``out`` must not share memory with ``x``" not in doc


# -------------------------------------------------------------------------------------------------
# no stray warnings; IEEE results


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.mark.usefixtures("no_warnings")
def test_overflow_is_quiet_and_inf():
    big16 = np.array([6e4, -6e4], np.float16)
    assert np.isinf(ops.vector_add(big16, big16).astype(np.float64)).all()
    assert ops.relu(big16, negative_slope=2.0).astype(np.float64)[1] == -np.inf
    assert np.isinf(ops.reduce_sum(np.full(4, 3e38, np.float32)))
    assert np.isinf(ops.reduce_sum(np.full(4, 6e4, np.float16)).astype(np.float64))
    nan = np.array([np.nan, 1.0], np.float32)
    assert np.isnan(ops.softmax(nan)).all() and np.isnan(ops.relu(nan)[0])


def test_numpy_error_state_of_the_caller_is_left_alone():
    with np.errstate(over="raise"):
        ops.vector_add(np.array([6e4], np.float16), np.array([6e4], np.float16))
        assert np.geterr()["over"] == "raise"


# -------------------------------------------------------------------------------------------------
# the checks every op shares (shapes, out's layout) name the op and the argument


def test_shared_checks_name_the_op_and_the_argument():
    a, b = np.ones((3, 5), np.float32), np.ones((3, 4), np.float32)
    with exact("vector_add: b has shape (3, 4), a has (3, 5): shape mismatch, they do not broadcast together"):
        ops.vector_add(a, b)
    readonly = np.broadcast_to(np.zeros(5, np.float32), (3, 5))
    with exact("vector_add: out is read-only (e.g. a broadcast view); pass a writeable array"):
        ops.vector_add(a, a, out=readonly)
    with exact("relu: out is read-only (e.g. a broadcast view); pass a writeable array"):
        ops.run("relu", [a], out=readonly)
    overlapping = np.lib.stride_tricks.as_strided(np.zeros(5, np.float32), (3, 5), (0, 4))
    with pytest.raises(InvalidArgumentError, match=r"^relu: out has overlapping strides \(0, 4\) for shape \(3, 5\)"):
        ops.relu(a, out=overlapping)
    x = np.ones((2, 5), np.float32)
    h = np.broadcast_to(np.zeros(5, np.float32), (2, 5))
    with exact("add_rms_norm: h is read-only (e.g. a broadcast view); pass a writeable array"):
        ops.add_rms_norm(x, x, np.ones(5, np.float32), out=(np.empty_like(x), h))


def test_shared_checks_name_the_op_on_a_compiled_backend(host_backend):
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(_Backends(host_backend), "host-lib", "tests")
    reg = Registry(pm)
    x = host_backend.to_device(np.ones((4, 4), np.float32))
    base = host_backend.empty((7,), "f32")
    readonly = DeviceArray(host_backend, base.ptr, (7,), (1,), "f32", base.owner, readonly=True)
    with exact("relu: out is read-only; pass a writeable array"):
        ops.run("relu", [host_backend.to_device(np.ones(7, np.float32))], backend="host", out=readonly, registry=reg)
    overlapping = DeviceArray(host_backend, base.ptr, (4, 4), (1, 1), "f32", base.owner)
    with pytest.raises(StrideError, match=r"^relu: host \[OPRT_STATUS_BAD_STRIDES\]: output 'out' has overlapping"):
        ops.run("relu", [x], backend="host", out=overlapping, registry=reg)


class _Backends:
    def __init__(self, *backends):
        self.backends = backends

    @hookimpl
    def oprt_register_backends(self, register) -> None:
        for backend in self.backends:
            register(backend)


# -------------------------------------------------------------------------------------------------
# the fast path does not pay for the checks


def test_fast_path_skips_the_input_check(host_backend, monkeypatch):
    class Plugin:
        @hookimpl
        def oprt_register_backends(self, register) -> None:
            register(host_backend)

    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(Plugin(), "host-lib", "tests")
    reg = Registry(pm)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    checked = []
    real = ops._check_array
    monkeypatch.setattr(ops, "_check_array", lambda *a, **k: (checked.append(a[1]), real(*a, **k))[1])
    x = host_backend.to_device(np.array([[-1.0, 2.0]], np.float32))
    out = host_backend.empty((1, 2), "f32")
    ops.relu(x, backend="host", out=out)  # the full path checks x and out
    assert checked == ["x", "out"]
    ops.relu(x, backend="host", out=out)  # the fast path: no check
    assert checked == ["x", "out"]
    np.testing.assert_array_equal(host_backend.to_host(out), [[0.0, 2.0]])
    with exact(f"relu: x must be an array of {ACCEPTED}, got int32"):
        ops.relu(np.ones((1, 2), np.int32), backend="host", out=out)
