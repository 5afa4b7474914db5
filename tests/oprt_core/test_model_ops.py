"""The model ops (oprt_core.operators, group "model"): rms_norm, layer_norm, silu_mul.

References against element-by-element float64 formulas (math.fsum), the numpy backend within budget on every
smoke and edge case, budgets that refuse a dropped element, a wrong eps and a few ulps too many, the generated
op functions, and the compiled host library (oprt.h's C entry points): results, validation and aliasing.
"""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import oprt_core
import oprt_core.errors as E
import oprt_core.ops as ops
from oprt_core import cdecl, operators
from oprt_core.dtypes import DTYPES
from oprt_core.errors import InvalidArgumentError
from oprt_core.numpy_backend import NumpyBackend
from oprt_core.operators.cross_entropy import cross_entropy_case
from oprt_core.operators.layer_norm import SPEC as layer_norm_spec
from oprt_core.operators.rms_norm import SPEC as rms_norm_spec
from oprt_core.operators.rms_norm import norm_case
from oprt_core.operators.silu_mul import SPEC as silu_mul_spec
from oprt_core.operators.silu_mul import silu_mul_case
from oprt_core.plugins import get_registry
from oprt_core.spec import as_outputs

RMS, LN, SILU = rms_norm_spec, layer_norm_spec, silu_mul_spec


def _rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    v = rng.uniform(-1.0, 1.0, shape)
    v[v == 0.0] = 0.5  # never zeros
    return v


def _rows(x: np.ndarray):
    return np.ndindex(*x.shape[:-1])


