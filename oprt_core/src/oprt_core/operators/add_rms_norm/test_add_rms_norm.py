"""add_rms_norm (oprt_core.operators.add_rms_norm), rms_norm's fused residual form and an op of two outputs (out and
h = x + residual): the spec (shapes, references, a budget per output), the numpy backend, the op API (tuples, in
place, overlaps), the generated C ABI, the host C library (results, validation, the launch's aliasing checks per
output), and liger's implementation writing into both outputs."""

from __future__ import annotations

import sys
import types

import ml_dtypes
import numpy as np
import pytest
from baseline_helpers import NpTensor, np_torch

import oprt_core.errors as E
import oprt_core.ops as ops
from oprt_core import cdecl
from oprt_core.compiled import DeviceArray
from oprt_core.errors import InvalidArgumentError, OverlapError
from oprt_core.operators.add_rms_norm import SPEC as add_rms_norm_spec
from oprt_core.operators.add_rms_norm import norm_case
from oprt_core.operators.add_rms_norm.baselines import IMPLS
from oprt_core.operators.rms_norm import SPEC as rms_norm_spec
from oprt_core.spec import Case, TensorCase

S = add_rms_norm_spec


def _rand(rng, *shape):
    v = rng.uniform(-1.0, 1.0, shape)
    v[v == 0.0] = 0.5
    return v


def _args(seed=0, shape=(6, 40), dtype=np.float32):
    rng = np.random.default_rng(seed)
    x, r = (_rand(rng, *shape).astype(dtype) for _ in range(2))
    return x, r, _rand(rng, shape[-1]).astype(dtype)


# -- the spec --------------------------------------------------------------------------------------------------

def test_declared_outputs_and_defaults():
    assert S.output_names == ("out", "h") and S.n_outputs == 2 and S.multi_output
    assert rms_norm_spec.output_names == ("out",) and not rms_norm_spec.multi_output
    assert S.output_shape([(3, 8), (3, 8), (8,)], {}) == ((3, 8), (3, 8))
    assert rms_norm_spec.output_shape([(3, 8), (8,)], {}) == (3, 8)  # one output: its shape, as before
    with pytest.raises(InvalidArgumentError, match=r"residual has shape \(3, 9\), expected x's shape \(3, 8\)"):
        S.output_shapes([(3, 8), (3, 9), (8,)], {})
    with pytest.raises(InvalidArgumentError, match=r"weight has shape \(9,\), expected \(8,\)"):
        S.output_shapes([(3, 8), (3, 8), (9,)], {})


def test_reference_and_bytes():
    x, r, w = (a.astype(np.float64) for a in _args())
    out, h = S.reference([x, r, w], {"eps": 1e-6})
    np.testing.assert_array_equal(h, x + r)
    np.testing.assert_allclose(out, rms_norm_spec.reference([x + r, w], {"eps": 1e-6}), rtol=1e-15)
    c = norm_case("add_rms_norm", (3, 4096))
    assert [t.shape for t in c.inputs] == [(3, 4096), (3, 4096), (4096,)]
    assert S.bytes_moved(c, "bf16") == (4 * 3 * 4096 + 4096) * 2  # x, residual read; out, h written; weight read
    assert S.flops(c) == 5 * 3 * 4096 + 3 * 3
    assert {"smoke", "default", "large", "edge", "models"} <= set(S.case_sets)


def test_each_output_checked_with_its_own_budget():
    x, r, w = _args(1, (16, 64), ml_dtypes.bfloat16)
    out, h = S.reference([x, r, w])
    bf = ml_dtypes.bfloat16
    assert S.check((out.astype(bf), h.astype(bf)), [x, r, w], "bf16").ok
    # out normalised from h as rounded to bf16 (as torch's x + residual, then rms_norm) is inside out's budget
    h_bf = h.astype(bf)
    out_rounded = rms_norm_spec.reference([h_bf, w])
    assert S.check((out_rounded.astype(bf), h_bf), [x, r, w], "bf16").ok
    # h without the residual: h's check fails, named
    result = S.check((out.astype(bf), x), [x, r, w], "bf16")
    assert not result.ok and result.message.startswith("h: ")
    # out of x alone (the residual not added before the norm): out's check fails, named
    result = S.check((rms_norm_spec.reference([x, w]).astype(bf), h_bf), [x, r, w], "bf16")
    assert not result.ok and result.message.startswith("out: ")
    assert not S.check((out.astype(bf),), [x, r, w], "bf16").ok  # one output of two


