"""Fuzzing the C ABI (oprt.h) through cffi: random descriptors, shapes, strides, dtype codes, axes, params,
workspace sizes and NULL pointers.

Every call either succeeds -- and then the op's output matches the float64 reference (``OpSpec.check``) --
or returns a documented status with a last-error message. Some valid calls place out and the inputs in one
buffer (at random offsets, or out exactly on an input): overlapping spans must be refused with
OPRT_STATUS_OVERLAP unless out is exactly an input the op runs in place on (``OpSpec.inplace``), and then the
in-place result must match the reference of the inputs as they were. Anything else (a crash, a status outside the
documented set, an accepted descriptor that is invalid, a rejected one that is valid) fails.

Backends: the host test library (tests/oprt_core/host_lib, always) and the installed GPU backends
``nvidia`` and ``metax`` where available (the GPU run). A GPU library must reject bad input before any
kernel launch, so the pytest process survives every example.

Examples per test: ``OPRT_FUZZ_EXAMPLES`` (default 200); the GPU suite runs 10000.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from op_helpers import host_ops

hypothesis = pytest.importorskip("hypothesis")
from gpu_helpers import rows_disjoint  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from oprt_core import get_registry, operators  # noqa: E402
from oprt_core.compiled import DeviceArray  # noqa: E402
from oprt_core.dtypes import get_dtype  # noqa: E402

EXAMPLES = int(os.environ.get("OPRT_FUZZ_EXAMPLES", "200"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])

OPS = tuple(op for op in operators.names("core") if op in host_ops())  # the host library's
AXIS_ALL = -128
DTYPE_NAMES = {0: "f32", 1: "f16", 2: "bf16"}
CREATE_FAILURES = {1, 2, 3, 4, 5, 6}  # null pointer, bad shape, bad strides, bad param, unsupported dtype / case
INT64_MAX = (1 << 63) - 1
HUGE = (1 << 31, 1 << 40, 1 << 62, INT64_MAX)
MAX_RUN_ELEMENTS = 1 << 16  # buffers of accepted descriptors up to this span are allocated and run
OVERLAP = 12  # OPRT_STATUS_OVERLAP: a launch's out shares memory with an input beyond what the op allows


# -- backends --------------------------------------------------------------------------------------

@pytest.fixture(scope="module", params=["host", "nvidia", "metax"])
def cabi(request):
    """(name, CompiledBackend): the host library always; nvidia and metax where installed and available."""
    if request.param == "host":
        return "host", request.getfixturevalue("host_backend")
    backend = get_registry().backends.get(request.param)
    if backend is None:
        pytest.skip(f"backend {request.param!r} is not installed")
    avail = backend.availability()
    if not avail.ok:
        pytest.skip(f"backend {request.param!r} unavailable: {avail.reason}")
    return request.param, backend


# -- the descriptor oracle: oprt_validate.h's rules, restated ----------------------------------------

@dataclass
class T:
    """A tensor descriptor as drawn (may be invalid)."""

    dtype: int
    ndim: int
    shape: list[int]
    strides: list[int]

    def valid_dims(self) -> bool:
        return 0 <= self.ndim <= 8

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(self.shape[: max(0, min(self.ndim, 8))])

    @property
    def numel(self) -> int:
        return math.prod(self.dims)


def tensor_ok(t: T) -> bool:
    if t.dtype not in DTYPE_NAMES or not t.valid_dims():
        return False
    numel = 1
    for n in t.dims:
        if n < 0:
            return False
        if n > 0 and numel > (INT64_MAX // 16) // n:
            return False
        numel *= n
    if numel > 1:
        for n, s in zip(t.dims, t.strides):
            if n > 1 and abs(s) > (INT64_MAX // 16) // n:
                return False
    return True


def output_strides_ok(t: T) -> bool:
    if t.numel <= 1:
        return True
    dims = sorted((abs(s), n) for n, s in zip(t.dims, t.strides) if n > 1)
    span = 1
    for s, n in dims:
        if s < span:
            return False
        span = s * n
    return True


def broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    nd = max(len(a), len(b))
    a, b = (1,) * (nd - len(a)) + a, (1,) * (nd - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != 1 and y != 1 and x != y:
            return None
        out.append(y if x == 1 else x)
    return tuple(out)


def descriptor_ok(op: str, out: T, ins: list[T], params: dict[str, Any]) -> bool:
    """Whether oprt.h must accept this descriptor (or say UNSUPPORTED_CASE)."""
    if not all(tensor_ok(t) for t in [out, *ins]):
        return False
    if any(t.dtype != out.dtype for t in ins):
        return False
    x = ins[0]
    if op == "copy" or op == "relu" or op == "softmax":
        if out.dims != x.dims:
            return False
    if op == "vector_add":
        if broadcast(ins[0].dims, ins[1].dims) != out.dims:
            return False
    if op == "relu" and not math.isfinite(params["negative_slope"]):
        return False
    if op in ("reduce_sum", "softmax"):
        axis = params["axis"]
        if not (op == "reduce_sum" and axis == AXIS_ALL) and not (-x.ndim <= axis < x.ndim):
            return False
        if op == "reduce_sum":
            ax = None if axis == AXIS_ALL else axis % x.ndim
            keep = params["keepdims"] != 0
            expect = tuple(1 if (ax is None or i == ax) else n for i, n in enumerate(x.dims)
                           if keep or not (ax is None or i == ax))
            if out.dims != expect:
                return False
    return output_strides_ok(out)


# -- strategies ----------------------------------------------------------------------------------

small_extent = st.integers(0, 6)
extent = st.one_of(small_extent, small_extent, small_extent, st.integers(-2, 9), st.sampled_from(HUGE))
small_stride = st.integers(-4, 8)
stride = st.one_of(small_stride, small_stride, st.sampled_from((*HUGE, -(1 << 40), -INT64_MAX)))
dtype_code = st.one_of(st.sampled_from([0, 1, 2]), st.sampled_from([0, 1, 2]), st.sampled_from([0, 1, 2]),
                       st.sampled_from([-1, 3, 7, 255, 2**31 - 1, -(2**31)]))


def contiguous(shape: tuple[int, ...]) -> list[int]:
    out, run = [], 1
    for n in reversed(shape):
        out.insert(0, run)
        run *= max(n, 1)
    return out


@st.composite
def layout(draw, shape: tuple[int, ...], output: bool) -> list[int]:
    """Strides for ``shape``: contiguous, permuted (transposed-like), gapped, reversed or random."""
    kind = draw(st.sampled_from(["contiguous", "permuted", "gapped", "reversed", "random", "random"]))
    nd = len(shape)
    if kind == "contiguous" or nd == 0:
        return contiguous(shape)
    if kind == "permuted":
        perm = draw(st.permutations(range(nd)))
        base = contiguous(tuple(shape[p] for p in perm))
        strides = [0] * nd
        for i, p in enumerate(perm):
            strides[p] = base[i]
        return strides
    if kind == "gapped":
        return [s * draw(st.integers(1, 3)) for s in contiguous(shape)]
    if kind == "reversed":
        return [-s if draw(st.booleans()) else s for s in contiguous(shape)]
    return [draw(small_stride if output else stride) for _ in range(nd)]


@st.composite
def fuzz_case(draw) -> dict[str, Any]:
    op = draw(st.sampled_from(OPS))
    dtype = draw(st.sampled_from([0, 1, 2]))
    nd = draw(st.integers(0, 4))
    x_shape = tuple(draw(small_extent) for _ in range(nd))
    params: dict[str, Any] = {}
    in_shapes = [x_shape]
    if op == "vector_add":
        # b: a suffix of x's shape with some extents set to 1 (or the other way round)
        k = draw(st.integers(0, nd))
        b_shape = tuple(1 if draw(st.booleans()) else n for n in x_shape[nd - k:])
        in_shapes = [x_shape, b_shape] if draw(st.booleans()) else [b_shape, x_shape]
        out_shape = broadcast(*in_shapes)
    elif op == "reduce_sum":
        axis = draw(st.one_of(st.just(AXIS_ALL), st.integers(-nd, nd - 1) if nd else st.just(AXIS_ALL)))
        keep = draw(st.booleans())
        ax = None if axis == AXIS_ALL else axis % nd
        out_shape = tuple(1 if (ax is None or i == ax) else n for i, n in enumerate(x_shape)
                          if keep or not (ax is None or i == ax))
        params = {"axis": axis, "keepdims": int(keep)}
    elif op == "softmax":
        axis = draw(st.integers(-nd, nd - 1)) if nd else 0
        out_shape = x_shape
        params = {"axis": axis}
    else:
        out_shape = x_shape
        if op == "relu":
            params = {"negative_slope": float(np.float32(draw(st.sampled_from([0.0, 0.1, -0.5, 1.0, 2.0]))))}
    ins = [T(dtype, len(s), list(s), draw(layout(s, False))) for s in in_shapes]
    out = T(dtype, len(out_shape), list(out_shape), draw(layout(out_shape, True)))

    # where the buffers lie: apart, or all in one buffer at random element offsets, or out exactly on input k
    # (which then takes out's strides where the shapes agree, so that the alias is exact)
    placement = draw(st.sampled_from(["separate"] * 4 + ["shared", "exact"]))
    offsets = [draw(st.integers(0, 40)) for _ in range(1 + len(ins))]
    on = draw(st.integers(0, len(ins) - 1))
    if placement == "exact" and ins[on].shape == out.shape and draw(st.integers(0, 3)):
        ins[on].strides = list(out.strides)

    # one or two corruptions, or none (about a third of the examples stay valid)
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 2]))):
        tensors = [out, *ins]
        t = tensors[draw(st.integers(0, len(tensors) - 1))]
        what = draw(st.sampled_from(["dtype", "ndim", "extent", "stride", "out_stride", "axis", "slope",
                                     "keepdims"]))
        if what == "dtype":
            t.dtype = draw(dtype_code)
        elif what == "ndim":
            t.ndim = draw(st.sampled_from([-1, 9, 10, -(2**31), max(0, t.ndim - 1), t.ndim + 1]))
            while len(t.shape) < 8:
                t.shape.append(draw(small_extent))
                t.strides.append(draw(small_stride))
        elif what == "extent" and t.shape:
            t.shape[draw(st.integers(0, len(t.shape) - 1))] = draw(extent)
        elif what == "stride" and t.strides:
            t.strides[draw(st.integers(0, len(t.strides) - 1))] = draw(stride)
        elif what == "out_stride" and out.strides:  # zero / overlapping output strides
            out.strides[draw(st.integers(0, len(out.strides) - 1))] = draw(st.sampled_from([0, 1, -1, 2]))
        elif what == "axis" and "axis" in params:
            params["axis"] = draw(st.sampled_from([nd, -nd - 1, 8, -9, 2**31 - 1, -(2**31), AXIS_ALL]))
        elif what == "slope" and op == "relu":
            params["negative_slope"] = draw(st.sampled_from([math.nan, math.inf, -math.inf]))
        elif what == "keepdims" and op == "reduce_sum":
            params["keepdims"] = draw(st.sampled_from([0, 1, -1, 2, 2**31 - 1]))
    null = draw(st.sampled_from(["none"] * 8 + ["desc_ptr", "out_desc", "in_desc"]))
    workspace = draw(st.sampled_from(["exact"] * 6 + ["more", "less", "null"]))
    pointers = draw(st.sampled_from(["ok"] * 8 + ["null_out", "null_in"]))
    return {"op": op, "out": out, "ins": ins, "params": params, "null": null, "workspace": workspace,
            "pointers": pointers, "placement": placement, "offsets": offsets, "on": on}


# -- driving the library ------------------------------------------------------------------------------

def _tdesc(ffi, t: T):
    d = ffi.new("oprt_tensor_desc_t *")
    d.dtype = t.dtype
    d.ndim = t.ndim
    for i in range(min(8, len(t.shape))):
        d.shape[i] = t.shape[i]
        d.strides[i] = t.strides[i]
    return d


def _span(t: T) -> tuple[int, int]:
    lo = hi = 0
    if t.numel == 0:
        return 0, -1
    for n, s in zip(t.dims, t.strides):
        if n > 1 and s > 0:
            hi += (n - 1) * s
        elif n > 1:
            lo += (n - 1) * s
    return lo, hi


def _host_view(t: T, fill: np.ndarray | float, rng: np.random.Generator | None) -> np.ndarray:
    """A numpy view with t's shape and strides over a fresh base buffer (random values, or ``fill``)."""
    np_dtype = get_dtype(DTYPE_NAMES[t.dtype]).numpy
    if t.numel == 0:
        return np.empty(t.dims, np_dtype)  # no element: the strides address nothing
    lo, hi = _span(t)
    size = max(hi - lo + 1, 1)
    if rng is not None:
        base = rng.uniform(-2, 2, size).astype(np_dtype)
    else:
        base = np.full(size, fill, dtype=np_dtype)
    item = base.itemsize
    strides = [s * item if n > 1 else 0 for n, s in zip(t.dims, t.strides)]  # extent 1: the stride is never used
    return np.lib.stride_tricks.as_strided(base[-lo:] if lo else base, t.dims, strides)


