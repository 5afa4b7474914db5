"""Bad input anywhere in oprt_core's public API raises an OprtError subclass whose message names the problem
and the valid choices."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from oprt_core import errors, operators, ops
from oprt_core.dtypes import get_dtype
from oprt_core.errors import (
    BackendError,
    BackendUnavailable,
    InvalidArgumentError,
    NoDeviceError,
    OprtError,
    PluginLoadError,
    UnknownNameError,
    UnsupportedCase,
)
from oprt_core.numpy_backend import NumpyBackend
from oprt_core.plugins import Registry, get_plugin_manager
from oprt_core.spec import Param, TensorCase, parse_shape
from oprt_core.validate import check_call

X = np.ones((3, 4), np.float32)
# the built-in ops, as an unknown name's message lists them
CORE_CHOICES = ", ".join(sorted(operators.names()))


@pytest.fixture(scope="module")
def reg() -> Registry:
    """Core ops and the numpy backend only, whatever else is installed."""
    pm = get_plugin_manager(load_entrypoints=False)
    from oprt_core import numpy_plugin

    pm.register_plugin(numpy_plugin, "numpy", "oprt-core")
    return Registry(pm)


def raises(exc: type[OprtError], *fragments: str):
    """pytest.raises for an OprtError subclass whose message holds every fragment (in order)."""
    import re

    return pytest.raises(exc, match=".*".join(re.escape(f) for f in fragments))


# -------------------------------------------------------------------------------------------------
# unknown names


def test_unknown_op(reg):
    with raises(UnknownNameError, "unknown op 'conv2d'; valid choices: " + CORE_CHOICES) as info:
        reg.get_op("conv2d")
    assert info.value.kind == "op" and info.value.name == "conv2d"
    assert info.value.choices == sorted(operators.names())
    with raises(UnknownNameError, "unknown op 'conv2d'; valid choices: " + CORE_CHOICES):
        ops.run("conv2d", [X], registry=reg)
    for bad in (None, ["copy"], 3):
        with raises(UnknownNameError, "unknown op", "valid choices: " + CORE_CHOICES):
            reg.get_op(bad)


def test_unknown_backend(reg):
    with raises(UnknownNameError, "unknown backend 'cuda'; valid choices: numpy"):
        reg.get_backend("cuda")
    with raises(UnknownNameError, "unknown backend 'cuda'; valid choices: numpy"):
        ops.run("copy", [X], backend="cuda", registry=reg)
    with raises(UnknownNameError, "unknown backend ['numpy']"):
        reg.get_backend(["numpy"])


def test_unknown_backend_of_the_project_says_how_to_install_it(reg):
    with raises(UnknownNameError, "unknown backend 'nvidia'; valid choices: numpy; install oprt-nvidia for it: "
                                  "pip install ./oprt_nvidia"):
        ops.run("copy", [X], backend="nvidia", registry=reg)
    with raises(UnknownNameError, "unknown backend 'metax'; valid choices: numpy; install oprt-metax for it: "
                                  "pip install ./oprt_metax"):
        reg.get_backend("metax")
    with pytest.raises(UnknownNameError) as info:
        reg.get_backend("cuda")
    assert "install" not in str(info.value)


def test_unknown_names_through_the_default_registry():
    with raises(UnknownNameError, "unknown op 'conv2d'; valid choices:", "copy"):
        ops.run("conv2d", [X])
    with raises(UnknownNameError, "unknown backend 'cuda'; valid choices:", "numpy"):
        ops.softmax(X, backend="cuda")


def test_unknown_case_set_and_layout():
    with raises(UnknownNameError,
                "unknown case set of softmax 'huge'; valid choices: default, edge, large, models, smoke"):
        operators.spec("softmax").cases("huge")
    with raises(InvalidArgumentError, "unknown layout 'diagonal'; valid: contiguous, transposed"):
        TensorCase((3, 3), "diagonal")


# -------------------------------------------------------------------------------------------------
# params


@pytest.mark.parametrize(("call", "fragments"), [
    (lambda: ops.softmax(X, axis="1"), ("softmax: param 'axis' must be int, got str '1'",)),
    (lambda: ops.softmax(X, axis=1.0), ("param 'axis' must be int, got float",)),
    (lambda: ops.softmax(X, axis=None), ("param 'axis' must be int, got NoneType",)),
    (lambda: ops.softmax(X, axis=True), ("param 'axis' must be int, got bool",)),
    (lambda: ops.reduce_sum(X, axis="0"), ("reduce_sum: param 'axis' must be int or None, got str",)),
    (lambda: ops.reduce_sum(X, keepdims=1), ("reduce_sum: param 'keepdims' must be bool, got int 1",)),
    (lambda: ops.reduce_sum(X, keepdims="yes"), ("param 'keepdims' must be bool, got str",)),
    (lambda: ops.relu(X, negative_slope="x"), ("relu: param 'negative_slope' must be float or int, got str 'x'",)),
    (lambda: ops.relu(X, negative_slope=None), ("param 'negative_slope' must be float or int, got NoneType",)),
    (lambda: ops.relu(X, negative_slope=True), ("param 'negative_slope' must be float or int, got bool",)),
    (lambda: ops.relu(X, negative_slope=float("nan")), ("param 'negative_slope' must be finite, got nan",)),
    (lambda: ops.relu(X, negative_slope=float("inf")), ("must be finite, got inf",)),
])
def test_wrong_param_type(call, fragments):
    with raises(InvalidArgumentError, *fragments):
        call()


def test_int32_params_must_fit_an_int32():
    """Every int param whose C type is int32_t, a plugin's too, is refused out of range on any backend."""
    for spec in operators.specs():
        for p in spec.params:
            if p.ctype != "int32_t" or int not in p.types:
                continue
            for bad in (1 << 31, -(1 << 31) - 1, 1 << 40):
                with raises(InvalidArgumentError, f"{spec.name}: param {p.name!r} does not fit a C int32: got {bad}, "
                                                  "valid -2147483648..2147483647"):
                    spec.validate_params({p.name: bad})
            for fine in ((1 << 31) - 1, -(1 << 31)):
                assert spec.validate_params({p.name: fine})[p.name] == fine
    plugin = dataclasses.replace(operators.spec("copy"), name="copy_n",
                                 params=(Param("n", (int,), 0, "a count", ctype="int32_t"),))
    with raises(InvalidArgumentError, "copy_n: param 'n' does not fit a C int32: got 4294967296"):
        plugin.validate_params({"n": 1 << 32})
    with raises(InvalidArgumentError, "reduce_sum: param 'axis' does not fit a C int32"):
        ops.reduce_sum(X, axis=1 << 40)


