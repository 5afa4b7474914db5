"""rope (oprt_core.operators.rope): rotary embedding of q and k, two outputs, an i32 / i64 positions input.

The reference against a direct per-element formula, the budget against a wrong sign, swapped pairs and an
off-by-one position, the cases (models, positions in range), bytes and flops, the numpy backend and the host C
library on every smoke and edge case, in place, views of a fused qkv buffer, and bad input at every layer (spec,
ops API, numpy backend, the C plan and the C launch).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gpu_helpers import run_checked

import oprt_core.errors as E
import oprt_core.ops as ops
from oprt_core import cdecl, operators
from oprt_core.device_array import DeviceArray
from oprt_core.dtypes import DTYPES
from oprt_core.errors import InvalidArgumentError
from oprt_core.numpy_backend import NumpyBackend
from oprt_core.operators.rope import ROPE_STYLES, rope_case
from oprt_core.operators.rope import SPEC as ROPE


def direct_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, pos: np.ndarray, style: str) -> np.ndarray:
    """Element by element in Python floats: the definition, with no slicing shared with the reference."""
    t_, h_, d = x.shape
    out = np.empty(x.shape)
    for t in range(t_):
        p = int(pos[t])
        for h in range(h_):
            for i in range(d // 2):
                a, b = (i, i + d // 2) if style == "neox" else (2 * i, 2 * i + 1)
                c, s = float(cos[p, i]), float(sin[p, i])
                x1, x2 = float(x[t, h, a]), float(x[t, h, b])
                out[t, h, a] = x1 * c - x2 * s
                out[t, h, b] = x2 * c + x1 * s
    return out


def _inputs(rng: np.random.Generator, t: int, hq: int, hk: int, d: int, p: int, dtype: str = "f32",
            pos_dtype=np.int64) -> list[np.ndarray]:
    np_dt = DTYPES[dtype].numpy

    def vals(*shape: int) -> np.ndarray:
        v = rng.uniform(-1, 1, shape)
        v[v == 0] = 0.5
        return v.astype(np_dt)

    return [vals(t, hq, d), vals(t, hk, d), vals(p, d // 2), vals(p, d // 2),
            rng.integers(0, p, t).astype(pos_dtype)]


@pytest.mark.parametrize("style", ROPE_STYLES)
@pytest.mark.parametrize("dims", [(1, 1, 1, 2, 1), (5, 3, 2, 8, 7), (4, 2, 1, 64, 9)])
def test_reference_matches_the_direct_formula(style, dims):
    q, k, cos, sin, pos = _inputs(np.random.default_rng(1), *dims)
    qo, ko = ROPE.reference([q, k, cos, sin, pos], {"style": style})
    np.testing.assert_allclose(qo, direct_rope(q, cos, sin, pos, style), rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(ko, direct_rope(k, cos, sin, pos, style), rtol=1e-15, atol=1e-15)
    # a rotation by (cos, sin) of the unit circle keeps each pair's norm
    c = np.cos(np.arange(dims[4] * (dims[3] // 2)).reshape(dims[4], -1))
    s = np.sin(np.arange(dims[4] * (dims[3] // 2)).reshape(dims[4], -1))
    qo = ROPE.reference([q, k, c, s, pos], {"style": style})[0]
    np.testing.assert_allclose(np.sum(qo.astype(np.float64) ** 2, -1), np.sum(q.astype(np.float64) ** 2, -1),
                               rtol=1e-12)


def test_reference_gives_nan_for_a_position_out_of_range():
    q, k, cos, sin, _ = _inputs(np.random.default_rng(2), 3, 2, 1, 4, 5)
    qo, ko = ROPE.reference([q, k, cos, sin, np.array([0, 5, -1])])
    assert np.isfinite(qo[0]).all() and np.isnan(qo[1:]).all() and np.isnan(ko[1:]).all()


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("style", ROPE_STYLES)
def test_budget_catches_a_wrong_sign_swapped_pairs_and_an_off_by_one_position(dtype, style):
    q, k, cos, sin, pos = _inputs(np.random.default_rng(3), 6, 4, 2, 64, 8, dtype)
    pos[:] = np.arange(6)
    ins = [q, k, cos, sin, pos]
    params = {"style": style}
    np_dt = DTYPES[dtype].numpy
    good = tuple(r.astype(np_dt) for r in ROPE.reference(ins, params))
    assert ROPE.check(good, ins, dtype, params).ok
    other = "gptj" if style == "neox" else "neox"
    wrong = {
        "sign": [q, k, cos, -sin, pos],  # rotating the other way
        "pairs": None,
        "position": [q, k, cos, sin, pos + 1],
    }
    for what, bad_ins in wrong.items():
        bad = ROPE.reference(bad_ins, params) if bad_ins is not None else ROPE.reference(ins, {"style": other})
        bad = tuple(r.astype(np_dt) for r in bad)
        result = ROPE.check(bad, ins, dtype, params)
        assert not result.ok, what
        assert not ROPE.check((good[0], bad[1]), ins, dtype, params).ok, what  # k_out is checked on its own
    # x1 and x2 swapped within each pair
    i1, i2 = (slice(0, 32), slice(32, 64)) if style == "neox" else (slice(0, None, 2), slice(1, None, 2))
    swapped = good[0].copy()
    swapped[..., i1], swapped[..., i2] = good[0][..., i2], good[0][..., i1]
    assert not ROPE.check((swapped, good[1]), ins, dtype, params).ok


def test_budget_is_the_f32_products_and_the_dtype_rounding():
    q, k, cos, sin, pos = _inputs(np.random.default_rng(4), 2, 1, 1, 4, 2)
    ins64 = ROPE.inputs64([q, k, cos, sin, pos])
    refs = ROPE.reference([q, k, cos, sin, pos])
    atol, rtol = ROPE.tolerance("bf16", ins64, refs[0], {"style": "neox"}, 0)
    assert rtol == DTYPES["bf16"].eps and atol.shape == q.shape
    x, c, s = q[1, 0].astype(np.float64), cos[pos[1]].astype(np.float64), sin[pos[1]].astype(np.float64)
    want = 2 * DTYPES["f32"].eps * (abs(x[0] * c[0]) + abs(x[2] * s[0]))
    tiny = float(2.0 ** -133)  # bf16's smallest subnormal
    assert math.isclose(atol[1, 0, 0], want + tiny, rel_tol=1e-12)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_make_inputs_draws_positions_in_range(dtype):
    for case in ROPE.cases("smoke") + ROPE.cases("edge"):
        q, k, cos, sin, pos = ROPE.make_inputs(case, dtype, np.random.default_rng(5))
        assert pos.dtype == np.dtype(np.int32 if case.inputs[4].dtype == "i32" else np.int64)
        assert pos.shape == (q.shape[0],) and ((pos >= 0) & (pos < cos.shape[0])).all()
        assert q.dtype == k.dtype == cos.dtype == sin.dtype == DTYPES[dtype].numpy


def test_bytes_and_flops():
    c = rope_case(16, 32, 8, 128, positions=8192)
    t, hq, hk, d = 16, 32, 8, 128
    assert ROPE.bytes_moved(c, "bf16") == (2 * t * (hq + hk) * d + t * d) * 2 + t * 8
    assert ROPE.bytes_moved(rope_case(16, 32, 8, 128, pos_dtype="i32"), "f32") == \
        (2 * t * (hq + hk) * d + t * d) * 4 + t * 4
    assert ROPE.flops(c) == 3 * t * (hq + hk) * d  # 4 products and 2 adds a pair


def test_case_sets():
    models = {c.name: c for c in ROPE.cases("models")}
    llama = models["llama3-8b/rope/4096tok"]
    assert [t.shape for t in llama.inputs] == [(4096, 32, 128), (4096, 8, 128), (8192, 64), (8192, 64), (4096,)]
    assert {"qwen2-7b/rope/1tok", "mistral-7b/rope/16384tok", "gpt-j-6b/rope/512tok"} <= set(models)
    assert models["gpt-j-6b/rope/512tok"].param_dict["style"] == "gptj"
    edge = ROPE.cases("edge")
    assert {c.inputs[0].shape[2] for c in edge} >= {2, 6, 64, 128, 256}
    assert any(c.inputs[0].shape[1] % 2 and c.inputs[1].shape[1] % 2 for c in edge)  # odd head counts
    assert {c.param_dict["style"] for c in edge} == set(ROPE_STYLES)
    assert {c.inputs[4].dtype for c in edge} == {None, "i32"}
    assert ROPE.custom_case((7, 4, 64), {"style": "gptj"}).inputs[1].shape == (7, 4, 64)
    with pytest.raises(InvalidArgumentError, match="a shape is q's \\(tokens, heads, head_dim\\), got 7x64"):
        ROPE.custom_case((7, 64))


def test_style_is_passed_to_c_as_its_index():
    assert cdecl.c_params(ROPE, ROPE.validate_params({"style": "gptj"})) == (1,)
    assert cdecl.c_params(ROPE, ROPE.validate_params({})) == (0,)
    assert "style (int32_t: 0 neox, 1 gptj)" in cdecl.prototypes(ROPE)
    assert " * positions (an index tensor): i64 or i32" in cdecl.prototypes(ROPE)


# -- the ops API and the numpy backend ------------------------------------------------------------------------------

def test_ops_api_out_of_place_and_in_place():
    q, k, cos, sin, pos = _inputs(np.random.default_rng(6), 5, 4, 2, 16, 9, pos_dtype=np.int32)
    want = ROPE.reference([q, k, cos, sin, pos], {"style": "gptj"})
    qo, ko = ops.rope(q, k, cos, sin, pos, style="gptj")
    assert ROPE.check((qo, ko), [q, k, cos, sin, pos], "f32", {"style": "gptj"}).ok
    qi, ki = q.copy(), k.copy()
    result = ops.rope(qi, ki, cos, sin, pos, style="gptj", out=(qi, ki))
    assert result[0] is qi and result[1] is ki
    np.testing.assert_allclose(qi, want[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ki, want[1], rtol=1e-6, atol=1e-6)


def test_ops_api_on_views_of_a_fused_qkv_buffer():
    rng = np.random.default_rng(7)
    t, hq, hk, d = 6, 4, 2, 32
    qkv = rng.uniform(-1, 1, (t, (hq + 2 * hk) * d)).astype(np.float32)
    q = qkv[:, :hq * d].reshape(t, hq, d)  # token stride (hq + 2 hk) d: a view, not a copy
    k = qkv[:, hq * d:(hq + hk) * d].reshape(t, hk, d)
    assert np.shares_memory(q, qkv) and q.strides[0] == (hq + 2 * hk) * d * 4
    before = qkv.copy()
    cos, sin = (rng.uniform(-1, 1, (10, d // 2)).astype(np.float32) for _ in range(2))
    pos = rng.integers(0, 10, t)
    qo, ko = ops.rope(q, k, cos, sin, pos)
    assert ROPE.check((qo, ko), [q, k, cos, sin, pos], "f32").ok
    np.testing.assert_array_equal(qkv, before)  # out of place: the buffer is only read
    # in place over the fused buffer: q's and k's byte spans cross, but their rows share no byte
    want = ROPE.reference([q, k, cos, sin, pos])
    qo, ko = ops.rope(q, k, cos, sin, pos, out=(q, k))
    assert qo is q and ko is k
    assert ROPE.check((q.copy(), k.copy()), [before[:, :hq * d].reshape(t, hq, d),
                                             before[:, hq * d:(hq + hk) * d].reshape(t, hk, d), cos, sin, pos],
                      "f32", ref=want).ok
    np.testing.assert_array_equal(qkv[:, (hq + hk) * d:], before[:, (hq + hk) * d:])  # v untouched
    # a k that takes q's last head: q_out over q would write k's input
    k2 = qkv[:, (hq - 1) * d:(hq - 1 + hk) * d].reshape(t, hk, d)
    with pytest.raises(InvalidArgumentError, match="rope: q_out overlaps input k \\(partial overlap"):
        ops.rope(q, k2, cos, sin, pos, out=(q, k2))


def test_ops_api_and_numpy_backend_refuse_bad_input():
    q, k, cos, sin, pos = _inputs(np.random.default_rng(8), 4, 2, 1, 8, 6)
    bad = {
        "q must have 3 dims \\(tokens, heads, head_dim\\), got shape \\(4, 16\\)": [q.reshape(4, 16), k, cos, sin,
                                                                                     pos],
        "k has shape \\(3, 1, 8\\), expected \\(4, kv_heads, 8\\)": [q, k[:3], cos, sin, pos],
        "head_dim must be even and in \\[2, 256\\], got 7": [q[..., :7], k[..., :7], cos[:, :3], sin[:, :3], pos],
        "head_dim must be even and in \\[2, 256\\], got 258": [np.ones((1, 1, 258), np.float32),
                                                              np.ones((1, 1, 258), np.float32),
                                                              np.ones((1, 129), np.float32),
                                                              np.ones((1, 129), np.float32), np.zeros(1, np.int64)],
        "cos has shape \\(6, 3\\), expected \\(positions, 4\\)": [q, k, cos[:, :3], sin, pos],
        "sin has shape \\(5, 4\\) and cos \\(6, 4\\)": [q, k, cos, sin[:5], pos],
        "positions has shape \\(3,\\), expected \\(4,\\)": [q, k, cos, sin, pos[:3]],
        "cos and sin have no position": [q, k, cos[:0], sin[:0], pos],
    }
    for msg, ins in bad.items():
        with pytest.raises(InvalidArgumentError, match=msg):
            ops.rope(*ins)
    with pytest.raises(InvalidArgumentError, match="style' must be one of 'neox', 'gptj', got 'llama'"):
        ops.rope(q, k, cos, sin, pos, style="llama")
    with pytest.raises(InvalidArgumentError, match="positions must be an array of i64 or i32, got float32"):
        ops.rope(q, k, cos, sin, pos.astype(np.float32))
    with pytest.raises(InvalidArgumentError, match="q must be an array of f32, f16 or bf16, got int64"):
        ops.rope(q.astype(np.int64), k, cos, sin, pos)
    be = operators.equip(NumpyBackend())
    with pytest.raises(InvalidArgumentError, match="rope: positions must be an array of i64 or i32"):
        be.prepare("rope", [q, k, cos, sin, pos.astype(np.float32)], (be.empty(q.shape, "f32"),
                                                                      be.empty(k.shape, "f32")), {})
    with pytest.raises(InvalidArgumentError, match="rope: outputs q_out and k_out share memory"):
        o = be.empty(q.shape, "f32")
        be.prepare("rope", [q, q, cos, sin, pos], (o, o), {})
    with pytest.raises(InvalidArgumentError, match="rope: k_out overlaps input q"):
        ops.rope(q, k, cos, sin, pos, out=(np.empty_like(q), q[:, :1]))


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_numpy_backend_on_every_smoke_and_edge_case(dtype):
    be = operators.equip(NumpyBackend())
    for case in ROPE.cases("smoke") + ROPE.cases("edge"):
        result, _, _ = run_checked(be, ROPE, case, dtype, 11)
        assert result.ok, f"{case}: {result.message}"


# -- the host C library ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", list(DTYPES))
def test_host_library_on_every_smoke_and_edge_case(host_backend, dtype):
    for case in ROPE.cases("smoke") + ROPE.cases("edge"):
        result, _, _ = run_checked(host_backend, ROPE, case, dtype, 12)
        assert result.ok, f"{case}: {result.message}"


@pytest.mark.parametrize("pos_dtype", [np.int64, np.int32])
@pytest.mark.parametrize("style", ROPE_STYLES)
def test_host_library_on_a_fused_qkv_buffer_and_in_place(host_backend, style, pos_dtype):
    b, rng = host_backend, np.random.default_rng(13)
    t, hq, hk, d = 5, 3, 1, 64
    qkv = rng.uniform(-1, 1, (t, (hq + 2 * hk) * d)).astype(np.float16)
    q = qkv[:, :hq * d].reshape(t, hq, d)
    k = qkv[:, hq * d:(hq + hk) * d].reshape(t, hk, d)
    cos, sin = (rng.uniform(-1, 1, (7, d // 2)).astype(np.float16) for _ in range(2))
    pos = rng.integers(0, 7, t).astype(pos_dtype)
    params = {"style": style}
    want = ROPE.reference([q, k, cos, sin, pos], params)
    dqkv = b.to_device(qkv)
    row = (hq + 2 * hk) * d
    dq = DeviceArray(b, dqkv.ptr, (t, hq, d), (row, d, 1), "f16", dqkv)
    dk = DeviceArray(b, dqkv.ptr + hq * d * 2, (t, hk, d), (row, d, 1), "f16", dqkv)
    dcs = [b.to_device(cos), b.to_device(sin), b.to_device(pos)]
    outs = (b.empty(q.shape, "f16"), b.empty(k.shape, "f16"))
    b.prepare("rope", [dq, dk, *dcs], outs, params)()
    assert ROPE.check(tuple(b.to_host(o) for o in outs), [q, k, cos, sin, pos], "f16", params, ref=want).ok
    np.testing.assert_array_equal(b.to_host(dqkv), qkv)  # only read
    # in place over the fused buffer (spans cross, rows share no byte): q_out exactly q, k_out exactly k
    b.prepare("rope", [dq, dk, *dcs], (dq, dk), params)()
    got = b.to_host(dqkv)
    assert ROPE.check((got[:, :hq * d].reshape(t, hq, d), got[:, hq * d:(hq + hk) * d].reshape(t, hk, d)),
                      [q, k, cos, sin, pos], "f16", params, ref=want).ok
    np.testing.assert_array_equal(got[:, (hq + hk) * d:], qkv[:, (hq + hk) * d:])  # v untouched
    # in place: q and k of their own buffers, q_out exactly q and k_out exactly k
    iq, ik = b.to_device(np.ascontiguousarray(q)), b.to_device(np.ascontiguousarray(k))
    b.prepare("rope", [iq, ik, *dcs], (iq, ik), params)()
    assert ROPE.check((b.to_host(iq), b.to_host(ik)), [q, k, cos, sin, pos], "f16", params, ref=want).ok


def test_host_library_nan_for_a_position_out_of_range(host_backend):
    b = host_backend
    q, k, cos, sin, _ = _inputs(np.random.default_rng(14), 3, 2, 1, 4, 5)
    outs = (b.empty(q.shape, "f32"), b.empty(k.shape, "f32"))
    b.prepare("rope", [b.to_device(a) for a in (q, k, cos, sin, np.array([1, 5, -1]))], outs, {})()
    qo, ko = (b.to_host(o) for o in outs)
    assert np.isfinite(qo[0]).all() and np.isnan(qo[1:]).all() and np.isnan(ko[1:]).all()


def test_host_library_refuses_bad_input(host_backend):
    b = host_backend
    q, k, cos, sin, pos = (b.to_device(a) for a in _inputs(np.random.default_rng(15), 4, 2, 1, 8, 6))
    qo, ko = b.empty((4, 2, 8), "f32"), b.empty((4, 1, 8), "f32")
    with pytest.raises(E.UnsupportedDtypeError, match="rope: positions must be an index tensor of i32 or i64, got "
                                                      "f32"):
        b.prepare("rope", [q, k, cos, sin, b.to_device(np.zeros(4, np.float32))], (qo, ko), {})
    with pytest.raises(E.UnsupportedDtypeError, match="tensor 'k' has dtype i64"):
        b.prepare("rope", [q, b.to_device(np.zeros((4, 1, 8), np.int64)), cos, sin, pos], (qo, ko), {})
    desc = b.ffi.new("oprt_rope_descriptor_t *")

    def create(*arrays, style=0):
        names = ("q_out", "k_out", "q", "k", "cos", "sin", "positions")
        tds = [b._tensor_desc(a, n) for a, n in zip(arrays, names)]
        b.check(b.lib.oprt_create_rope_descriptor(desc, *tds, style))

    with pytest.raises(E.ParamError, match="rope: style must be 0 \\(neox\\) or 1 \\(gptj\\), got 2"):
        create(qo, ko, q, k, cos, sin, pos, style=2)
    with pytest.raises(E.ShapeError, match="rope: q must have 3 dims"):
        flat = b.empty((4, 16), "f32")
        create(flat, ko, flat, k, cos, sin, pos)
    with pytest.raises(E.ShapeError, match="rope: shape mismatch: k has shape \\(4, 1, 6\\), expected \\(4, kv_heads, "
                                           "8\\)"):
        k6 = b.empty((4, 1, 6), "f32")
        create(qo, k6, q, k6, cos, sin, pos)
    with pytest.raises(E.ShapeError, match="rope: head_dim must be even and in \\[2, 256\\], got 5"):
        q5, k5 = b.empty((4, 2, 5), "f32"), b.empty((4, 1, 5), "f32")
        create(q5, k5, q5, k5, cos, sin, pos)
    with pytest.raises(E.ShapeError, match="rope: shape mismatch: cos has shape \\(6, 3\\)"):
        c3 = b.empty((6, 3), "f32")
        create(qo, ko, q, k, c3, sin, pos)
    with pytest.raises(E.ShapeError, match="rope: shape mismatch: sin has shape \\(5, 4\\), expected cos' shape"):
        create(qo, ko, q, k, cos, b.empty((5, 4), "f32"), pos)
    with pytest.raises(E.ShapeError, match="rope: shape mismatch: positions has shape \\(3,\\)"):
        create(qo, ko, q, k, cos, sin, b.to_device(np.zeros(3, np.int64)))
    with pytest.raises(E.ShapeError, match="rope: shape mismatch: k_out has shape \\(4, 2, 8\\), expected k's shape"):
        create(qo, qo, q, k, cos, sin, pos)
    with pytest.raises(E.ShapeError, match="rope: cos and sin have no position for 4 tokens"):
        c0 = b.empty((0, 4), "f32")
        create(qo, ko, q, k, c0, c0, pos)
    with pytest.raises(E.OverlapError, match="rope: outputs q_out and k_out share memory"):
        b.prepare("rope", [q, q, cos, sin, pos], (qo, qo), {})()
    with pytest.raises(E.OverlapError, match="rope: q_out is input k itself, and rope cannot write q_out over k"):
        b.prepare("rope", [q, qo, cos, sin, pos], (qo, b.empty((4, 2, 8), "f32")), {})()  # k_out over k is fine