def expected_overlap(op: str, out: T, ins: list[T], origins: list[int]) -> tuple[int, str] | None:
    """(input index, "exact" or "partial") of the first input whose bytes out shares in a way the op does not
    allow, with the tensors' element [0, ...] at ``origins`` (out first) of one buffer; None when the call may
    run. Restates oprt_check_alias: spans intersect, rows do not interleave apart (``rows_disjoint``), and out is
    not exactly (same origin and layout) an input named in the spec's ``inplace``."""
    spec = operators.spec(op)

    def span(t: T, origin: int) -> tuple[int, int] | None:
        if t.numel == 0:
            return None
        lo, hi = _span(t)
        return origin + lo, origin + hi + 1  # in elements: every tensor of a call has one dtype

    o = span(out, origins[0])
    for k, t in enumerate(ins):
        s = span(t, origins[k + 1])
        if o is None or s is None or s[1] <= o[0] or o[1] <= s[0]:
            continue
        if rows_disjoint((origins[0], out.dims, out.strides), (origins[k + 1], t.dims, t.strides)):
            continue
        exact = origins[k + 1] == origins[0] and t.dims == out.dims and all(
            a == b for n, a, b in zip(out.dims, out.strides, t.strides) if n > 1)
        if exact and spec.input_names[k] in spec.inplace:
            continue
        return k, "exact" if exact else "partial"
    return None


