"""Fuzzing the Python op API (``oprt_core.ops.run``): random arrays (ndim 0..9, views with negative, zero
and stepped strides, wrong dtypes), params (out-of-range and wrongly typed axes, NaN slopes, unknown
names) and ``out`` arrays (wrong shape or dtype, overlapping broadcast views).

Every call either returns an output that matches the float64 reference (``OpSpec.check``) or raises an
``OprtError`` subclass; any other exception, or a crash, fails. ``test_fuzz_overlapping_out`` draws ``out`` and
the inputs as views of one buffer (at random offsets and strides, or ``out`` exactly on an input): a call whose
``out`` shares bytes with an input is refused with ``OverlapError`` and writes nothing, unless ``out`` is exactly
an input the op runs in place on, and then its result matches the reference; on compiled backends the call
takes the op API's fast path (the same layouts filed by a call on separate buffers first).

Backends: numpy always, the host C library through ``CompiledBackend`` (the compiled path without a GPU), and
the installed GPU backends ``nvidia`` and ``metax`` where available. Examples per test: ``OPRT_FUZZ_EXAMPLES``
(default 200).
"""

from __future__ import annotations

import math
import os
from typing import Any
from unittest import mock

import numpy as np
import pytest
from op_helpers import host_ops

hypothesis = pytest.importorskip("hypothesis")
from gpu_helpers import rows_disjoint  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from oprt_core import (  # noqa: E402
    OprtError,
    get_registry,
    hookimpl,
    operators,  # noqa: E402
)
from oprt_core import ops as op_api  # noqa: E402
from oprt_core.compiled import DeviceArray  # noqa: E402
from oprt_core.dtypes import get_dtype  # noqa: E402
from oprt_core.errors import OverlapError  # noqa: E402
from oprt_core.plugins import Registry, get_plugin_manager  # noqa: E402