# -- the numpy backend and the op API ------------------------------------------------------------------------------

def test_op_api_returns_a_tuple_and_rms_norm_takes_residual():
    x, r, w = _args(2)
    out, h = ops.add_rms_norm(x, r, w, eps=1e-5)
    assert S.check((out, h), [x, r, w], "f32", {"eps": 1e-5}).ok
    out2, h2 = ops.rms_norm(x, w, 1e-5, residual=r)
    np.testing.assert_array_equal(out2, out)
    np.testing.assert_array_equal(h2, h)
    assert isinstance(ops.rms_norm(x, w), np.ndarray)  # without residual: rms_norm, one array
    given = (np.empty_like(x), np.empty_like(x))
    result = ops.add_rms_norm(x, r, w, out=given)
    assert result[0] is given[0] and result[1] is given[1]
    assert S.check(given, [x, r, w], "f32").ok
    ops.run("add_rms_norm", [x, r, w], backend="numpy", out=list(given))  # a list is taken as the tuple


def test_in_place_as_vllm_writes_it():
    x, r, w = _args(3)
    want = S.reference([x, r, w])
    xi, ri = x.copy(), r.copy()
    ops.add_rms_norm(xi, ri, w, out=(xi, ri))  # out over x, h over residual
    assert S.check((xi, ri), [x, r, w], "f32").ok and not np.array_equal(xi, x)
    xi, ri = x.copy(), r.copy()
    ops.add_rms_norm(xi, ri, w, out=(ri, xi))  # the other way round
    assert S.check((ri, xi), [x, r, w], "f32").ok
    assert np.allclose(xi, want[1], rtol=1e-6)


def test_overlaps_are_refused_per_output():
    x, r, w = _args(4)
    o = np.empty_like(x)
    with pytest.raises(OverlapError, match="outputs out and h share memory"):
        ops.add_rms_norm(x, r, w, out=(o, o))
    with pytest.raises(OverlapError, match=r"h overlaps input x \(partial overlap of the same memory\); use a "
                                           r"separate output, or x itself as h \(in place\)"):
        ops.add_rms_norm(x, r, w, out=(o, x[::-1]))
    big = np.empty((6, 80), np.float32)
    with pytest.raises(OverlapError, match="outputs out and h share memory"):
        ops.add_rms_norm(x, r, w, out=(big[:, ::2], big[:, 1::2]))  # interleaved: refused by their spans
    wb = np.empty((6, 40), np.float32)
    wb[0, :] = w
    with pytest.raises(OverlapError, match="h overlaps input weight"):
        ops.add_rms_norm(x, r, wb[0], out=(o, wb))
    with pytest.raises(InvalidArgumentError, match="out must be a tuple of 2 arrays"):
        ops.add_rms_norm(x, r, w, out=o)
    with pytest.raises(InvalidArgumentError, match=r"h has shape \(6, 41\), expected \(6, 40\)"):
        ops.add_rms_norm(x, r, w, out=(o, np.empty((6, 41), np.float32)))
    with pytest.raises(InvalidArgumentError, match="dtype mismatch: out is f32 but h is f16"):
        ops.add_rms_norm(x, r, w, out=(o, np.empty((6, 40), np.float16)))


# -- the generated C ABI -------------------------------------------------------------------------------------------

def test_prototypes_and_entry_macro_name_every_output():
    text = cdecl.prototypes(S)
    assert "const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *h," in text
    assert "void *out, void *h, const void *x, const void *residual, const void *weight," in text
    assert " * h (output): x + residual" in text and "may be exactly x or residual (in place)" in text
    macro = cdecl.entry_macro(S)
    assert "oprt_op_outputs_t common;" in macro and "oprt_check_launch_outputs" in macro
    # each output may be x (input 0) or residual (input 1), never weight (input 2)
    for j in (0, 1):
        for k in (0, 1):
            assert f"d_->common.alias[{j}].inplace[{k}] = 1;" in macro
        assert f"d_->common.alias[{j}].inplace[2]" not in macro
    # a single-output op's generated text keeps its one out
    assert "oprt_op_common_t common;" in cdecl.entry_macro(rms_norm_spec)