def _shared_buffer(backend: Any, out: T, ins: list[T], c: dict[str, Any], rng: np.random.Generator):
    """(device buffer, host copy of it, element origins of out and the inputs) for one buffer holding them all
    at the drawn offsets, or with out's origin on input ``on``'s."""
    tensors = [out, *ins]
    spans = [_span(t) if t.numel else (0, 0) for t in tensors]
    origins = [off - lo for off, (lo, _) in zip(c["offsets"], spans)]
    if c["placement"] == "exact":
        origins[0] = origins[c["on"] + 1]
    shift = -min(o + lo for o, (lo, _) in zip(origins, spans))
    origins = [o + shift for o in origins]
    size = max(o + hi for o, (_, hi) in zip(origins, spans)) + 1
    host = rng.uniform(-2, 2, size).astype(get_dtype(DTYPE_NAMES[out.dtype]).numpy)
    return backend.to_device(host), host, origins


def _strided(base: np.ndarray, t: T, origin: int) -> np.ndarray:
    item = base.itemsize
    strides = [s * item if n > 1 else 0 for n, s in zip(t.dims, t.strides)]
    return np.lib.stride_tricks.as_strided(base[origin:], t.dims, strides)


@dataclass
class Outcome:
    stage: str
    status: int
    message: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _ptr(ffi, arr) -> Any:
    return ffi.cast("void *", arr.ptr) if arr is not None and arr.ptr else ffi.NULL


