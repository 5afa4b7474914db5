"""rms_norm (oprt_core.operators.rms_norm): the reference against an element-by-element float64 formula (math.fsum),
on rows and views, and its closed form on a constant row; the budget against a dropped element, a mean over n + 1
and a wrong eps; real hidden sizes and every layout in the case sets; shape and param errors, bytes, flops, the custom
case; the op function; the host C library (strided views, validation, aliasing); the baselines' implementations
(liger's written into oprt's output, torch's formula where torch has no F.rms_norm)."""

from __future__ import annotations

import inspect
import math
import sys

import ml_dtypes
import numpy as np
import pytest
from baseline_helpers import NpTensor, np_torch, run_and_check, torch_cpu_backend

import oprt_core.errors as E
import oprt_core.ops as ops
from oprt_core.errors import InvalidArgumentError
from oprt_core.operators.rms_norm import SPEC as RMS
from oprt_core.operators.rms_norm import norm_case
from oprt_core.operators.rms_norm.baselines import IMPLS


def _rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    v = rng.uniform(-1.0, 1.0, shape)
    v[v == 0.0] = 0.5  # never zeros
    return v


def fsum_rms_norm(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    out = np.empty(x.shape)
    n = x.shape[-1]
    for r in np.ndindex(*x.shape[:-1]):
        row = [float(v) for v in x[r]]
        inv = 1.0 / math.sqrt(math.fsum(v * v for v in row) / n + eps)
        out[r] = [v * inv * float(w[j]) for j, v in enumerate(row)]
    return out


def _inputs(case, dtype, seed=0):
    return RMS.make_inputs(case, dtype, np.random.default_rng(seed))


# -- the reference ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1,), (7,), (3, 1001), (2, 3, 17), (5, 1)])
def test_reference_matches_fsum(shape):
    rng = np.random.default_rng(1)
    x, w = _rand(rng, *shape), _rand(rng, shape[-1])
    for eps in (1e-6, 0.1):
        np.testing.assert_allclose(RMS.reference([x, w], {"eps": eps}), fsum_rms_norm(x, w, eps), rtol=1e-13, atol=0)


def test_reference_of_a_non_contiguous_view():
    rng = np.random.default_rng(3)
    base = _rand(rng, 31, 2 * 65)
    x = base[:, ::2]  # stepped
    w = _rand(rng, 2 * 65)[::2]
    np.testing.assert_allclose(RMS.reference([x, w], {"eps": 1e-6}), fsum_rms_norm(x, w, 1e-6), rtol=1e-13)


def test_closed_form():
    # rms_norm of a constant row c: sign(c) * |c| / sqrt(c^2 + eps) * w
    x, w = np.full((2, 5), -3.0), np.array([1.0, 2.0, -1.0, 0.5, 4.0])
    np.testing.assert_allclose(RMS.reference([x, w], {"eps": 7.0}), np.broadcast_to(-3.0 / 4.0 * w, (2, 5)),
                               rtol=1e-15)


# -- the budget -------------------------------------------------------------------------------------------------

def test_budget_catches_a_dropped_element_and_a_wrong_eps():
    case = norm_case("rms_norm", (64, 4096))
    x, w = _inputs(case, "f32")
    x64, w64 = (a.astype(np.float64) for a in (x, w))
    n = x.shape[-1]
    dropped = x64 / np.sqrt(np.sum(x64[:, 1:] ** 2, axis=-1, keepdims=True) / n + 1e-6) * w64
    assert not RMS.check(dropped.astype(np.float32), [x, w], "f32", {"eps": 1e-6}).ok
    over_n_plus_1 = x64 / np.sqrt(np.sum(x64 ** 2, axis=-1, keepdims=True) / (n + 1) + 1e-6) * w64
    assert not RMS.check(over_n_plus_1.astype(np.float32), [x, w], "f32", {"eps": 1e-6}).ok
    wrong_eps = RMS.reference([x, w], {"eps": 1e-5})
    assert not RMS.check(wrong_eps.astype(np.float32), [x, w], "f32", {"eps": 1e-6}).ok
    # in bf16 on a short row a dropped element is outside the budget too
    xs, ws = _inputs(norm_case("rms_norm", (16, 7)), "bf16")
    xs64, ws64 = (a.astype(np.float32).astype(np.float64) for a in (xs, ws))
    dropped = xs64 / np.sqrt(np.sum(xs64[:, 1:] ** 2, axis=-1, keepdims=True) / 7 + 1e-6) * ws64
    assert not RMS.check(dropped.astype(ml_dtypes.bfloat16), [xs, ws], "bf16", {"eps": 1e-6}).ok


# -- cases, shapes, params, counts ---------------------------------------------------------------------------------

def test_real_hidden_sizes_and_every_layout():
    assert {4096, 5120, 8192, 14336} <= {c.shape[-1] for c in RMS.cases("default")}
    layouts = {t.layout for c in RMS.cases("edge") for t in c.inputs}
    assert layouts == {"contiguous", "transposed", "step2", "offset1", "reversed", "broadcast0"}


@pytest.mark.parametrize("shapes,params,match", [
    ([(4, 8), (7,)], {}, r"weight has shape \(7,\), expected \(8,\)"),
    ([(), (1,)], {}, "at least 1 dim"),
    ([(4, 8), (8,)], {"eps": -1.0}, "eps must be >= 0"),
])
def test_bad_shapes_and_params_are_refused(shapes, params, match):
    with pytest.raises(InvalidArgumentError, match=match):
        RMS.output_shape(shapes, params)


def test_bytes_and_flops():
    c = norm_case("rms_norm", (3, 4096))
    assert RMS.bytes_moved(c, "bf16") == (2 * 3 * 4096 + 4096) * 2
    assert RMS.flops(c) == 4 * 3 * 4096 + 3 * 3


def test_custom_case():
    c = RMS.custom_case((8, 5120), {"eps": 1e-5})
    assert [t.shape for t in c.inputs] == [(8, 5120), (5120,)] and c.param_dict == {"eps": 1e-5}


# -- the op function ------------------------------------------------------------------------------------------------

def test_op_function_signature_and_results():
    assert list(inspect.signature(ops.rms_norm).parameters) == ["x", "weight", "eps", "residual", "backend", "out"]
    assert inspect.signature(ops.rms_norm).parameters["eps"].default == 1e-6
    assert "rms_norm" in ops.__all__
    rng = np.random.default_rng(5)
    x, w = (_rand(rng, *s).astype(np.float32) for s in ((9, 300), (300,)))
    assert RMS.check(ops.rms_norm(x, w, eps=0.5), [x, w], "f32", {"eps": 0.5}).ok
    assert not RMS.check(ops.rms_norm(x, w), [x, w], "f32", {"eps": 0.5}).ok  # the default eps differs
    with pytest.raises(InvalidArgumentError, match="weight has shape"):
        ops.rms_norm(x, w[:7])


# -- the host C library ---------------------------------------------------------------------------------------------

def _dev(backend, rng, *shape):
    return backend.to_device(_rand(rng, *shape).astype(np.float32))


def test_host_library_on_strided_views(host_backend):
    rng = np.random.default_rng(11)
    x = _rand(rng, 6, 40).astype(np.float32)[:, ::2]  # (6, 20), inner stride 2
    w = _rand(rng, 40).astype(np.float32)[::2]
    out = host_backend.empty(x.shape, "f32")
    host_backend.fill_nan(out)
    host_backend.prepare("rms_norm", [host_backend.to_device(a) for a in (x, w)], out, {"eps": 1e-3})()
    result = RMS.check(host_backend.to_host(out), [x, w], "f32", {"eps": 1e-3})
    assert result.ok, result.message


def test_host_library_refuses_bad_input(host_backend):
    b, rng = host_backend, np.random.default_rng(12)
    x, w = _dev(b, rng, 4, 8), _dev(b, rng, 8)
    out = b.empty((4, 8), "f32")
    with pytest.raises(E.ShapeError, match=r"rms_norm: shape mismatch: weight has shape \(7,\), expected \(8,\)"):
        b.prepare("rms_norm", [x, _dev(b, rng, 7)], out, {})
    with pytest.raises(E.ShapeError, match="rms_norm needs out"):
        b.prepare("rms_norm", [x, w], b.empty((4, 9), "f32"), {})
    with pytest.raises(E.UnsupportedDtypeError, match="weight is f16"):
        b.prepare("rms_norm", [x, b.to_device(np.ones(8, np.float16))], out, {})
    with pytest.raises(E.InvalidArgumentError, match="'eps' must be finite"):  # Python, before the library
        b.prepare("rms_norm", [x, w], out, {"eps": float("nan")})
    desc = b.ffi.new("oprt_rms_norm_descriptor_t *")
    tds = [b._tensor_desc(a, n) for a, n in ((out, "out"), (x, "x"), (w, "weight"))]
    for eps in (-1.0, float("inf")):  # the library's own check
        with pytest.raises(E.ParamError, match=f"rms_norm: eps must be finite and >= 0, got {eps:g}"):
            b.check(b.lib.oprt_create_rms_norm_descriptor(desc, *tds, eps))


def test_host_library_refuses_in_place(host_backend):
    b, rng = host_backend, np.random.default_rng(13)
    x, w = _dev(b, rng, 4, 8), _dev(b, rng, 8)
    launcher = b.prepare("rms_norm", [x, w], b.empty((4, 8), "f32"), {})
    with pytest.raises(E.OverlapError, match="rms_norm: out is input x itself, and rms_norm cannot run in place"):
        b.check(b.lib.oprt_rms_norm(launcher.desc, b.ffi.NULL, 0, b.ffi.cast("void *", x.ptr),
                                    b.ffi.cast("void *", x.ptr), b.ffi.cast("void *", w.ptr), b.ffi.NULL))
    with pytest.raises(E.NullPointerError, match="argument 'weight' is NULL"):
        b.check(b.lib.oprt_rms_norm(launcher.desc, b.ffi.NULL, 0, b.ffi.cast("void *", x.ptr + 4096),
                                    b.ffi.cast("void *", x.ptr), b.ffi.NULL, b.ffi.NULL))


# -- the baselines' implementations ---------------------------------------------------------------------------------

def test_liger_row_refusal():
    assert IMPLS["liger"].case_refusal("rms_norm", (4, 4096), {"eps": 1e-6}) is None


def _liger_module(torch, allocate_with_torch: bool):
    """A module standing for liger_kernel.ops.rms_norm: its Function's forward allocates Y through the module's
    ``torch`` (as Liger's does) or not at all through it, then computes RMSNorm into Y."""
    import types

    mod = types.ModuleType("fake_liger_rms_norm")
    mod.torch = torch

    def apply(x, w, eps):
        rows = x.a.reshape(-1, x.shape[-1])
        y = mod.torch.empty((rows.shape[0], rows.shape[1]), dtype=x.dtype) if allocate_with_torch else \
            NpTensor(np.empty(rows.shape, x.dtype))
        mod.torch.empty(rows.shape[0], dtype=np.float32)  # RSTD: not the output
        y.a[...] = rows / np.sqrt(np.mean(rows * rows, axis=-1, keepdims=True) + eps) * w.a
        return y.view(x.shape)

    function = type("LigerRMSNormFunction", (), {"apply": staticmethod(apply), "__module__": mod.__name__})
    mod.LigerRMSNormFunction = function
    return mod


@pytest.mark.parametrize("into_out", [True, False])
def test_liger_run_writes_into_the_output(monkeypatch, into_out):
    torch = np_torch()
    mod = _liger_module(torch, allocate_with_torch=into_out)
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    rng = np.random.default_rng(7)
    x, w = NpTensor(rng.standard_normal((2, 3, 16)).astype(np.float32)), NpTensor(rng.uniform(0.5, 2, 16).astype(
        np.float32))
    out = NpTensor(np.full((2, 3, 16), np.nan, np.float32))
    run = IMPLS["liger"](mod, [x, w], out, {"eps": 1e-6})
    assert run() == ("liger rms_norm" if into_out else "liger rms_norm + copy")
    assert mod.torch is torch  # put back after the call
    ref = RMS.reference_fn(x.a.astype(np.float64), w.a.astype(np.float64), 1e-6)
    np.testing.assert_allclose(out.a, ref, rtol=1e-5)
    empty = IMPLS["liger"](mod, [x, w], NpTensor(np.empty((0, 16), np.float32)), {"eps": 1e-6})
    assert empty() == "none"


def test_torch_formula_without_f_rms_norm(monkeypatch):
    """torch < 2.4 has no torch.nn.functional.rms_norm: the f32 formula stands in."""
    torch_cpu_backend()  # skips without torch
    import torch

    monkeypatch.delattr(torch.nn.functional, "rms_norm", raising=False)
    for dtype in ("f32", "f16", "bf16"):
        for case in RMS.cases("smoke"):
            run_and_check(torch_cpu_backend(), "rms_norm", case, dtype)