def test_numpy_scalar_params_are_accepted():
    np.testing.assert_allclose(ops.softmax(X, axis=np.int64(0)).sum(axis=0), 1.0, rtol=1e-6)
    assert ops.relu(-X, negative_slope=np.float32(0.5))[0, 0] == -0.5


@pytest.mark.parametrize(("op", "params", "fragments"), [
    ("relu", {"slope": 0.1}, ("unknown param of relu 'slope'; valid choices: negative_slope",)),
    ("softmax", {"dim": 0}, ("unknown param of softmax 'dim'; valid choices: axis",)),
    ("reduce_sum", {"keepdim": True}, ("unknown param of reduce_sum 'keepdim'; valid choices: axis, keepdims",)),
    ("copy", {"axis": 0}, ("unknown param of copy 'axis'; valid choices: (none)",)),
])
def test_unknown_param_name(reg, op, params, fragments):
    with raises(UnknownNameError, *fragments):
        ops.run(op, [X], params, registry=reg)
    with raises(UnknownNameError, *fragments):
        operators.spec(op).validate_params(params)


def test_params_must_be_a_mapping(reg):
    with raises(InvalidArgumentError, "relu: params must be a mapping of name to value, got list"):
        ops.run("relu", [X], [("negative_slope", 0.1)], registry=reg)


@pytest.mark.parametrize(("call", "fragments"), [
    (lambda: ops.softmax(X, axis=2), ("softmax: axis 2 is out of range for a 2-d input of shape (3, 4)",
                                      "(valid: -2..1)")),
    (lambda: ops.softmax(X, axis=-3), ("axis -3 is out of range", "(valid: -2..1)")),
    (lambda: ops.reduce_sum(X, axis=5), ("reduce_sum: axis 5 is out of range", "(valid: -2..1, or None for all)")),
    (lambda: ops.reduce_sum(np.ones((2, 3, 4), np.float16), axis=-4), ("axis -4", "valid: -3..2, or None")),
    (lambda: ops.softmax(np.float32(1.0)), ("axis -1 is out of range for a 0-d input", "none (0-d input)")),
    (lambda: ops.reduce_sum(np.float32(1.0), axis=0), ("axis 0 is out of range for a 0-d input",
                                                      "or None for all")),
])
def test_axis_out_of_range(call, fragments):
    with raises(InvalidArgumentError, *fragments):
        call()