def run_case(name: str, backend: Any, c: dict[str, Any], seed: int) -> None:
    ffi, lib = backend.ffi, backend.lib
    op, out, ins, params = c["op"], c["out"], c["ins"], c["params"]
    ok = descriptor_ok(op, out, ins, params)
    descs = [_tdesc(ffi, out)] + [_tdesc(ffi, t) for t in ins]
    if c["null"] == "out_desc":
        descs[0] = ffi.NULL
    elif c["null"] == "in_desc":
        descs[-1] = ffi.NULL
    extra: tuple = ()
    if op == "relu":
        extra = (params["negative_slope"],)
    elif op == "reduce_sum":
        extra = (params["axis"], params["keepdims"])
    elif op == "softmax":
        extra = (params["axis"],)
    p = ffi.NULL if c["null"] == "desc_ptr" else ffi.new(f"oprt_{op}_descriptor_t *")
    status = getattr(lib, f"oprt_create_{op}_descriptor")(p, *descs, *extra)
    msg = ffi.string(lib.oprt_last_error_message()).decode(errors="replace")
    what = f"{name}: create {op} out={out} ins={ins} params={params} null={c['null']}"
    if c["null"] != "none":
        # NULL_POINTER, or another documented status when something else is wrong too (checked first)
        assert status == 1 or (not ok and status in CREATE_FAILURES), \
            f"{what}: a NULL argument gave status {status} ({msg})"
        assert msg, what
        return
    if status != 0:
        assert status in CREATE_FAILURES, f"{what}: undocumented status {status}: {msg}"
        assert msg, f"{what}: status {status} without a last-error message"
        assert not ok or status == 6, f"{what}: a valid descriptor was rejected with status {status}: {msg}"
        return
    assert ok, f"{what}: an invalid descriptor was accepted"
    destroy = getattr(lib, f"oprt_destroy_{op}_descriptor")
    desc = ffi.gc(p[0], destroy)
    size = ffi.new("size_t *")
    assert getattr(lib, f"oprt_get_{op}_workspace_size")(desc, size) == 0
    assert getattr(lib, f"oprt_get_{op}_workspace_size")(desc, ffi.NULL) == 1
    need = int(size[0])
    spans = [(lambda lo_hi: lo_hi[1] - lo_hi[0] + 1)(_span(t)) for t in [out, *ins]]
    # an empty tensor may have huge other extents (valid in C) that numpy cannot even describe
    huge_empty = any(t.numel == 0 and math.prod(d for d in t.dims if d) > MAX_RUN_ELEMENTS for t in [out, *ins])
    if max(spans) > MAX_RUN_ELEMENTS or need > (64 << 20) or huge_empty:
        return  # valid but too large a buffer to run here: the create/validation path is what was fuzzed
    rng = np.random.default_rng(seed)
    shared = c["placement"] != "separate" and not any(t.numel == 0 for t in [out, *ins])
    overlap = None
    if shared:  # one buffer: views at the drawn origins (inputs' values copied before the call)
        buf, host, origins = _shared_buffer(backend, out, ins, c, rng)
        overlap = expected_overlap(op, out, ins, origins)
        hosts = [np.array(_strided(host, t, o)) for t, o in zip(ins, origins[1:])]
        item = host.itemsize
        dev_ins = [DeviceArray(backend, buf.ptr + o * item, t.dims, t.strides[:len(t.dims)], DTYPE_NAMES[t.dtype], buf)
                   for t, o in zip(ins, origins[1:])]
        dev_out = DeviceArray(backend, buf.ptr + origins[0] * item, out.dims, out.strides[:len(out.dims)],
                               DTYPE_NAMES[out.dtype], buf)
    else:
        hosts = [_host_view(t, 0.0, rng) for t in ins]
        dev_ins = [backend.to_device(h) for h in hosts]
        dev_out = backend.to_device(_host_view(out, np.nan, None))
    ws_mode = c["workspace"]
    ws_size = {"exact": need, "more": need + 64, "less": max(need - 1, 0), "null": need}[ws_mode]
    ws = backend._alloc(ws_size) if ws_size and ws_mode != "null" else (0, None)
    ws_ptr = ffi.cast("void *", ws[0]) if ws[0] else ffi.NULL
    out_ptr = _ptr(ffi, dev_out)
    in_ptrs = [_ptr(ffi, d) for d in dev_ins]
    if c["pointers"] == "null_out":
        out_ptr = ffi.NULL
    elif c["pointers"] == "null_in":
        in_ptrs[-1] = ffi.NULL
    status = getattr(lib, f"oprt_{op}")(desc, ws_ptr, ws_size, out_ptr, *in_ptrs, ffi.NULL)
    msg = ffi.string(lib.oprt_last_error_message()).decode(errors="replace")
    what = (f"{name}: run {op} out={out} ins={ins} params={params} workspace={ws_mode} ({ws_size} of {need}) "
            f"placement={c['placement']}" + (f" origins={origins}" if shared else ""))
    empty = out.numel == 0 or any(t.numel == 0 for t in ins)
    nulls = c["pointers"] != "ok" or (ws_mode == "null" and need > 0)
    if ws_mode == "less" and need > 0:
        assert status in (1, 7), f"{what}: too small a workspace gave status {status} ({msg})"
        return
    if nulls and not empty:
        assert status == 1, f"{what}: a NULL pointer gave status {status} ({msg}), not NULL_POINTER"
        return
    if overlap is not None:
        name = operators.spec(op).input_names[overlap[0]]
        assert status == OVERLAP, f"{what}: out overlaps input {name} ({overlap[1]}) but status is {status} ({msg})"
        assert msg.startswith(f"{op}: out "), f"{what}: {msg}"
        assert name in msg and ("cannot run in place" in msg) == (overlap[1] == "exact"), f"{what}: {msg}"
        return
    if status != 0:
        assert empty and status == 1, f"{what}: status {status} on a valid call: {msg}"
        return
    backend.synchronize()
    got = backend.to_host(dev_out)
    spec = operators.spec(op)
    py_params = dict(params)
    if op == "reduce_sum":
        py_params = {"axis": None if params["axis"] == AXIS_ALL else params["axis"],
                     "keepdims": bool(params["keepdims"])}
    check = spec.check(got, [np.array(h) for h in hosts], DTYPE_NAMES[out.dtype], py_params)
    assert check.ok, f"{what}: wrong result: {check.message}"