# -- the host C library --------------------------------------------------------------------------------------------

def _run_host(b, x, r, w, outs, params=None):
    b.prepare("add_rms_norm", [b.to_device(a) for a in (x, r, w)], outs, params or {})()
    return tuple(b.to_host(o) for o in outs)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_host_library_runs_it_on_strided_views(host_backend, dtype):
    b, rng = host_backend, np.random.default_rng(5)
    x = _rand(rng, 2, 3, 80).astype(dtype)[..., ::2]  # inner stride 2
    r = _rand(rng, 2, 3, 40).astype(dtype)[::-1]  # reversed leading dim
    w = _rand(rng, 40).astype(dtype)
    name = {np.float32: "f32", np.float16: "f16"}.get(dtype, "bf16")
    outs = (b.empty(x.shape, name), b.empty(x.shape, name))
    for o in outs:
        b.fill_nan(o)
    got = _run_host(b, x, r, w, outs, {"eps": 1e-3})
    result = S.check(got, [x, r, w], name, {"eps": 1e-3})
    assert result.ok, result.message


def test_host_library_in_place_and_aliasing(host_backend):
    b = host_backend
    x, r, w = _args(6)
    dx, dr = b.to_device(x), b.to_device(r)
    # weight at the start of a buffer of x's size and more, so that an out laid over it overlaps weight alone
    wbuf = b.to_device(np.concatenate([w, np.zeros(x.size, np.float32)]))
    dw = DeviceArray(b, wbuf.ptr, w.shape, (1,), "f32", wbuf)
    b.prepare("add_rms_norm", [dx, dr, dw], (dx, dr), {})()  # out over x, h over residual
    assert S.check((b.to_host(dx), b.to_host(dr)), [x, r, w], "f32").ok
    o, h = b.empty(x.shape, "f32"), b.empty(x.shape, "f32")
    with pytest.raises(E.OverlapError, match="add_rms_norm: outputs out and h share memory; use separate outputs"):
        b.prepare("add_rms_norm", [dx, dr, dw], (o, o), {})()
    launcher = b.prepare("add_rms_norm", [dx, dr, dw], (o, h), {})
    ffi = b.ffi

    def launch(out_ptr, h_ptr):
        b.check(b.lib.oprt_add_rms_norm(launcher.desc, ffi.NULL, 0, ffi.cast("void *", out_ptr),
                                        ffi.cast("void *", h_ptr), *(ffi.cast("const void *", a.ptr) for a in
                                                                     (dx, dr, dw)), ffi.NULL))

    with pytest.raises(E.OverlapError, match=r"add_rms_norm: h overlaps input x \(partial overlap of the same "
                                             r"memory\); use a separate output, or x itself as h \(in place\)"):
        launch(o.ptr, dx.ptr + 4)
    with pytest.raises(E.OverlapError, match=r"add_rms_norm: out overlaps input weight \(the same memory in another "
                                             r"layout\); use a separate output$"):
        launch(dw.ptr, h.ptr)
    with pytest.raises(E.OverlapError, match="add_rms_norm: outputs out and h share memory"):
        launch(o.ptr + 8, o.ptr)
    launch(dr.ptr, dx.ptr)  # out over residual, h over x: allowed


def test_host_library_refuses_bad_input(host_backend):
    b = host_backend
    x, r, w = (b.to_device(a) for a in _args(7))
    o, h = b.empty((6, 40), "f32"), b.empty((6, 40), "f32")
    with pytest.raises(E.ShapeError, match=r"add_rms_norm: shape mismatch: residual has shape \(6, 39\), expected "
                                           r"x's shape \(6, 40\)"):
        b.prepare("add_rms_norm", [x, b.to_device(np.ones((6, 39), np.float32)), w], (o, h), {})
    with pytest.raises(E.ShapeError, match=r"add_rms_norm: shape mismatch: h has shape \(6, 41\)"):
        b.prepare("add_rms_norm", [x, r, w], (o, b.empty((6, 41), "f32")), {})
    with pytest.raises(E.UnsupportedDtypeError, match="h is f16"):
        b.prepare("add_rms_norm", [x, r, w], (o, b.empty((6, 40), "f16")), {})
    with pytest.raises(E.InvalidArgumentError, match="pass a tuple of as many arrays"):
        b.prepare("add_rms_norm", [x, r, w], o, {})
    launcher = b.prepare("add_rms_norm", [x, r, w], (o, h), {})
    ffi = b.ffi
    status = b.lib.oprt_add_rms_norm(launcher.desc, ffi.NULL, 0, ffi.cast("void *", o.ptr), ffi.NULL,
                                     *(ffi.cast("const void *", a.ptr) for a in (x, r, w)), ffi.NULL)
    with pytest.raises(E.NullPointerError, match="add_rms_norm: argument 'h' is NULL"):
        b.check(status)