# -------------------------------------------------------------------------------------------------
# shapes


def test_an_output_too_large_to_allocate_names_the_op_and_the_bytes():
    """2**58 f32 elements (1 EiB: more than any address space) from zero-stride inputs: numpy's MemoryError becomes
    oprt's, through the op API and a case's outputs alike."""
    a = np.broadcast_to(np.ones(1, np.float32), (1 << 29, 1))
    b = np.broadcast_to(np.ones(1, np.float32), (1, 1 << 29))
    message = ("numpy: vector_add: cannot allocate out of shape (536870912, 536870912) f32: 1152921504606846976 "
               "bytes (1.0 EiB)")
    with raises(errors.DeviceOutOfMemoryError, message) as info:
        ops.vector_add(a, b)
    assert isinstance(info.value, MemoryError) and info.value.__cause__ is None
    with raises(errors.DeviceOutOfMemoryError, message):
        operators.spec("vector_add").new_outputs(NumpyBackend(), [a.shape, b.shape], {}, "f32")


@pytest.mark.parametrize(("op", "inputs", "out", "fragments"), [
    ("copy", [X], np.empty((4, 3), np.float32), ("copy: shape mismatch: out has shape (4, 3), expected (3, 4)",)),
    ("vector_add", [X, X[0]], np.empty((3,), np.float32), ("vector_add: shape mismatch: out has shape (3,)",
                                                            "expected (3, 4)")),
    ("reduce_sum", [X], np.empty((4,), np.float32), ("reduce_sum: shape mismatch: out has shape (4,), expected (3,)",)),
    ("softmax", [X], np.empty((3, 4, 1), np.float32), ("expected (3, 4)",)),
])
def test_out_of_the_wrong_shape(reg, op, inputs, out, fragments):
    with raises(InvalidArgumentError, *fragments):
        ops.run(op, inputs, out=out, registry=reg)


def test_wrong_number_of_inputs(reg):
    with raises(InvalidArgumentError, "vector_add takes 2 input(s) (a, b), got 1"):
        ops.run("vector_add", [X], registry=reg)
    with raises(InvalidArgumentError, "copy takes 1 input(s) (x), got 2"):
        ops.run("copy", [X, X], registry=reg)
    with raises(InvalidArgumentError, "vector_add takes 2 input(s) (a, b), got 3"):
        check_call(operators.spec("vector_add"), [(3,)] * 3, ["f32"] * 3, (3,), "f32", {})


@pytest.mark.parametrize("text", ["", "4096x", "axb", "-1", "3x-4", "4096*4096", "1.5", "4096 x 4096"])
def test_malformed_shape_strings(text):
    with raises(InvalidArgumentError, "malformed shape", "expected extents joined by 'x', e.g. 4096x4096"):
        parse_shape(text)


@pytest.mark.parametrize("value", [None, 42, (3, 4), b"3x4"])
def test_malformed_shape_types(value):
    with raises(InvalidArgumentError, "malformed shape", "e.g. 4096x4096"):
        parse_shape(value)


@pytest.mark.parametrize(("shape", "fragment"), [
    ((-1, 3), "extents must be non-negative ints"),
    (("a", 3), "extents must be non-negative ints"),
    ((2.5,), "extents must be non-negative ints"),
    ((True,), "extents must be non-negative ints"),
    (5, "expected a sequence of non-negative ints"),
    ((1,) * 9, "has 9 dims; at most 8 are supported"),
])
def test_malformed_case_shapes(shape, fragment):
    with raises(InvalidArgumentError, fragment):
        operators.spec("softmax").custom_case(shape)
    with raises(InvalidArgumentError, fragment):
        TensorCase(shape)


def test_too_many_dims_string():
    with raises(InvalidArgumentError, "has 9 dims; at most 8 are supported"):
        parse_shape("1x1x1x1x1x1x1x1x1")


# -------------------------------------------------------------------------------------------------
# dtypes


@pytest.mark.parametrize("name", ["f64", "float64", "double", "int8", "", "F 32"])
def test_unknown_dtype_name(name):
    with raises(UnknownNameError, f"unknown dtype {name!r}; valid choices: bf16, e4m3, f16, f32"):
        get_dtype(name)