@FUZZ
@given(case=fuzz_case(), seed=st.integers(0, 2**32 - 1))
def test_fuzz_c_abi(cabi, case, seed):
    name, backend = cabi
    run_case(name, backend, case, seed)


def test_fuzz_oracle_knows_the_rules():
    """The oracle above restates oprt_validate.h; a few fixed points keep it honest."""
    t = T(0, 2, [4, 5], [5, 1])
    assert tensor_ok(t) and output_strides_ok(t)
    assert not output_strides_ok(T(0, 2, [4, 5], [1, 1]))  # overlapping
    assert not output_strides_ok(T(0, 2, [4, 5], [0, 1]))  # zero stride
    assert output_strides_ok(T(0, 2, [1, 4], [0, 1]))  # extent-1 dims may have any stride
    assert not tensor_ok(T(3, 1, [4], [1])) and not tensor_ok(T(0, 9, [1] * 8, [1] * 8))
    assert tensor_ok(T(0, 2, [0, 1 << 62], [1, 1]))  # empty, however large a later extent
    assert not tensor_ok(T(0, 2, [1 << 62, 0], [1, 1]))  # the running count overflows first: BAD_SHAPE
    assert descriptor_ok("reduce_sum", T(0, 1, [4], [1]), [T(0, 2, [4, 5], [5, 1])], {"axis": -1, "keepdims": 0})
    assert not descriptor_ok("softmax", T(0, 2, [4, 5], [5, 1]), [T(0, 2, [4, 5], [5, 1])], {"axis": 2})
    x = T(0, 1, [4], [1])
    assert expected_overlap("copy", x, [x], [0, 1]) == (0, "partial")  # x[:-1] into x[1:]
    assert expected_overlap("copy", x, [x], [0, 4]) is None  # adjacent
    assert expected_overlap("copy", x, [x], [0, 0]) is None  # exactly in place
    assert expected_overlap("copy", x, [T(0, 1, [4], [-1])], [0, 3]) == (0, "partial")  # reversed onto itself
    assert expected_overlap("copy", T(0, 2, [2, 2], [2, 1]), [T(0, 2, [2, 2], [1, 2])], [0, 0]) == (0, "partial")
    col = T(0, 2, [4, 1], [1, 1])
    assert expected_overlap("reduce_sum", col, [col], [0, 0]) == (0, "exact")  # never in place
    assert expected_overlap("vector_add", x, [T(0, 1, [4], [1]), x], [0, 9, 0]) is None