EXAMPLES = int(os.environ.get("OPRT_FUZZ_EXAMPLES", "200"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

# found by this fuzzer, outside what its author may change (oprt_core/numpy_backend.py, ops.py): tolerated
# narrowly here and reported; remove an entry once fixed and the fuzzer then guards the fix


class _One:
    def __init__(self, backend):
        self.backend = backend

    @hookimpl
    def oprt_register_backends(self, register) -> None:
        register(self.backend)


@pytest.fixture(scope="module", params=["numpy", "host", "nvidia", "metax"])
def op_backend(request):
    """(backend name, registry holding it)."""
    name = request.param
    if name == "host":
        pm = get_plugin_manager(load_entrypoints=False)
        pm.register_plugin(_One(request.getfixturevalue("host_backend")), "host-lib", "tests")
        return name, Registry(pm)
    registry = get_registry()
    backend = registry.backends.get(name)
    if backend is None:
        pytest.skip(f"backend {name!r} is not installed")
    avail = backend.availability()
    if not avail.ok:
        pytest.skip(f"backend {name!r} unavailable: {avail.reason}")
    return name, registry


DTYPES = ["f32", "f16", "bf16"]
BAD_DTYPES = [np.float64, np.int32, np.bool_, np.complex64]


@st.composite
def array(draw, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """A random array, possibly a view: reversed, stepped, broadcast (zero stride) or transposed."""
    if shape is None:
        nd = draw(st.integers(0, 9) if draw(st.integers(0, 9)) == 0 else st.integers(0, 4))
        shape = tuple(draw(st.integers(0, 5)) for _ in range(nd))
    dt = draw(st.sampled_from(DTYPES))
    np_dtype = get_dtype(dt).numpy if draw(st.integers(0, 19)) else draw(st.sampled_from(BAD_DTYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["contiguous", "contiguous", "reversed", "step", "broadcast", "transposed"]))
    if kind == "step" and shape:
        base = rng.uniform(-2, 2, shape[:-1] + (2 * shape[-1],)).astype(np_dtype)
        return base[..., ::2]
    if kind == "broadcast" and shape:
        base = rng.uniform(-2, 2, (1,) + shape[1:]).astype(np_dtype)
        return np.broadcast_to(base, shape)
    if kind == "transposed" and len(shape) >= 2:
        base = rng.uniform(-2, 2, shape[:-2] + (shape[-1], shape[-2])).astype(np_dtype)
        return np.swapaxes(base, -1, -2)
    a = rng.uniform(-2, 2, shape).astype(np_dtype)
    if kind == "reversed" and shape:
        return a[..., ::-1]
    return a


WEIRD = [None, True, 1.5, "x", -1, 0, 2, 8, -9, 2**31, -(2**40), math.nan, math.inf]


@st.composite
def call(draw) -> dict[str, Any]:
    op = draw(st.sampled_from([op for op in operators.names("core") if op in host_ops()]))
    x = draw(array())
    inputs = [x]
    params: dict[str, Any] = {}
    if op == "vector_add":
        if draw(st.booleans()) and x.ndim:
            k = draw(st.integers(0, x.ndim))
            shape = tuple(1 if draw(st.booleans()) else n for n in x.shape[x.ndim - k:])
        else:
            shape = None
        inputs.append(draw(array(shape)))
    elif op == "relu":
        params["negative_slope"] = draw(st.one_of(st.sampled_from([0.0, 0.1, -1.0, 3.0]),
                                                  st.sampled_from([math.nan, math.inf, "0.1", None])))
    elif op == "reduce_sum":
        params["axis"] = draw(st.one_of(st.none(), st.integers(-x.ndim - 1, x.ndim), st.sampled_from(WEIRD)))
        params["keepdims"] = draw(st.one_of(st.booleans(), st.sampled_from([1, "yes", None])))
    elif op == "softmax":
        params["axis"] = draw(st.one_of(st.integers(-x.ndim - 1, x.ndim), st.sampled_from(WEIRD)))
    if draw(st.integers(0, 9)) == 0:
        params[draw(st.sampled_from(["alpha", "axes", "dim"]))] = 1
    if draw(st.integers(0, 4)) == 0:
        params = {k: v for k, v in params.items() if draw(st.booleans())}  # some defaults
    out_kind = draw(st.sampled_from(["none"] * 6 + ["fresh", "wrong_shape", "wrong_dtype", "overlapping", "readonly"]))
    return {"op": op, "inputs": inputs, "params": params, "out": out_kind}


def _expected_out_shape(op: str, inputs: list[np.ndarray], params: dict[str, Any]) -> tuple[int, ...] | None:
    try:
        full = operators.spec(op).validate_params(params, [a.shape for a in inputs])
        return tuple(operators.spec(op).output_shape([a.shape for a in inputs], full))
    except OprtError:
        return None


def run_call(name: str, registry: Registry, c: dict[str, Any]) -> None:
    c = {**c, "backend": name}
    op, inputs, params = c["op"], c["inputs"], c["params"]
    backend = registry.get_backend(name)
    out = None
    shape = _expected_out_shape(op, inputs, params)
    dt = inputs[0].dtype
    if c["out"] != "none" and shape is not None:
        try:
            if c["out"] == "fresh":
                out = backend.empty(shape, get_dtype(dt).name)
            elif c["out"] == "wrong_shape":
                out = backend.empty(shape + (2,), get_dtype(dt).name)
            elif c["out"] == "wrong_dtype":
                other = "f16" if get_dtype(dt).name != "f16" else "f32"
                out = backend.empty(shape, other)
            elif c["out"] == "overlapping" and math.prod(shape) > 1:  # writeable, zero stride on dim 0
                buf = np.zeros(math.prod(shape[1:]) or 1, dt)
                out = np.lib.stride_tricks.as_strided(buf, shape, (0,) + np.empty(shape[1:], dt).strides,
                                                      writeable=True)
            elif c["out"] == "readonly":
                out = np.broadcast_to(np.zeros(shape[-1:], dt), shape)
        except OprtError:
            out = None  # e.g. a dtype the backend has no arrays of: nothing to test with that out
    what = (f"{name}: {op}({', '.join(f'{a.dtype}{a.shape} strides {a.strides}' for a in inputs)}, {params}, "
            f"out={c['out']})")
    try:
        result = op_api.run(op, inputs, params, backend=name, out=out, registry=registry)
    except OprtError:
        return  # a documented error
    except Exception as exc:  # noqa: BLE001 - the point of the test
        raise AssertionError(f"{what}: raised {type(exc).__name__}: {exc} (not an OprtError)") from exc
    # success: the call was valid, so the result must be right
    got = backend.to_host(result)
    assert shape is not None, f"{what}: succeeded on params the spec rejects"
    full = operators.spec(op).validate_params(params, [a.shape for a in inputs])
    check = operators.spec(op).check(got, [np.asarray(a) for a in inputs], get_dtype(dt).name, full)
    assert check.ok, f"{what}: wrong result: {check.message}"
    if c["out"] == "fresh" and isinstance(out, DeviceArray):
        _repeat_through_fast_path(backend, registry, c, full, what)


def _repeat_through_fast_path(backend, registry: Registry, c: dict[str, Any], full: dict[str, Any], what: str) -> None:
    """The same valid call twice more with device inputs and fresh device outs, through the process-wide
    registry path, so the second call takes the op API's fast path (cached launcher on raw pointers):
    both results must match the reference."""
    op, inputs, params = c["op"], c["inputs"], c["params"]
    dev_in = [backend.to_device(np.array(a, order="C")) for a in inputs]  # ascontiguousarray makes 0-d 1-d
    host_in = [np.asarray(a) for a in inputs]
    dt = get_dtype(inputs[0].dtype).name
    with mock.patch.object(op_api, "get_registry", lambda: registry):
        op_api.clear_cache()
        for attempt in range(2):
            out = backend.empty(_expected_out_shape(op, inputs, params), dt)
            backend.fill_nan(out)
            op_api.run(op, dev_in, params, backend=c["backend"], out=out)
            check = operators.spec(op).check(backend.to_host(out), host_in, dt, full)
            where = "the fast path" if attempt else "device inputs"
            assert check.ok, f"{what}: wrong result on {where}: {check.message}"
        assert op_api._fast, f"{what}: the repeated call did not populate the fast-path cache"
        op_api.clear_cache()


@FUZZ
@given(c=call())
def test_fuzz_op_api(op_backend, c):
    name, registry = op_backend
    run_call(name, registry, c)


# -- out and the inputs as views of one buffer ------------------------------------------------------


def _row_major(shape: tuple[int, ...]) -> list[int]:
    strides, run = [], 1
    for n in reversed(shape):
        strides.insert(0, run)
        run *= max(n, 1)
    return strides


@st.composite
def view_strides(draw, shape: tuple[int, ...], output: bool) -> list[int]:
    """Element strides for ``shape``: row-major, reversed, gapped, transposed, or (inputs only) broadcast."""
    kinds = ["row-major", "reversed", "gapped", "transposed"] + ([] if output else ["broadcast"])
    kind = draw(st.sampled_from(kinds))
    strides = _row_major(shape)
    if kind == "reversed":
        return [-s if draw(st.booleans()) else s for s in strides]
    if kind == "gapped":
        gap = draw(st.integers(2, 3))
        return [s * gap for s in strides]
    if kind == "transposed" and len(shape) == 2:
        return [1, max(shape[0], 1)]
    if kind == "broadcast":
        return [0] + strides[1:]
    return strides


@st.composite
def overlap_call(draw) -> dict[str, Any]:
    op = draw(st.sampled_from([op for op in operators.names("core") if op in host_ops()]))
    nd = draw(st.integers(1, 2))
    shape = tuple(draw(st.integers(1, 6)) for _ in range(nd))
    in_shapes, params = [shape], {}
    if op == "vector_add":
        other = shape if draw(st.booleans()) else shape[1:] or shape
        in_shapes = [shape, other] if draw(st.booleans()) else [other, shape]
    elif op == "relu":
        params = {"negative_slope": draw(st.sampled_from([0.0, 0.5]))}
    elif op == "reduce_sum":
        params = {"axis": draw(st.integers(-nd, nd - 1)), "keepdims": draw(st.booleans())}
    elif op == "softmax":
        params = {"axis": draw(st.integers(-nd, nd - 1))}
    out_shape = operators.spec(op).output_shape(in_shapes, params)
    in_strides = [draw(view_strides(s, False)) for s in in_shapes]
    out_strides = draw(view_strides(out_shape, True))
    offsets = [draw(st.integers(0, 40)) for _ in range(1 + len(in_shapes))]
    exact = draw(st.sampled_from([None, None] + list(range(len(in_shapes)))))  # out's origin on input k's
    if exact is not None and in_shapes[exact] == out_shape and draw(st.integers(0, 3)):
        in_strides[exact] = list(out_strides)
    return {"op": op, "params": params, "dtype": draw(st.sampled_from(DTYPES)), "seed": draw(st.integers(0, 2**32 - 1)),
            "tensors": [(out_shape, out_strides), *zip(in_shapes, in_strides)], "offsets": offsets, "exact": exact}


def _element_span(shape, strides) -> tuple[int, int]:
    lo = sum((n - 1) * s for n, s in zip(shape, strides) if n > 1 and s < 0)
    hi = sum((n - 1) * s for n, s in zip(shape, strides) if n > 1 and s > 0)
    return lo, hi


def _refused(c: dict[str, Any], origins: list[int]) -> str | None:
    """The input whose bytes out shares beyond what the op allows (spans intersect, rows do not interleave apart, and
    out is not exactly an input named in the spec's ``inplace``), else None."""
    spec = operators.spec(c["op"])
    (o_shape, o_strides), *ins = c["tensors"]
    o_lo, o_hi = _element_span(o_shape, o_strides)
    for k, (shape, strides) in enumerate(ins):
        lo, hi = _element_span(shape, strides)
        if origins[k + 1] + hi < origins[0] + o_lo or origins[0] + o_hi < origins[k + 1] + lo:
            continue
        if rows_disjoint((origins[0], o_shape, o_strides), (origins[k + 1], shape, strides)):
            continue
        exact = origins[k + 1] == origins[0] and shape == o_shape and all(
            a == b for n, a, b in zip(o_shape, o_strides, strides) if n > 1)
        if not (exact and spec.input_names[k] in spec.inplace):
            return spec.input_names[k]
    return None


def run_overlap_call(name: str, registry: Registry, c: dict[str, Any]) -> None:
    op, params, dt = c["op"], c["params"], c["dtype"]
    spans = [_element_span(shape, strides) for shape, strides in c["tensors"]]
    origins = [off - lo for off, (lo, _) in zip(c["offsets"], spans)]
    if c["exact"] is not None:
        origins[0] = origins[c["exact"] + 1]
    shift = -min(o + lo for o, (lo, _) in zip(origins, spans))
    origins = [o + shift for o in origins]
    size = max(o + hi for o, (_, hi) in zip(origins, spans)) + 1
    rng = np.random.default_rng(c["seed"])
    host = rng.uniform(-2, 2, size).astype(get_dtype(dt).numpy)
    backend = registry.get_backend(name)
    item = host.itemsize

    def views(base):
        if isinstance(base, np.ndarray):
            return [np.lib.stride_tricks.as_strided(base[o:], shape, [s * item for s in strides], writeable=True)
                    for o, (shape, strides) in zip(origins, c["tensors"])]
        return [DeviceArray(backend, base.ptr + o * item, shape, strides, dt, base)
                for o, (shape, strides) in zip(origins, c["tensors"])]

    refused = _refused(c, origins)
    what = f"{name}: {op}{params} {dt} tensors={c['tensors']} origins={origins} exact={c['exact']}"
    before = [np.array(v) for v in views(host)[1:]]
    numpy = name == "numpy"
    work = host.copy() if numpy else backend.to_device(host)
    with mock.patch.object(op_api, "get_registry", lambda: registry):
        op_api.clear_cache()
        if not numpy:  # the same layouts on separate buffers first: the call below then takes the fast path
            op_api.run(op, views(backend.to_device(host))[1:], params, backend=name,
                       out=views(backend.empty((size,), dt))[0])
            assert op_api._fast, f"{what}: the call on separate buffers filed nothing for the fast path"
        out, *ins = views(work)
        try:
            op_api.run(op, ins, params, backend=name, out=out)
        except OverlapError as exc:
            assert refused is not None, f"{what}: refused: {exc}"
            assert f"{op}: out " in str(exc) and f"input {refused} " in str(exc), f"{what}: {exc}"
            now = work if numpy else backend.to_host(work)
            assert np.array_equal(now, host, equal_nan=True), f"{what}: a refused call wrote"
            assert numpy or exc.status == 12, f"{what}: not refused by the library's launch: {exc}"
            return
        finally:
            op_api.clear_cache()
    assert refused is None, f"{what}: accepted, though out overlaps input {refused}"
    res = operators.spec(op).check(backend.to_host(out), before, dt, params)
    assert res.ok, f"{what}: wrong result: {res.message}"


@FUZZ
@given(c=overlap_call())
def test_fuzz_overlapping_out(op_backend, c):
    name, registry = op_backend
    run_overlap_call(name, registry, c)