@pytest.mark.parametrize("value", [np.float64, np.int32, np.dtype("complex64"), object, 3, None])
def test_unknown_dtype_objects(value):
    with raises(UnknownNameError, "unknown dtype", "valid choices: bf16, e4m3, f16, f32"):
        get_dtype(value)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_, np.complex64])
def test_unsupported_arrays_into_the_ops_api(dtype):
    x = X.astype(dtype)
    got = np.dtype(dtype).name
    with raises(InvalidArgumentError, f"copy: x must be an array of f32, f16 or bf16, got {got}"):
        ops.copy(x)
    with raises(InvalidArgumentError, f"softmax: x must be an array of f32, f16 or bf16, got {got}"):
        ops.softmax(x)
    assert ops.copy([[1.0, 2.0]]).dtype == np.float32  # a list of Python floats is converted to f32


def test_mixed_dtypes(reg):
    with raises(InvalidArgumentError, "vector_add: dtype mismatch: out is f32 but b is f16",
                "mixed dtypes are not supported"):
        ops.vector_add(X, X.astype(np.float16))
    with raises(InvalidArgumentError, "copy: dtype mismatch: out is f16 but x is f32"):
        ops.run("copy", [X], out=np.empty((3, 4), np.float16), registry=reg)


def test_bad_dtype_in_spec_methods():
    spec = operators.spec("copy")
    case = spec.cases("smoke")[0]
    for call in (lambda: spec.make_inputs(case, "f64", np.random.default_rng()),
                 lambda: spec.bytes_moved(case, "int8"),
                 lambda: spec.check(X, [X], "f8"),
                 lambda: NumpyBackend().empty((3,), "f64")):
        with raises(UnknownNameError, "unknown dtype", "valid choices: bf16, e4m3, f16, f32"):
            call()


def test_a_dtype_an_op_does_not_define_is_unsupported():
    from dataclasses import replace

    spec = replace(operators.spec("copy"), dtypes=("f32",))
    with raises(UnsupportedCase, "copy does not define dtype f16; it supports f32"):
        check_call(spec, [(3,)], ["f16"], (3,), "f16", {})


# -------------------------------------------------------------------------------------------------
# the hierarchy


def test_hierarchy():
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, OprtError), name
    assert issubclass(InvalidArgumentError, ValueError)  # callers catching ValueError still work
    assert issubclass(UnknownNameError, InvalidArgumentError)
    for cls in (PluginLoadError, BackendUnavailable, UnsupportedCase, BackendError):
        assert issubclass(cls, OprtError)


def test_error_messages():
    cause = ImportError("no module named foo")
    e = PluginLoadError("foo", "oprt-foo", cause)
    assert str(e) == "plugin 'foo' from oprt-foo failed to load: ImportError: no module named foo"
    assert (e.name, e.distribution, e.cause) == ("foo", "oprt-foo", cause)
    assert str(PluginLoadError("foo", None, cause)).startswith("plugin 'foo' failed to load")
    e = BackendUnavailable("nvidia", "no CUDA device")
    assert str(e) == "backend 'nvidia' is unavailable: no CUDA device" and e.backend == "nvidia"
    e = BackendError("nvidia", 7, "an illegal memory access", "OPRT_STATUS_DEVICE_ERROR")
    assert str(e) == "nvidia [OPRT_STATUS_DEVICE_ERROR]: an illegal memory access"
    assert (e.backend, e.status, e.message) == ("nvidia", 7, "an illegal memory access")
    assert str(BackendError("torch", None, "boom")) == "torch: boom"
    e = NoDeviceError("nvidia", 9, "no CUDA-capable device is detected", "OPRT_STATUS_NO_DEVICE")
    assert isinstance(e, BackendUnavailable) and e.reason == "no CUDA-capable device is detected"
    assert "no CUDA-capable device" in str(e)
    e = UnknownNameError("op", "x", [])
    assert str(e) == "unknown op 'x'; valid choices: (none)"


class _Unavailable(NumpyBackend):
    name = "gone"

    def availability(self):
        from oprt_core.backend import Availability

        return Availability(False, "no device here")


def test_unavailable_backend_in_the_ops_api():
    from oprt_core import hookimpl

    class Plugin:
        @hookimpl
        def oprt_register_backends(self, register):
            register(_Unavailable())

    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(Plugin(), "gone")
    with raises(BackendUnavailable, "backend 'gone' is unavailable: no device here"):
        ops.run("copy", [X], backend="gone", registry=Registry(pm))