def test_op_api_on_the_host_library_and_its_fast_path(host_backend, monkeypatch):
    from oprt_core.plugins import get_registry

    reg = get_registry()
    monkeypatch.setitem(reg.backends, "host", host_backend)
    ops.clear_cache()
    x, r, w = _args(8)
    dx, dr, dw = (host_backend.to_device(a) for a in (x, r, w))
    outs = (host_backend.empty(x.shape, "f32"), host_backend.empty(x.shape, "f32"))
    assert ops.add_rms_norm(dx, dr, dw, backend="host", out=outs) == outs  # the full path, filed
    assert S.check(tuple(host_backend.to_host(o) for o in outs), [x, r, w], "f32").ok
    for o in outs:
        host_backend.fill_nan(o)
    assert ops.add_rms_norm(dx, dr, dw, backend="host", out=outs) == outs  # the fast path
    assert S.check(tuple(host_backend.to_host(o) for o in outs), [x, r, w], "f32").ok
    with pytest.raises(E.OverlapError, match="outputs out and h share memory"):
        ops.add_rms_norm(dx, dr, dw, backend="host", out=(outs[0], outs[0]))
    ops.clear_cache()


def test_real_hidden_sizes():
    assert {4096, 14336} <= {c.shape[-1] for c in S.cases("default")}


def test_case_inputs_follow_the_layout():
    c = norm_case("add_rms_norm", (17, 65), "transposed")
    assert c.inputs[:2] == (TensorCase((17, 65), "transposed"),) * 2 and isinstance(c, Case)


# -- the baselines' implementations ---------------------------------------------------------------------------------

def _fused_liger_module(torch) -> types.ModuleType:
    """A module standing for liger_kernel.ops.fused_add_rms_norm: Y, then S allocated through its ``torch`` (as
    Liger's forward does), RSTD too; returns (Y, S)."""
    mod = types.ModuleType("fake_liger_fused_add_rms_norm")
    mod.torch = torch

    def apply(x, r, w, eps):
        rows = x.a.reshape(-1, x.shape[-1])
        y = mod.torch.empty((rows.shape[0], rows.shape[1]), dtype=x.dtype)
        s = mod.torch.empty((rows.shape[0], rows.shape[1]), dtype=x.dtype)
        mod.torch.empty(rows.shape[0], dtype=np.float32)  # RSTD
        s.a[...] = rows + r.a.reshape(rows.shape)
        y.a[...] = s.a / np.sqrt(np.mean(s.a * s.a, axis=-1, keepdims=True) + eps) * w.a
        return y.view(x.shape), s.view(x.shape)

    function = type("LigerFusedAddRMSNormFunction", (), {"apply": staticmethod(apply), "__module__": mod.__name__})
    mod.LigerFusedAddRMSNormFunction = function
    return mod


def test_liger_writes_into_both_outputs(monkeypatch):
    torch = np_torch()
    mod = _fused_liger_module(torch)
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    rng = np.random.default_rng(8)
    x, r = (NpTensor(rng.standard_normal((3, 16)).astype(np.float32)) for _ in range(2))
    w = NpTensor(rng.uniform(0.5, 2, 16).astype(np.float32))
    outs = (NpTensor(np.full((3, 16), np.nan, np.float32)), NpTensor(np.full((3, 16), np.nan, np.float32)))
    run = IMPLS["liger"](mod, [x, r, w], outs, {"eps": 1e-6})
    assert run() == "liger add_rms_norm"  # Y and S allocated into out and h: nothing copied
    assert S.check((outs[0].a, outs[1].a), [x.a, r.a, w.a], "f32", {"eps": 1e-6}).ok