def fsum_rms_norm(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    out = np.empty(x.shape)
    n = x.shape[-1]
    for r in _rows(x):
        row = [float(v) for v in x[r]]
        inv = 1.0 / math.sqrt(math.fsum(v * v for v in row) / n + eps)
        out[r] = [v * inv * float(w[j]) for j, v in enumerate(row)]
    return out


def fsum_layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    out = np.empty(x.shape)
    n = x.shape[-1]
    for r in _rows(x):
        row = [float(v) for v in x[r]]
        mean = math.fsum(row) / n
        var = math.fsum((v - mean) ** 2 for v in row) / n
        inv = 1.0 / math.sqrt(var + eps)
        out[r] = [(v - mean) * inv * float(w[j]) + float(b[j]) for j, v in enumerate(row)]
    return out


def loop_silu_mul(g: np.ndarray, u: np.ndarray) -> np.ndarray:
    flat = [float(a) / (1.0 + math.exp(-float(a))) * float(c) for a, c in zip(g.reshape(-1), u.reshape(-1))]
    return np.array(flat).reshape(g.shape)


# -- references ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1,), (7,), (3, 1001), (2, 3, 17), (5, 1)])
def test_rms_norm_reference_matches_fsum(shape):
    rng = np.random.default_rng(1)
    x, w = _rand(rng, *shape), _rand(rng, shape[-1])
    for eps in (1e-6, 0.1):
        np.testing.assert_allclose(RMS.reference([x, w], {"eps": eps}), fsum_rms_norm(x, w, eps), rtol=1e-13, atol=0)


@pytest.mark.parametrize("shape", [(2,), (7,), (3, 1001), (2, 3, 17)])
def test_layer_norm_reference_matches_fsum(shape):
    rng = np.random.default_rng(2)
    x, w, b = _rand(rng, *shape), _rand(rng, shape[-1]), _rand(rng, shape[-1])
    np.testing.assert_allclose(LN.reference([x, w, b], {"eps": 1e-5}), fsum_layer_norm(x, w, b, 1e-5),
                               rtol=1e-12, atol=1e-14)


def test_references_of_non_contiguous_views():
    rng = np.random.default_rng(3)
    base = _rand(rng, 31, 2 * 65)
    x = base[:, ::2]  # stepped
    xt = _rand(rng, 65, 31).T  # transposed
    w, b = _rand(rng, 2 * 65)[::2], _rand(rng, 65)[::-1]
    np.testing.assert_allclose(RMS.reference([x, w], {"eps": 1e-6}), fsum_rms_norm(x, w, 1e-6), rtol=1e-13)
    np.testing.assert_allclose(LN.reference([xt, w, b], {"eps": 1e-5}), fsum_layer_norm(xt, w, b, 1e-5),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(SILU.reference([x, xt]), loop_silu_mul(x, xt), rtol=1e-14)


def test_closed_forms():
    # rms_norm of a constant row c: sign(c) * |c| / sqrt(c^2 + eps) * w
    x, w = np.full((2, 5), -3.0), np.array([1.0, 2.0, -1.0, 0.5, 4.0])
    np.testing.assert_allclose(RMS.reference([x, w], {"eps": 7.0}), np.broadcast_to(-3.0 / 4.0 * w, (2, 5)),
                               rtol=1e-15)
    # layer_norm of [1, 3] (mean 2, var 1) with eps 3: (+-1) / 2 * w + b
    np.testing.assert_allclose(LN.reference([np.array([[1.0, 3.0]]), np.array([2.0, 4.0]), np.array([0.5, -1.0])],
                                            {"eps": 3.0}), [[-0.5, 1.0]], rtol=1e-15)
    # silu(0.5 ln 3 ... ): sigmoid(ln 3) = 3/4, so silu_mul(ln 3, 2) = 1.5 ln 3
    g = np.array([math.log(3.0), -math.log(3.0)])
    np.testing.assert_allclose(SILU.reference([g, np.array([2.0, 4.0])]),
                               [1.5 * math.log(3.0), -math.log(3.0)], rtol=1e-15)
    # a gate below -709 (exp overflows float64): silu is -0 to the reference, without a warning
    with np.errstate(all="raise"):
        assert SILU.reference([np.array([-800.0]), np.array([1.0])])[0] == 0.0


# -- the numpy backend on every smoke and edge case ----------------------------------------------------------

CASES = [(spec.name, cs, case) for spec in operators.specs("model") for cs in ("smoke", "edge")
         for case in spec.cases(cs)]


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("op,case_set,case", CASES, ids=[f"{o}-{s}-{c.name}" for o, s, c in CASES])
def test_numpy_backend_within_budget(op, case_set, case, dtype):
    spec, be = operators.spec(op), operators.equip(NumpyBackend())
    inputs = spec.make_inputs(case, dtype, np.random.default_rng(hash(case.name) % 1000))
    params = spec.validate_params(case.param_dict, [x.shape for x in inputs])
    out = spec.new_outputs(be, [x.shape for x in inputs], params, dtype)
    for o in as_outputs(out):
        be.fill_nan(o)  # an element left unwritten stays NaN and fails the check
    assert be.supports(op, dtype, case).ok
    be.prepare(op, inputs, out, params)()
    result = spec.check(out, inputs, dtype, params)
    assert result.ok, result.message


def test_every_case_set_and_real_hidden_sizes():
    for spec in operators.specs("model"):
        for cs in ("smoke", "default", "large", "edge", "models"):
            assert spec.cases(cs) and all(c.op == spec.name for c in spec.cases(cs))
        assert max(c.numel for c in spec.cases("smoke")) <= 1 << 12  # smoke stays tiny
        widths = {c.shape[-1] for c in spec.cases("default")}
        assert {4096, 14336} <= widths or spec.name in ("cross_entropy", "rope")  # (rope: head_dims, test_rope.py)
    assert {4096, 5120, 8192, 14336} <= {c.shape[-1] for c in RMS.cases("default")}
    layouts = {t.layout for c in RMS.cases("edge") for t in c.inputs}
    assert layouts == {"contiguous", "transposed", "step2", "offset1", "reversed", "broadcast0"}


# -- budgets: one rounding passes, a wrong algorithm fails ------------------------------------------------------

def _inputs(spec, case, dtype, seed=0):
    return spec.make_inputs(case, dtype, np.random.default_rng(seed))


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("spec", operators.specs("model"), ids=lambda s: s.name)
def test_reference_rounded_once_passes_and_ulps_off_fail(spec, dtype):
    case = spec.cases("smoke")[0]
    inputs = _inputs(spec, case, dtype)
    params = spec.validate_params(case.param_dict)
    refs = as_outputs(spec.reference(inputs, params))
    np_dt = DTYPES[dtype].numpy
    rounded = tuple(r.astype(np_dt) for r in refs)
    assert spec.check(rounded if spec.multi_output else rounded[0], inputs, dtype, params).ok
    # every element of any one output 3 ulps of the dtype (or, for f32, 40 ulps: more than the f32 terms) too large
    k = 40 if dtype == "f32" else 3
    for j, ref in enumerate(refs):
        wrong = (ref * (1 + k * DTYPES[dtype].eps)).astype(np_dt)
        outs = rounded[:j] + (wrong,) + rounded[j + 1:]
        result = spec.check(outs if spec.multi_output else wrong, inputs, dtype, params)
        assert not result.ok
        assert not spec.multi_output or result.message.startswith(f"{spec.output_names[j]}: ")


def test_rms_norm_budget_catches_a_dropped_element_and_a_wrong_eps():
    case = norm_case("rms_norm", (64, 4096))
    x, w = _inputs(RMS, case, "f32")
    x64, w64 = (a.astype(np.float64) for a in (x, w))
    n = x.shape[-1]
    dropped = x64 / np.sqrt(np.sum(x64[:, 1:] ** 2, axis=-1, keepdims=True) / n + 1e-6) * w64
    assert not RMS.check(dropped.astype(np.float32), [x, w], "f32", {"eps": 1e-6}).ok
    over_n_plus_1 = x64 / np.sqrt(np.sum(x64 ** 2, axis=-1, keepdims=True) / (n + 1) + 1e-6) * w64
    assert not RMS.check(over_n_plus_1.astype(np.float32), [x, w], "f32", {"eps": 1e-6}).ok
    wrong_eps = RMS.reference([x, w], {"eps": 1e-5})
    assert not RMS.check(wrong_eps.astype(np.float32), [x, w], "f32", {"eps": 1e-6}).ok
    # in bf16 on a short row a dropped element is outside the budget too
    xs, ws = _inputs(RMS, norm_case("rms_norm", (16, 7)), "bf16")
    xs64, ws64 = (a.astype(np.float32).astype(np.float64) for a in (xs, ws))
    dropped = xs64 / np.sqrt(np.sum(xs64[:, 1:] ** 2, axis=-1, keepdims=True) / 7 + 1e-6) * ws64
    assert not RMS.check(dropped.astype(ml_dtypes.bfloat16), [xs, ws], "bf16", {"eps": 1e-6}).ok


def test_layer_norm_budget_catches_a_dropped_element_a_wrong_eps_and_no_mean():
    case = norm_case("layer_norm", (64, 4096))
    x, w, b = _inputs(LN, case, "f32")
    x64, w64, b64 = (a.astype(np.float64) for a in (x, w, b))
    p = {"eps": 1e-5}
    dropped = LN.reference([x[:, 1:], w[1:], b[1:]], p)  # statistics over n - 1 elements
    wrong = np.concatenate([x64[:, :1], dropped], axis=-1)
    wrong[:, 0] = LN.reference([x, w, b], p)[:, 0]
    assert not LN.check(wrong.astype(np.float32), [x, w, b], "f32", p).ok
    assert not LN.check(LN.reference([x, w, b], {"eps": 1e-4}).astype(np.float32), [x, w, b], "f32", p).ok
    rms_like = RMS.reference([x, w], p) + b64  # the mean not subtracted
    assert not LN.check(rms_like.astype(np.float32), [x, w, b], "f32", p).ok


def test_silu_mul_budget_catches_a_swapped_gate():
    case = silu_mul_case((16, 1000))
    g, u = _inputs(SILU, case, "bf16")
    swapped = SILU.reference([u, g]).astype(ml_dtypes.bfloat16)
    assert not SILU.check(swapped, [g, u], "bf16").ok


def test_packed_silu_mul_through_views():
    rng = np.random.default_rng(4)
    t = _rand(rng, 6, 2 * 33).astype(np.float32)
    got = ops.silu_mul(t[..., :33], t[..., 33:])
    assert got.shape == (6, 33)
    assert SILU.check(got, [t[..., :33], t[..., 33:]], "f32").ok


# -- shapes, params, counts -----------------------------------------------------------------------------------

@pytest.mark.parametrize("spec,shapes,params,match", [
    (RMS, [(4, 8), (7,)], {}, r"weight has shape \(7,\), expected \(8,\)"),
    (RMS, [(), (1,)], {}, "at least 1 dim"),
    (RMS, [(4, 8), (8,)], {"eps": -1.0}, "eps must be >= 0"),
    (LN, [(4, 8), (8,), (4,)], {}, r"bias has shape \(4,\), expected \(8,\)"),
    (SILU, [(4, 8), (4, 9)], {}, "gate has shape"),
])
def test_bad_shapes_and_params_are_refused(spec, shapes, params, match):
    with pytest.raises(InvalidArgumentError, match=match):
        spec.output_shape(shapes, params)


def test_bytes_and_flops():
    c = norm_case("rms_norm", (3, 4096))
    assert RMS.bytes_moved(c, "bf16") == (2 * 3 * 4096 + 4096) * 2
    assert RMS.flops(c) == 4 * 3 * 4096 + 3 * 3
    c = norm_case("layer_norm", (3, 4096))
    assert LN.bytes_moved(c, "f32") == (2 * 3 * 4096 + 2 * 4096) * 4
    assert LN.flops(c) == 7 * 3 * 4096 + 4 * 3
    c = silu_mul_case((5, 7))
    assert SILU.bytes_moved(c, "f16") == 3 * 35 * 2 and SILU.flops(c) == 5 * 35


def test_custom_case():
    c = RMS.custom_case((8, 5120), {"eps": 1e-5})
    assert [t.shape for t in c.inputs] == [(8, 5120), (5120,)] and c.param_dict == {"eps": 1e-5}
    assert [t.shape for t in LN.custom_case((8, 64)).inputs] == [(8, 64), (64,), (64,)]
    assert [t.shape for t in SILU.custom_case((8, 64)).inputs] == [(8, 64), (8, 64)]


# -- the op functions ----------------------------------------------------------------------------------------------

def test_op_functions_signatures_and_results():
    assert list(inspect.signature(ops.rms_norm).parameters) == ["x", "weight", "eps", "residual", "backend", "out"]
    assert list(inspect.signature(ops.layer_norm).parameters) == ["x", "weight", "bias", "eps", "backend", "out"]
    assert list(inspect.signature(ops.silu_mul).parameters) == ["gate", "up", "backend", "out"]
    assert inspect.signature(ops.rms_norm).parameters["eps"].default == 1e-6
    assert inspect.signature(ops.layer_norm).parameters["eps"].default == 1e-5
    assert {"rms_norm", "layer_norm", "silu_mul"} <= set(ops.__all__)
    rng = np.random.default_rng(5)
    x, w, b = (_rand(rng, *s).astype(np.float32) for s in ((9, 300), (300,), (300,)))
    assert RMS.check(ops.rms_norm(x, w, eps=0.5), [x, w], "f32", {"eps": 0.5}).ok
    assert not RMS.check(ops.rms_norm(x, w), [x, w], "f32", {"eps": 0.5}).ok  # the default eps differs
    assert LN.check(ops.layer_norm(x, w, b), [x, w, b], "f32", {"eps": 1e-5}).ok
    out = np.empty_like(x)
    assert ops.silu_mul(x, x[::-1], out=out) is out and SILU.check(out, [x, x[::-1]], "f32").ok
    with pytest.raises(InvalidArgumentError, match="weight has shape"):
        ops.rms_norm(x, w[:7])


def test_registered_with_the_built_in_ops_and_declared_in_oprt_h():
    reg = get_registry()
    header = (Path(oprt_core.__file__).parent / "include" / "oprt.h").read_text()
    entry = (Path(oprt_core.__file__).parent / "include" / "oprt_entry.h").read_text()
    for spec in operators.specs("model"):
        assert reg.get_op(spec.name) is spec and spec.has_c_abi
        assert cdecl.prototypes(spec) in header
        assert cdecl.entry_macro(spec) in entry
    assert not set(operators.names("model")) & set(operators.names("core"))
    names = [s.name for s in cdecl.c_abi_ops()]  # the core ops, the model ops, then the compute-bound ops
    core, model = operators.names("core"), operators.names("model")
    assert tuple(names[len(core):len(core) + len(model)]) == model


# -- the host C library: the plans' validation and the generated entry points' checks ------------------------------

def _dev(backend, rng, *shape):
    return backend.to_device(_rand(rng, *shape).astype(np.float32))


def test_host_library_runs_them_on_strided_views(host_backend):
    rng = np.random.default_rng(11)
    x = _rand(rng, 6, 40).astype(np.float32)[:, ::2]  # (6, 20), inner stride 2
    w, b = (_rand(rng, 40).astype(np.float32)[::2] for _ in range(2))
    for op, inputs, params in (("rms_norm", [x, w], {"eps": 1e-3}), ("layer_norm", [x, w, b], {"eps": 1e-3}),
                               ("silu_mul", [x, x[::-1]], {})):
        out = host_backend.empty(x.shape, "f32")
        host_backend.fill_nan(out)
        host_backend.prepare(op, [host_backend.to_device(a) for a in inputs], out, params)()
        result = operators.spec(op).check(host_backend.to_host(out), inputs, "f32", params)
        assert result.ok, (op, result.message)


def test_host_library_refuses_bad_input(host_backend):
    b, rng = host_backend, np.random.default_rng(12)
    x, w = _dev(b, rng, 4, 8), _dev(b, rng, 8)
    out = b.empty((4, 8), "f32")
    with pytest.raises(E.ShapeError, match=r"rms_norm: shape mismatch: weight has shape \(7,\), expected \(8,\)"):
        b.prepare("rms_norm", [x, _dev(b, rng, 7)], out, {})
    with pytest.raises(E.ShapeError, match="layer_norm: shape mismatch: bias has shape"):
        b.prepare("layer_norm", [x, w, _dev(b, rng, 4, 8)], out, {})
    with pytest.raises(E.ShapeError, match="rms_norm needs out"):
        b.prepare("rms_norm", [x, w], b.empty((4, 9), "f32"), {})
    with pytest.raises(E.ShapeError, match="silu_mul needs up"):
        b.prepare("silu_mul", [x, _dev(b, rng, 1, 8)], out, {})
    with pytest.raises(E.UnsupportedDtypeError, match="weight is f16"):
        b.prepare("rms_norm", [x, b.to_device(np.ones(8, np.float16))], out, {})
    with pytest.raises(E.InvalidArgumentError, match="'eps' must be finite"):  # Python, before the library
        b.prepare("rms_norm", [x, w], out, {"eps": float("nan")})
    desc = b.ffi.new("oprt_rms_norm_descriptor_t *")
    tds = [b._tensor_desc(a, n) for a, n in ((out, "out"), (x, "x"), (w, "weight"))]
    for eps in (-1.0, float("inf")):  # the library's own check
        with pytest.raises(E.ParamError, match=f"rms_norm: eps must be finite and >= 0, got {eps:g}"):
            b.check(b.lib.oprt_create_rms_norm_descriptor(desc, *tds, eps))


def test_host_library_aliasing_follows_the_declarations(host_backend):
    b, rng = host_backend, np.random.default_rng(13)
    g = b.to_device(_rand(rng, 4, 8).astype(np.float32))
    u = b.to_device(_rand(rng, 4, 8).astype(np.float32))
    want = _silu_mul_f64(b.to_host(g), b.to_host(u))
    b.prepare("silu_mul", [g, u], g, {})()  # in place on gate: allowed by the declaration
    assert np.allclose(b.to_host(g), want, rtol=1e-6, atol=1e-7)
    x, w = _dev(b, rng, 4, 8), _dev(b, rng, 8)
    launcher = b.prepare("rms_norm", [x, w], b.empty((4, 8), "f32"), {})
    with pytest.raises(E.OverlapError, match="rms_norm: out is input x itself, and rms_norm cannot run in place"):
        b.check(b.lib.oprt_rms_norm(launcher.desc, b.ffi.NULL, 0, b.ffi.cast("void *", x.ptr),
                                    b.ffi.cast("void *", x.ptr), b.ffi.cast("void *", w.ptr), b.ffi.NULL))
    with pytest.raises(E.NullPointerError, match="argument 'weight' is NULL"):
        b.check(b.lib.oprt_rms_norm(launcher.desc, b.ffi.NULL, 0, b.ffi.cast("void *", x.ptr + 4096),
                                    b.ffi.cast("void *", x.ptr), b.ffi.NULL, b.ffi.NULL))


def _silu_mul_f64(g: np.ndarray, u: np.ndarray) -> np.ndarray:
    g64 = g.astype(np.float64)
    return g64 / (1 + np.exp(-g64)) * u


# -- fuzzing: the host library against the references on random shapes, layouts, eps and dtypes ----------------------

from gpu_helpers import run_checked  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from oprt_core.spec import LAYOUTS  # noqa: E402


@st.composite
def _model_op_case(draw):
    op = draw(st.sampled_from(sorted(set(operators.names("model")) - {"rope"})))  # rope's cases: test_rope.py
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 70), min_size=ndim, max_size=ndim)))
    layouts = [lay for lay in LAYOUTS if lay != "transposed" or ndim >= 2]
    layout = draw(st.sampled_from(layouts))
    if op == "silu_mul":
        case = silu_mul_case(shape, layout, draw(st.sampled_from(layouts)))
    elif op == "cross_entropy":
        target_layouts = ["contiguous", "step2", "reversed", "offset1"] + (["broadcast0"] if ndim >= 2 else [])
        case = cross_entropy_case(shape, layout, draw(st.sampled_from(target_layouts)),
                                  draw(st.sampled_from(["none", "mean"])), draw(st.sampled_from([-100, 0, 3])))
    else:
        eps = draw(st.sampled_from([0.0, 1e-6, 1e-3, 0.5]))
        case = norm_case(op, shape, layout if layout != "broadcast0" or ndim >= 2 else "contiguous", eps,
                         draw(st.sampled_from(["contiguous", "step2", "reversed", "offset1"])))
    return case, draw(st.sampled_from(sorted(DTYPES))), draw(st.integers(0, 2**32 - 1))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=_model_op_case())
def test_fuzz_host_library_within_budget(host_backend, drawn):
    """Any shape, layout (including broadcast, reversed and offset views) and eps: the host C library's plans and
    loops land within the op's budget of the float64 reference, and out is never touched outside its shape."""
    case, dtype, seed = drawn
    result, _, _ = run_checked(host_backend, operators.spec(case.op), case, dtype, seed)
    assert result.ok, (case, dtype, result.message)
