"""matmul (oprt_core.operators.matmul): the reference against element-by-element float64 sums (math.fsum), a budget
that passes a sequential f32 accumulation and refuses one wrong product term, a result 4 ulps off or a beta * c
term left out, the shape rule's errors (c's among them), bytes and flops, the numpy backend on every smoke and
edge case (large and models with OPRT_TEST_LARGE=1), the generated op function with and without c (in place over
c too), and the C path of the compiled host library (oprt_plan_matmul and a sequential f32 loop) against the
reference, with its refusals of bad input.

With fp8 e4m3 inputs and a bf16 output: the mixed output dtype through the spec (new_outputs, make_inputs, check,
bytes), the budget (a simulated fp8 tensor-core accumulation passes, a wrong product term fails), Python's and C's
refusals of every other mix, the numpy backend and the compiled host library (its e4m3 decode of every code) against
the float64 reference."""

from __future__ import annotations

import inspect
import math
import os

import ml_dtypes
import numpy as np
import pytest
from baseline_helpers import run_and_check
from gpu_helpers import run_checked

import oprt_core.errors as E
import oprt_core.ops as ops
from oprt_core import cdecl, operators
from oprt_core.device_array import DeviceArray
from oprt_core.dtypes import DTYPES, get_dtype
from oprt_core.errors import InvalidArgumentError, UnsupportedCase
from oprt_core.numpy_backend import NumpyBackend
from oprt_core.operators.matmul import EPS_FP8_ACC, matmul_atol_factor, matmul_case, matmul_dims
from oprt_core.operators.matmul import SPEC as matmul_spec
from oprt_core.plugins import get_registry
from oprt_core.spec import TensorCase, to_float64
from oprt_core.validate import check_call

S = matmul_spec
E4M3 = ml_dtypes.float8_e4m3fn
BF16 = ml_dtypes.bfloat16
RUN_LARGE = os.environ.get("OPRT_TEST_LARGE") == "1"


def _rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    v = rng.uniform(-1.0, 1.0, shape)
    v[v == 0.0] = 0.5  # never zeros
    return v


def fsum_matmul(a: np.ndarray, b: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """alpha * a @ b by loops, each output element an exactly rounded math.fsum of its K products."""
    a3 = a if a.ndim == 3 else a[None]
    b3 = b if b.ndim == 3 else b[None]
    out = np.empty((a3.shape[0], a3.shape[1], b3.shape[2]))
    for p in range(a3.shape[0]):
        for i in range(a3.shape[1]):
            for j in range(b3.shape[2]):
                out[p, i, j] = alpha * math.fsum(float(a3[p, i, k]) * float(b3[p, k, j]) for k in range(a3.shape[2]))
    return out if a.ndim == 3 else out[0]


def _sequential_f32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A kernel's accumulation at its plainest: K f32 products added one after another in f32."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k in range(a.shape[1]):
        acc += np.multiply.outer(a32[:, k], b32[k, :])
    return acc


# -- the reference ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("a_shape", "b_shape", "alpha"), [
    ((1, 1), (1, 1), 1.0), ((5, 7), (7, 3), 1.0), ((4, 33), (33, 6), -2.5), ((3, 4, 9), (3, 9, 5), 0.5),
    ((6, 1), (1, 4), 1.0),
])
def test_reference_matches_fsum(a_shape, b_shape, alpha):
    rng = np.random.default_rng(1)
    a, b = _rand(rng, *a_shape), _rand(rng, *b_shape)
    ref = S.reference([a, b], {"alpha": alpha})
    np.testing.assert_allclose(ref, fsum_matmul(a, b, alpha), rtol=1e-13, atol=1e-15)


def test_reference_of_transposed_views_and_16_bit_inputs():
    """The reference reads views (a weight W as W.T) and 16-bit inputs by their values, exactly."""
    rng = np.random.default_rng(2)
    w = _rand(rng, 6, 11).astype(ml_dtypes.bfloat16)  # (N, K), used as W.T
    x = _rand(rng, 4, 11).astype(ml_dtypes.bfloat16)
    ref = S.reference([x, w.T])
    want = fsum_matmul(x.astype(np.float64), w.astype(np.float64).T)
    np.testing.assert_allclose(ref, want, rtol=1e-13)
    assert ref.shape == (4, 6)


def test_empty_sum_is_exactly_zero():
    a, b = np.ones((3, 0), np.float32), np.ones((0, 4), np.float32)
    assert np.array_equal(S.reference([a, b]), np.zeros((3, 4)))
    assert S.check(np.zeros((3, 4), np.float32), [a, b], "f32").ok
    # S = 0: no atol, no relative slack around a zero reference
    assert not S.check(np.full((3, 4), 1e-30, np.float32), [a, b], "f32").ok


# -- the budget ---------------------------------------------------------------------------------------------

def _case_inputs(m: int, n: int, k: int, dtype: str, seed: int = 0) -> list[np.ndarray]:
    return S.make_inputs(matmul_case(m, n, k), dtype, np.random.default_rng(seed))


@pytest.mark.parametrize("k", [1, 64, 1000, 4096])
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_sequential_f32_accumulation_is_within_budget(k, dtype):
    """The plainest kernel (a sequential f32 loop, one rounding to the dtype) passes, with room to spare."""
    a, b = _case_inputs(8, 8, k, dtype)
    out = _sequential_f32(a, b).astype(DTYPES[dtype].numpy)
    res = S.check(out, [a, b], dtype)
    assert res.ok, res.message
    a64, b64 = to_float64(a), to_float64(b)
    ref = a64 @ b64
    atol, rtol = S.tolerance(dtype, [a64, b64], ref, S.validate_params({}))
    err = np.abs(to_float64(out) - ref)
    assert (err <= 0.6 * (atol + rtol * np.abs(ref))).all()


def test_budget_grows_with_k():
    f = [matmul_atol_factor(k, DTYPES["f32"]) for k in (1, 64, 4096, 16384)]
    assert f == sorted(f) and f[0] < f[-1] / 50
    assert matmul_atol_factor(256, DTYPES["f32"], allow_tf32=True) > matmul_atol_factor(256, DTYPES["f32"]) + 9e-4
    # TF32 concerns f32 inputs only
    assert matmul_atol_factor(256, DTYPES["f16"], allow_tf32=True) == matmul_atol_factor(256, DTYPES["f16"])


@pytest.mark.parametrize(("k", "dtype"), [(64, "f32"), (4096, "f32"), (16000, "f32"), (256, "f16"), (256, "bf16")])
def test_one_wrong_product_term_fails(k, dtype):
    """An output element missing one product a_ik * b_kj (of magnitude >= 0.25), or counting it twice, is refused,
    from K = 64 up to K = 16000 in f32."""
    m = n = 2 if k > 1000 else 8
    a, b = _case_inputs(m, n, k, dtype, seed=3)
    _assert_one_wrong_term_fails(a, b, dtype, 0.25, lambda x: x.astype(DTYPES[dtype].numpy))


def _assert_one_wrong_term_fails(a, b, dtype: str, magnitude: float, to_out) -> None:
    """Output (1, 1) missing one product a_1k * b_k1 of at least ``magnitude``, or counting it twice, fails the
    check (``to_out``: float64 -> the output dtype's array); the correctly rounded result passes."""
    a64, b64 = to_float64(a), to_float64(b)
    exact = a64 @ b64
    i, j = 1, 1
    terms = a64[i, :] * b64[:, j]
    kk = int(np.argmax(np.abs(terms) >= magnitude))
    assert abs(terms[kk]) >= magnitude
    for wrong in (exact[i, j] - terms[kk], exact[i, j] + terms[kk]):
        out = exact.copy()
        out[i, j] = wrong
        res = S.check(to_out(out), [a, b], dtype)
        assert not res.ok and f"worst at ({i}, {j})" in res.message
    assert S.check(to_out(exact), [a, b], dtype).ok


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_four_ulps_too_many_fail_in_16_bit(dtype):
    """The result rounded once, then moved 4 ulps away from zero in the dtype, fails (the accumulation's share of
    the budget is far below an ulp of f16 / bf16 at K = 256)."""
    a, b = _case_inputs(16, 16, 256, dtype, seed=4)
    exact = to_float64(a) @ to_float64(b)
    npdt = DTYPES[dtype].numpy
    rounded = exact.astype(np.float32).astype(npdt)
    assert S.check(rounded, [a, b], dtype).ok
    bits = rounded.view(np.uint16).copy()
    off = (bits + 4).view(npdt)  # +4 in the magnitude bits: 4 ulps away from zero (no value here is near inf)
    res = S.check(off, [a, b], dtype)
    assert not res.ok
    n_bad = int(res.message.split(" of ")[0])
    assert n_bad > 0.9 * off.size  # nearly every element: what escapes sits where |ref| is tiny


def test_tf32_rounding_passes_only_when_allowed():
    """f32 inputs rounded to TF32 (10 mantissa bits) before the products: within budget with allow_tf32, not
    without."""
    a, b = _case_inputs(16, 16, 512, "f32", seed=5)

    def tf32(x: np.ndarray) -> np.ndarray:
        bits = x.view(np.uint32)
        return ((bits + 0x1000) & np.uint32(0xFFFFE000)).view(np.float32)  # round to nearest at bit 13

    out = (to_float64(tf32(a)) @ to_float64(tf32(b))).astype(np.float32)
    assert not S.check(out, [a, b], "f32").ok
    assert S.check(out, [a, b], "f32", {"allow_tf32": True}).ok


# -- shapes, params, bytes and flops --------------------------------------------------------------------------

@pytest.mark.parametrize(("a", "b", "want"), [
    ((4, 5), (5, 6), (4, 6)), ((3, 4, 5), (3, 5, 6), (3, 4, 6)), ((0, 5), (5, 6), (0, 6)), ((4, 0), (0, 6), (4, 6)),
])
def test_output_shape(a, b, want):
    assert S.output_shape([a, b], {}) == want


@pytest.mark.parametrize(("a", "b", "fragment"), [
    ((4, 5), (6, 7), "inner dims mismatch: a of shape (4, 5) has K = 5 columns but b of shape (6, 7) has 6 rows"),
    ((2, 4, 5), (3, 5, 6), "batch mismatch: a of shape (2, 4, 5) has batch 2 but b of shape (3, 5, 6) has 3"),
    ((4, 5), (2, 5, 6), "same rank"),
    ((5,), (5, 6), "must be 2-D (M, K) and (K, N), or 3-D"),
    ((1, 2, 4, 5), (1, 2, 5, 6), "must be 2-D (M, K) and (K, N), or 3-D"),
])
def test_shape_errors(a, b, fragment):
    with pytest.raises(InvalidArgumentError) as info:
        S.output_shape([a, b], {})
    assert fragment in str(info.value) and str(info.value).startswith("matmul: ")
    with pytest.raises(InvalidArgumentError, match="matmul: "):
        ops.matmul(np.ones(a, np.float32), np.ones(b, np.float32))


def test_wrong_out_shape_and_beta_are_refused():
    with pytest.raises(InvalidArgumentError, match=r"out has shape \(4, 5\), expected \(4, 6\)"):
        check_call(S, [(4, 5), (5, 6)], ["f32", "f32"], (4, 5), "f32", {})
    with pytest.raises(InvalidArgumentError, match=r"matmul: beta is 1.0 but c is not given: .* needs c, of out's "
                                                   r"shape \(pass c, or beta=0.0\)"):
        ops.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), beta=1.0)
    with pytest.raises(InvalidArgumentError, match="matmul: param 'beta' must be finite"):
        ops.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), np.ones((2, 2), np.float32),
                   beta=math.nan)
    with pytest.raises(InvalidArgumentError, match="dtype mismatch"):
        ops.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float16))
    with pytest.raises(InvalidArgumentError, match="allow_tf32"):
        ops.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), allow_tf32=1)


def test_bytes_and_flops():
    c = matmul_case(4, 6, 5, batch=3)
    assert matmul_dims([t.shape for t in c.inputs]) == (3, 4, 6, 5)
    assert S.flops(c) == 2 * 3 * 4 * 6 * 5
    assert S.bytes_moved(c, "bf16") == 3 * (4 * 5 + 5 * 6 + 4 * 6) * 2
    assert S.bytes_moved(matmul_case(4096, 4096, 4096), "f32") == 3 * 4096 * 4096 * 4


def test_bytes_and_flops_count_c_where_it_is_read():
    c = matmul_case(4, 6, 5, batch=3, beta=0.5)
    assert [t.shape for t in c.inputs][2] == (3, 4, 6)
    assert S.flops(c) == 2 * 3 * 4 * 6 * 5 + 2 * 3 * 4 * 6  # beta * c and its add
    assert S.bytes_moved(c, "f16") == 3 * (4 * 5 + 5 * 6 + 2 * 4 * 6) * 2  # c read, out written
    unread = matmul_case(4, 6, 5, batch=3, c_layout="contiguous")  # c given, beta 0: not read
    assert len(unread.inputs) == 3
    assert S.flops(unread) == 2 * 3 * 4 * 6 * 5 and S.bytes_moved(unread, "f16") == 3 * (4 * 5 + 5 * 6 + 4 * 6) * 2


def test_custom_case_is_a_times_its_transpose_shape():
    c = S.custom_case((64, 32))
    assert [t.shape for t in c.inputs] == [(64, 32), (32, 64)] and c.name == "64x64x32"
    c = S.custom_case((64, 32), {"beta": 0.5})  # --shape 64x32 --param beta=0.5: c of out's shape
    assert [t.shape for t in c.inputs] == [(64, 32), (32, 64), (64, 64)] and c.param_dict["beta"] == 0.5
    c = S.custom_case((2, 8, 16), {"alpha": 2.0})
    assert [t.shape for t in c.inputs] == [(2, 8, 16), (2, 16, 8)] and c.param_dict["alpha"] == 2.0
    with pytest.raises(InvalidArgumentError, match="--shape gives a's shape, MxK or BxMxK"):
        S.custom_case((64,))


def test_case_sets():
    assert set(S.case_sets) == {"smoke", "default", "large", "edge", "models"}
    squares = {c.inputs[0].shape[0] for c in S.cases("default") if c.name.count("x") == 2 and
               len(set(c.name.split("x"))) == 1}
    assert squares == {256, 512, 1024, 2048, 4096}
    assert max(c.inputs[0].shape[0] for c in S.cases("large")) == 16384
    edge = S.cases("edge")
    layouts = {t.layout for c in edge for t in c.inputs}
    assert {"transposed", "step2", "offset1", "reversed"} <= layouts
    assert any(c.inputs[0].shape[-1] == 1 for c in edge)  # K = 1
    assert any(len(c.inputs[0].shape) == 3 and c.inputs[0].shape[0] == 1 for c in edge)  # batch 1
    models = S.cases("models")
    names = {c.name for c in models}
    for gemm in ("qkv", "out-proj", "mlp-up", "mlp-down"):
        assert f"llama3-8b/{gemm}/1tok" in names and f"llama3-8b/{gemm}/16384tok" in names
    qkv = next(c for c in models if c.name == "llama3-8b/qkv/2048tok")
    # 4096 hidden; 32 query heads + 2 x 8 key/value heads of 128: N = 6144; the weight is a transposed view
    assert [t.shape for t in qkv.inputs] == [(2048, 4096), (4096, 6144)] and qkv.inputs[1].layout == "transposed"
    assert {c.inputs[0].shape[0] for c in models} == {1, 16, 64, 512, 2048, 16384}
    for case_set in ("smoke", "default", "edge"):  # each has cases with c, read (beta != 0)
        assert any(len(c.inputs) == 3 and c.param_dict.get("beta", 0) != 0 for c in S.cases(case_set)), case_set
    with_c = [c for c in edge if len(c.inputs) == 3]
    assert {"transposed", "step2", "reversed", "offset1"} <= {c.inputs[2].layout for c in with_c}
    assert any(c.param_dict.get("beta", 0.0) == 0.0 for c in with_c)  # given and not read
    assert any(c.inputs[0].shape[-1] == 0 for c in with_c)  # K = 0: out = beta * c


# -- the numpy backend ------------------------------------------------------------------------------------------

def _cases():
    for case_set in ("smoke", "edge", "default", "large", "models"):
        heavy = case_set not in ("smoke", "edge")
        marks = [pytest.mark.skip(reason=f"{case_set} case set: set OPRT_TEST_LARGE=1 to run it")] \
            if heavy and not RUN_LARGE else []
        for case in S.cases(case_set):
            for dtype in S.dtypes:
                yield pytest.param(case_set, case, dtype, marks=marks, id=f"{case_set}-{case.name}-{dtype}")


@pytest.mark.parametrize(("case_set", "case", "dtype"), list(_cases()))
def test_numpy_backend_every_case(case_set, case, dtype):
    be = operators.equip(NumpyBackend())
    assert be.supports("matmul", dtype, case).ok
    inputs = S.make_inputs(case, dtype, np.random.default_rng(7))
    out = be.empty(S.output_shape([x.shape for x in inputs], case.param_dict), S.output_dtype(dtype).name)
    be.fill_nan(out)
    be.prepare("matmul", inputs, out, case.param_dict)()
    res = S.check(be.to_host(out), inputs, dtype, case.param_dict)
    assert res.ok, f"{case}/{dtype}: {res.message}"


def test_op_function():
    params = inspect.signature(ops.matmul).parameters
    assert list(params)[:6] == ["a", "b", "c", "alpha", "beta", "allow_tf32"] and params["c"].default is None
    assert "c: None, or an array of ``a``'s dtype" in ops.matmul.__doc__
    assert "``out`` may be ``c`` itself" in ops.matmul.__doc__
    rng = np.random.default_rng(8)
    a, b = _rand(rng, 3, 5, 7).astype(np.float16), _rand(rng, 3, 7, 4).astype(np.float16)
    got = ops.matmul(a, b, alpha=0.5)
    assert got.dtype == np.float16 and got.shape == (3, 5, 4)
    assert S.check(got, [a, b], "f16", {"alpha": 0.5}).ok
    out = np.empty((5, 4), np.float32)
    a2, w = _rand(rng, 5, 7).astype(np.float32), _rand(rng, 4, 7).astype(np.float32)
    assert ops.matmul(a2, w.T, out=out) is out and S.check(out, [a2, w.T], "f32").ok


# -- c and beta: out = alpha * a @ b + beta * c -----------------------------------------------------------------

@pytest.mark.parametrize(("a_shape", "b_shape", "alpha", "beta"), [
    ((5, 7), (7, 3), 1.0, 1.0), ((4, 33), (33, 6), -2.5, 0.5), ((3, 4, 9), (3, 9, 5), 0.5, -2.0),
    ((4, 0), (0, 3), 1.0, 3.0),  # K = 0: beta * c exactly
])
def test_reference_with_c_matches_fsum(a_shape, b_shape, alpha, beta):
    rng = np.random.default_rng(31)
    a, b = _rand(rng, *a_shape), _rand(rng, *b_shape)
    c = _rand(rng, *a_shape[:-1], b_shape[-1])
    ref = S.reference([a, b, c], {"alpha": alpha, "beta": beta})
    np.testing.assert_allclose(ref, fsum_matmul(a, b, alpha) + beta * c, rtol=1e-13, atol=1e-15)
    assert not np.allclose(ref, fsum_matmul(a, b, alpha))  # c counts


def test_c_with_beta_zero_is_not_read():
    """BLAS's rule: with beta == 0, c is not read: a NaN or inf there does not reach the reference or the result."""
    rng = np.random.default_rng(32)
    a, b = _rand(rng, 4, 6).astype(np.float32), _rand(rng, 6, 5).astype(np.float32)
    c = np.full((4, 5), np.nan, np.float32)
    c[0, 0] = np.inf
    ref = S.reference([a, b, c], {"beta": 0.0})
    assert np.isfinite(ref).all()
    np.testing.assert_allclose(ref, S.reference([a, b]), rtol=0, atol=0)
    got = ops.matmul(a, b, c)
    assert np.isfinite(got).all() and S.check(got, [a, b, c], "f32").ok


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_sequential_f32_with_beta_c_is_within_budget_and_c_left_out_is_not(dtype):
    """A plain kernel (sequential f32 sum, alpha * acc + beta * c in f32, one rounding) passes; the same result
    without the beta * c term, or with it twice, fails."""
    case = matmul_case(8, 8, 1000, alpha=0.75, beta=-1.5)
    a, b, c = S.make_inputs(case, dtype, np.random.default_rng(33))
    params = case.param_dict
    acc = _sequential_f32(a, b)
    c32 = c.astype(np.float32)
    good = (np.float32(0.75) * acc + np.float32(-1.5) * c32).astype(DTYPES[dtype].numpy)
    res = S.check(good, [a, b, c], dtype, params)
    assert res.ok, res.message
    for bad in (np.float32(0.75) * acc, np.float32(0.75) * acc + np.float32(-3.0) * c32):
        assert not S.check(bad.astype(DTYPES[dtype].numpy), [a, b, c], dtype, params).ok


def test_budget_widens_by_eps_of_beta_c():
    rng = np.random.default_rng(34)
    a, b, c = _rand(rng, 3, 4), _rand(rng, 4, 5), _rand(rng, 3, 5)
    params = S.validate_params({"beta": 4.0}, [a.shape, b.shape, c.shape])
    ref = S.reference([a, b, c], params)
    without, _ = S.tolerance("f32", [a, b], ref, S.validate_params({}))
    with_c, rtol = S.tolerance("f32", [a, b, c], ref, params)
    np.testing.assert_allclose(with_c - without, 4.0 * DTYPES["f32"].eps * np.abs(c), rtol=1e-12)
    assert rtol == DTYPES["f32"].eps


@pytest.mark.parametrize(("shapes", "fragment"), [
    ([(4, 5), (5, 6), (4, 5)], "matmul: c has shape (4, 5), expected out's shape (4, 6) for a of shape (4, 5) and b "
                               "of shape (5, 6) (c is not broadcast)"),
    ([(4, 5), (5, 6), (6,)], "matmul: c has shape (6,), expected out's shape (4, 6)"),  # a bias row: not a c
    ([(2, 4, 5), (2, 5, 6), (4, 6)], "matmul: c has shape (4, 6), expected out's shape (2, 4, 6)"),
])
def test_c_of_the_wrong_shape_is_refused(shapes, fragment):
    with pytest.raises(InvalidArgumentError) as info:
        S.output_shape(shapes, {"beta": 1.0})
    assert fragment in str(info.value)
    arrays = [np.ones(sh, np.float32) for sh in shapes]
    with pytest.raises(InvalidArgumentError, match="matmul: c has shape"):
        ops.matmul(*arrays, beta=1.0)
    with pytest.raises(InvalidArgumentError, match="matmul: c has shape"):  # refused with beta 0 too (still given)
        ops.matmul(*arrays)


def test_c_of_another_dtype_and_too_many_inputs_are_refused():
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    with pytest.raises(InvalidArgumentError, match="matmul: dtype mismatch: out is f32 but c is f16"):
        ops.matmul(a, b, np.ones((2, 4), np.float16), beta=1.0)
    with pytest.raises(InvalidArgumentError, match=r"matmul: c must be an array of f32, f16 or bf16, got int32"):
        ops.matmul(a, b, np.ones((2, 4), np.int32), beta=1.0)
    with pytest.raises(InvalidArgumentError, match=r"matmul takes 2 or 3 inputs \(a, b, optionally c\), got 4"):
        ops.run("matmul", [a, b, np.ones((2, 4), np.float32), a])
    with pytest.raises(InvalidArgumentError, match=r"matmul takes 2 or 3 inputs \(a, b, optionally c\), got 1"):
        check_call(S, [(2, 3)], ["f32"], (2, 4), "f32", {})


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_op_function_with_c_positional_keyword_and_through_run(dtype):
    rng = np.random.default_rng(35)
    npdt = DTYPES[dtype].numpy
    a, b, c = (_rand(rng, *sh).astype(npdt) for sh in ((2, 6, 9), (2, 9, 7), (2, 6, 7)))
    params = {"alpha": -0.5, "beta": 2.0}
    for got in (ops.matmul(a, b, c, -0.5, 2.0), ops.matmul(a, b, c=c, alpha=-0.5, beta=2.0),
                ops.run("matmul", [a, b, c], params)):
        assert got.dtype == npdt and got.shape == (2, 6, 7)
        res = S.check(got, [a, b, c], dtype, params)
        assert res.ok, res.message
        assert not S.check(got, [a, b], dtype, {"alpha": -0.5}).ok  # beta * c is in it
    # run with c given as None: left out
    got = ops.run("matmul", [a, b, None], {"alpha": -0.5})
    assert S.check(got, [a, b], dtype, {"alpha": -0.5}).ok
    with pytest.raises(InvalidArgumentError, match="matmul: beta is 2.0 but c is not given"):
        ops.run("matmul", [a, b, None], params)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_numpy_in_place_over_c(dtype):
    """out = c itself: C = alpha * A @ B + beta * C, each element's c read before it is written."""
    rng = np.random.default_rng(36)
    npdt = DTYPES[dtype].numpy
    a, w, c = _rand(rng, 5, 8).astype(npdt), _rand(rng, 6, 8).astype(npdt), _rand(rng, 6, 5).astype(npdt).T
    c0 = c.copy()
    assert ops.matmul(a, w.T, c, beta=1.0, out=c) is c  # c a transposed view: any strides
    res = S.check(c, [a, w.T, c0], dtype, {"beta": 1.0})
    assert res.ok, res.message
    assert not np.array_equal(c, c0)


def test_out_overlapping_c_other_than_exactly_is_refused():
    a, b = np.ones((4, 3), np.float32), np.ones((3, 4), np.float32)
    buf = np.zeros((5, 4), np.float32)
    with pytest.raises(E.OverlapError, match=r"matmul: out overlaps input c \(partial overlap of the same memory\); "
                                             r"use a separate output, or c itself as out \(in place\)"):
        ops.matmul(a, b, buf[:4], beta=1.0, out=buf[1:])
    with pytest.raises(E.OverlapError, match="matmul: out overlaps input c .the same memory in another layout"):
        sq = np.zeros((4, 4), np.float32)
        ops.matmul(a, b, sq, beta=1.0, out=sq.T)
    with pytest.raises(E.OverlapError, match="matmul: out is input a itself"):
        sq = np.ones((4, 4), np.float32)
        ops.matmul(sq, np.ones((4, 4), np.float32), out=sq)


# -- registration and the C ABI -------------------------------------------------------------------------------

def test_registered_by_the_builtin_plugin_and_in_the_c_abi():
    assert get_registry().get_op("matmul") is S and operators.spec("matmul") is S
    assert [s.name for s in cdecl.c_abi_ops()][-1] == "matmul"  # after the core and the model ops
    assert S.has_c_abi
    proto = " ".join(cdecl.prototypes(S).split())
    assert ("const oprt_tensor_desc_t *b, const oprt_tensor_desc_t *c, float alpha, float beta, int32_t allow_tf32);"
            in proto)
    assert ("oprt_status_t oprt_matmul(oprt_matmul_descriptor_t desc, void *workspace, size_t workspace_size, void "
            "*out, const void *a, const void *b, const void *c, oprt_stream_t stream);" in proto)
    assert "c (optional): NULL tensor and pointer where left out; out may be exactly it (in place)" in proto
    assert cdecl.c_params(S, S.validate_params({"alpha": 2, "allow_tf32": True})) == (2.0, 0.0, 1)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_host_library_on_every_smoke_and_edge_case(host_backend, dtype):
    """The C path (oprt_plan_matmul's strides and a sequential f32 loop) against the reference: odd sizes, K = 0,
    transposed, stepped, offset and reversed operands, batched, alpha."""
    for case in S.cases("smoke") + S.cases("edge"):
        result, _, _ = run_checked(host_backend, S, case, dtype, 21)
        assert result.ok, f"{case}: {result.message}"


def test_host_library_batched_transposed_weight(host_backend):
    b, rng = host_backend, np.random.default_rng(22)
    x = _rand(rng, 3, 13, 19).astype(ml_dtypes.bfloat16)
    w = _rand(rng, 3, 11, 19).astype(ml_dtypes.bfloat16)  # (B, N, K) row-major, used as (B, K, N)
    wt = np.swapaxes(w, 1, 2)
    out = b.empty((3, 13, 11), "bf16")
    dw = b.to_device(w)
    dwt = DeviceArray(b, dw.ptr, (3, 19, 11), (11 * 19, 1, 19), "bf16", dw)  # w's memory seen as (B, K, N)
    b.prepare("matmul", [b.to_device(x), dwt], out, {"alpha": -1.5})()
    got = b.to_host(out)
    assert S.check(got, [x, wt], "bf16", {"alpha": -1.5}).ok
    # the same product with one term of a's row 0 wrong is refused: the check can fail
    bad = got.astype(np.float32)
    bad[1, 0, 0] += 0.25
    assert not S.check(bad.astype(ml_dtypes.bfloat16), [x, wt], "bf16", {"alpha": -1.5}).ok


def test_host_library_refuses_bad_input(host_backend):
    b = host_backend
    desc = b.ffi.new("oprt_matmul_descriptor_t *")

    def create(out, a, w, alpha=1.0, beta=0.0, tf32=0, c=None):
        tds = [b._tensor_desc(t, n) for t, n in zip((out, a, w), ("out", "a", "b"))]
        tc = b._tensor_desc(c, "c") if c is not None else b.ffi.NULL
        b.check(b.lib.oprt_create_matmul_descriptor(desc, *tds, tc, alpha, beta, tf32))

    a, w, out = b.empty((4, 6), "f32"), b.empty((6, 5), "f32"), b.empty((4, 5), "f32")
    create(out, a, w)  # the good call: the refusals below are each one thing wrong
    b.lib.oprt_destroy_matmul_descriptor(desc[0])
    with pytest.raises(E.ShapeError, match=r"matmul: inner dims mismatch: .* got a of shape \(4, 6\) and b of shape "
                                           r"\(5, 5\)"):
        create(out, a, b.empty((5, 5), "f32"))
    with pytest.raises(E.ShapeError, match="matmul: a and b must have the same rank"):
        create(out, a, b.empty((1, 6, 5), "f32"))
    with pytest.raises(E.ShapeError, match="matmul: a and b must be 2-D"):
        create(out, b.empty((24,), "f32"), w)
    with pytest.raises(E.ShapeError, match="matmul: batch mismatch"):
        create(b.empty((2, 4, 5), "f32"), b.empty((2, 4, 6), "f32"), b.empty((3, 6, 5), "f32"))
    with pytest.raises(E.ShapeError, match=r"matmul: shape mismatch: out has shape \(5, 4\), expected \(4, 5\)"):
        create(b.empty((5, 4), "f32"), a, w)
    with pytest.raises(E.UnsupportedDtypeError, match="dtype mismatch: out is f32 but b is f16"):
        create(out, a, b.empty((6, 5), "f16"))
    with pytest.raises(E.ParamError, match=r"matmul: beta is 0.5 but c is NULL: alpha \* a @ b \+ beta \* c needs c, "
                                          r"of out's shape \(pass c, or beta 0\)"):
        create(out, a, w, beta=0.5)
    with pytest.raises(E.ParamError, match="matmul: beta must be finite, got nan"):
        create(out, a, w, beta=math.nan, c=b.empty((4, 5), "f32"))
    with pytest.raises(E.ShapeError, match=r"matmul: c has shape \(5, 4\), expected out's shape \(4, 5\) \(c is not "
                                          r"broadcast\)"):
        create(out, a, w, beta=1.0, c=b.empty((5, 4), "f32"))
    with pytest.raises(E.ShapeError, match=r"matmul: c has shape \(5,\), expected out's shape \(4, 5\)"):
        create(out, a, w, beta=0.0, c=b.empty((5,), "f32"))  # a given c is validated with beta 0 too
    with pytest.raises(E.UnsupportedDtypeError, match="dtype mismatch: out is f32 but c is bf16"):
        create(out, a, w, beta=1.0, c=b.empty((4, 5), "bf16"))
    with pytest.raises(E.ParamError, match="matmul: alpha must be finite, got inf"):
        create(out, a, w, alpha=math.inf)
    with pytest.raises(E.ParamError, match="matmul: allow_tf32 must be 0 or 1, got 2"):
        create(out, a, w, tf32=2)


def _host_inputs(b, rng, dtype, *shapes):
    host = [_rand(rng, *sh).astype(DTYPES[dtype].numpy) for sh in shapes]
    return host, [b.to_device(x) for x in host]


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_host_library_in_place_over_c_and_partial_overlap_refused(host_backend, dtype):
    """out = c itself through the C ABI (each element's c read before it is written, the launch allows exactly this
    alias); out one row into c's memory is refused at launch with OPRT_STATUS_OVERLAP."""
    b, rng = host_backend, np.random.default_rng(41)
    (a, w, c), (da, dw, dc) = _host_inputs(b, rng, dtype, (7, 9), (9, 6), (7, 6))
    params = {"alpha": 0.5, "beta": -1.0}
    b.prepare("matmul", [da, dw, dc], dc, params)()
    got = b.to_host(dc)
    res = S.check(got, [a, w, c], dtype, params)
    assert res.ok, res.message
    assert not S.check(got, [a, w], dtype, {"alpha": 0.5}).ok
    buf = b.empty((8, 6), dtype)
    c_view = DeviceArray(b, buf.ptr, (7, 6), (6, 1), dtype, buf)
    out_view = DeviceArray(b, buf.ptr + 6 * DTYPES[dtype].itemsize, (7, 6), (6, 1), dtype, buf)
    with pytest.raises(E.OverlapError, match=r"matmul: out overlaps input c \(partial overlap of the same memory\); "
                                             r"use a separate output, or c itself as out \(in place\)"):
        b.prepare("matmul", [da, dw, c_view], out_view, params)()


def test_host_library_c_pointer_at_launch(host_backend):
    """A descriptor made with c needs its pointer (NULL refused); one made without c does not read the pointer
    given (NULL, as oprt_core passes, or anything)."""
    b, rng = host_backend, np.random.default_rng(42)
    (a, w, c), (da, dw, dc) = _host_inputs(b, rng, "f32", (3, 4), (4, 5), (3, 5))
    out = b.empty((3, 5), "f32")
    ffi, lib = b.ffi, b.lib
    desc = ffi.new("oprt_matmul_descriptor_t *")
    tds = [b._tensor_desc(t, n) for t, n in ((out, "out"), (da, "a"), (dw, "b"), (dc, "c"))]
    b.check(lib.oprt_create_matmul_descriptor(desc, *tds, 1.0, 2.0, 0))
    ptr = [ffi.cast("void *", x.ptr) for x in (out, da, dw, dc)]
    with pytest.raises(E.NullPointerError, match="matmul: argument 'c' is NULL"):
        b.check(lib.oprt_matmul(desc[0], ffi.NULL, 0, ptr[0], ptr[1], ptr[2], ffi.NULL, ffi.NULL))
    b.check(lib.oprt_matmul(desc[0], ffi.NULL, 0, *ptr, ffi.NULL))
    assert S.check(b.to_host(out), [a, w, c], "f32", {"beta": 2.0}).ok
    lib.oprt_destroy_matmul_descriptor(desc[0])
    b.check(lib.oprt_create_matmul_descriptor(desc, *tds[:3], ffi.NULL, 1.0, 0.0, 0))
    bogus = ffi.cast("void *", 16)  # never read: the descriptor has no c
    b.check(lib.oprt_matmul(desc[0], ffi.NULL, 0, ptr[0], ptr[1], ptr[2], bogus, ffi.NULL))
    assert S.check(b.to_host(out), [a, w], "f32").ok
    lib.oprt_destroy_matmul_descriptor(desc[0])


@pytest.mark.parametrize("ptrs", [True, False], ids=["oprt_ptrs", "casts"])
def test_host_library_launchers_with_and_without_c_on_raw_pointers(host_backend, ptrs):
    """CompiledBackend passes NULL for a c left out, at create and at every launch: prepared and run, and on raw
    pointers (the op API's fast path), with and without c, on oprt_ptrs_matmul and on cast pointers."""
    b, rng = host_backend, np.random.default_rng(43)
    (a, w, c, a2, w2, c2), dev = _host_inputs(b, rng, "f16", (6, 10), (10, 4), (6, 4), (6, 10), (10, 4), (6, 4))
    da, dw, dc, da2, dw2, dc2 = dev
    out = b.empty((6, 4), "f16")
    for inputs, host, host2, params in (([da, dw], [a, w], [a2, w2], {"alpha": 2.0}),
                                        ([da, dw, dc], [a, w, c], [a2, w2, c2], {"alpha": 2.0, "beta": 0.5})):
        launcher = b.prepare("matmul", inputs, out, params)
        assert launcher.absent == 3 - len(inputs)
        if not ptrs:
            launcher._fn_ptrs = None
        launcher()
        assert S.check(b.to_host(out), host, "f16", params).ok
        second = [da2, dw2, dc2][:len(inputs)]
        b.fill_nan(out)
        launcher.launch_ptrs(out.ptr, [x.ptr for x in second])
        res = S.check(b.to_host(out), host2, "f16", params)
        assert res.ok, res.message
        assert not S.check(b.to_host(out), host, "f16", params).ok  # the new pointers' inputs, not the first


def test_op_api_fast_path_on_the_host_library_with_and_without_c(host_backend, monkeypatch):
    from op_helpers import registry_of

    reg = registry_of(host_backend, "host-matmul")
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    ops.clear_cache()
    b, rng = host_backend, np.random.default_rng(44)
    out = b.empty((5, 3), "f32")
    for _ in range(2):  # full path, then fast path
        (a, w, c), (da, dw, dc) = _host_inputs(b, rng, "f32", (5, 2), (2, 3), (5, 3))
        assert ops.matmul(da, dw, backend="host", out=out) is out
        assert S.check(b.to_host(out), [a, w], "f32").ok
        assert ops.matmul(da, dw, dc, beta=-1.0, backend="host", out=out) is out
        assert S.check(b.to_host(out), [a, w, c], "f32", {"beta": -1.0}).ok
        assert ops.matmul(da, dw, dc, beta=1.0, backend="host", out=dc) is dc  # in place over c
        assert S.check(b.to_host(dc), [a, w, c], "f32", {"beta": 1.0}).ok
    assert len(ops._fast) == 3
    ops.clear_cache()


# -- e4m3 inputs, a bf16 out: mixed dtypes through the spec ----------------------------------------------------------

def test_output_dtype_new_outputs_and_inputs_of_a_mixed_row():
    assert S.output_dtype("e4m3").name == "bf16" and S.output_dtype("f16").name == "f16"
    assert [S.value_dtype(i, "e4m3").name for i in range(3)] == ["e4m3", "e4m3", "bf16"]  # c is out's dtype
    case = matmul_case(6, 5, 7, beta=0.5)
    inputs = S.make_inputs(case, "e4m3", np.random.default_rng(0))
    assert [x.dtype for x in inputs] == [np.dtype(E4M3), np.dtype(E4M3), np.dtype(BF16)]
    out = S.new_outputs(operators.equip(NumpyBackend()), [x.shape for x in inputs], case.param_dict, "e4m3")
    assert out.dtype == np.dtype(BF16) and out.shape == (6, 5)


def test_e4m3_inputs_are_never_zero():
    """Uniform [-1, 1) values below e4m3's smallest subnormal (2^-9) would round to 0: they are made 0.5."""
    big = matmul_case(64, 64, 4096)  # 262144 values of a: ~128 of them below 2^-10 before the fix
    a = S.make_inputs(big, "e4m3", np.random.default_rng(1))[0]
    assert np.count_nonzero(a.astype(np.float32) == 0) == 0


def test_bytes_count_e4m3_inputs_at_one_byte_and_the_bf16_out_at_two():
    case = matmul_case(8, 16, 32)
    assert S.bytes_moved(case, "e4m3") == 8 * 32 + 32 * 16 + 2 * 8 * 16
    assert S.bytes_moved(case, "bf16") == 2 * (8 * 32 + 32 * 16 + 8 * 16)
    with_c = matmul_case(8, 16, 32, beta=1.0)
    assert S.bytes_moved(with_c, "e4m3") == 8 * 32 + 32 * 16 + 2 * 2 * 8 * 16  # c read in bf16
    assert S.flops(case) == 2 * 8 * 16 * 32


# -- e4m3: the budget ------------------------------------------------------------------------------------------------

def _fp8_tensor_core(a: np.ndarray, b: np.ndarray, bits: int = 13, chunk: int = 32) -> np.ndarray:
    """The accumulation the budget models (matmul's README.md): each MMA of ``chunk`` products adds them to the
    accumulator with every addend truncated ``bits`` significand bits below the largest of them."""
    a64, b64 = to_float64(a), to_float64(b)
    acc = np.zeros((a.shape[0], b.shape[1]))
    for k0 in range(0, a.shape[1], chunk):
        prods = a64[:, k0:k0 + chunk, None] * b64[None, k0:k0 + chunk, :]
        top = np.maximum(np.abs(prods).max(axis=1), np.abs(acc))
        ulp = 2.0 ** (np.floor(np.log2(np.maximum(top, 1e-300))) - (bits - 1))
        acc = np.trunc(acc / ulp) * ulp + (np.trunc(prods / ulp[:, None, :]) * ulp[:, None, :]).sum(axis=1)
    return acc


@pytest.mark.parametrize("k", [256, 1024, 4096])
def test_simulated_fp8_tensor_core_accumulation_is_within_budget(k):
    """The model's error stays below 3.2 sqrt(K) EPS_FP8_ACC Q (the budget allows 8), and the f32 sum of the numpy
    backend far below."""
    a, b = S.make_inputs(matmul_case(32, 32, k), "e4m3", np.random.default_rng(k))
    a64, b64 = to_float64(a), to_float64(b)
    ref = a64 @ b64
    q = np.sqrt((a64 * a64) @ (b64 * b64))
    sim = _fp8_tensor_core(a, b)
    assert (np.abs(sim - ref) <= 3.2 * math.sqrt(k) * EPS_FP8_ACC * q).all()
    res = S.check(sim.astype(np.float32).astype(BF16), [a, b], "e4m3")
    assert res.ok, res.message
    assert S.check(np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(BF16), [a, b], "e4m3").ok


@pytest.mark.parametrize("k", [256, 1024, 4096])
def test_simulated_promotion_into_f32_is_well_within_budget(k):
    """CUTLASS's FP8 main loop (the nvidia sm_90 e4m3 kernels) runs the modelled tensor-core accumulation from zero
    over each 128-deep k tile and adds the partial sum into f32 accumulators: its error is that of a 128-long sum per
    tile, well below the whole-K model's, and within the budget."""
    a, b = S.make_inputs(matmul_case(32, 32, k), "e4m3", np.random.default_rng(k + 1))
    a64, b64 = to_float64(a), to_float64(b)
    ref = a64 @ b64
    q = np.sqrt((a64 * a64) @ (b64 * b64))
    acc = np.zeros(ref.shape, np.float32)
    for k0 in range(0, k, 128):
        acc += _fp8_tensor_core(a[:, k0:k0 + 128], b[k0:k0 + 128, :]).astype(np.float32)
    err = np.abs(acc.astype(np.float64) - ref)
    assert (err <= 3.2 * math.sqrt(128) * EPS_FP8_ACC * q).all()  # a 128-long sum's bound, K-independent
    assert err.max() < np.abs(_fp8_tensor_core(a, b) - ref).max()
    res = S.check(acc.astype(BF16), [a, b], "e4m3")
    assert res.ok, res.message


def test_budget_of_e4m3_grows_with_k_and_rounds_to_bf16():
    f = [matmul_atol_factor(k, get_dtype("e4m3")) for k in (1, 256, 4096)]
    assert f == sorted(f) and f[1] == 8 * 17 * 2.0 ** -12
    a, b = S.make_inputs(matmul_case(4, 4, 64), "e4m3", np.random.default_rng(2))
    a64, b64 = to_float64(a), to_float64(b)
    _, rtol = S.tolerance("e4m3", [a64, b64], a64 @ b64, S.validate_params({}))
    assert rtol == DTYPES["bf16"].eps  # the output's eps, not e4m3's 0.125


@pytest.mark.parametrize("k", [64, 256])
def test_e4m3_one_wrong_product_term_fails(k):
    """An output element missing one product of magnitude >= 0.5, or counting it twice, is refused; the correctly
    rounded result passes."""
    a, b = S.make_inputs(matmul_case(8, 8, k), "e4m3", np.random.default_rng(3))
    _assert_one_wrong_term_fails(a, b, "e4m3", 0.5, lambda x: x.astype(np.float32).astype(BF16))


def test_alpha_is_the_product_of_per_tensor_scales():
    """a = scale_a * A8, b = scale_b * B8: matmul(A8, B8, alpha=scale_a * scale_b) is (scale_a A8) @ (scale_b B8)."""
    rng = np.random.default_rng(4)
    a8 = rng.uniform(-1, 1, (5, 32)).astype(E4M3)
    b8 = rng.uniform(-1, 1, (32, 7)).astype(E4M3)
    scale_a, scale_b = 0.25, 3.0
    got = ops.matmul(a8, b8, alpha=scale_a * scale_b)
    assert got.dtype == np.dtype(BF16)
    want = (scale_a * to_float64(a8)) @ (scale_b * to_float64(b8))
    np.testing.assert_allclose(to_float64(got), want, rtol=2 * DTYPES["bf16"].eps, atol=1e-6)


# -- e4m3: refusals of other mixes -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("dtypes", "out", "fragment"), [
    (("e4m3", "e4m3"), "e4m3", "a is e4m3, so out must be bf16, got e4m3"),
    (("e4m3", "e4m3"), "f32", "a is e4m3, so out must be bf16, got f32"),
    (("e4m3", "bf16"), "bf16", "a is e4m3, so b must be e4m3, got bf16"),
    (("e4m3", "e4m3", "e4m3"), "bf16", "a is e4m3, so c must be bf16, got e4m3"),
    (("bf16", "e4m3"), "bf16", "out is bf16 but b is e4m3"),
    (("f16", "f16"), "bf16", "out is bf16 but a is f16"),
])
def test_python_refuses_every_other_mix(dtypes, out, fragment):
    shapes = [(4, 8), (8, 3), (4, 3)][:len(dtypes)]
    params = {"beta": 1.0} if len(dtypes) > 2 else {}
    with pytest.raises(InvalidArgumentError, match="dtype mismatch") as info:
        check_call(S, shapes, dtypes, (4, 3), out, params)
    assert fragment in str(info.value)
    assert "the only mixed dtypes it takes: e4m3 a and b with bf16 out and c" in str(info.value)


def test_python_accepts_the_mix_and_other_ops_refuse_e4m3():
    dt, _ = check_call(S, [(4, 8), (8, 3), (4, 3)], ["e4m3", "e4m3", "bf16"], (4, 3), "bf16", {"beta": 1.0})
    assert dt.name == "e4m3"  # the row's dtype: the inputs'
    with pytest.raises(UnsupportedCase, match="copy does not define dtype e4m3; it supports f32, f16, bf16"):
        check_call(operators.spec("copy"), [(4,)], ["e4m3"], (4,), "e4m3", {})
    with pytest.raises(InvalidArgumentError, match=r"dtype mismatch: out is bf16 but x is e4m3 \(mixed dtypes are not "
                                                   r"supported\)"):
        check_call(operators.spec("copy"), [(4,)], ["e4m3"], (4,), "bf16", {})


def test_op_function_refuses_e4m3_for_copy():
    with pytest.raises(InvalidArgumentError, match="copy: x must be an array of f32, f16 or bf16, got float8_e4m3fn"):
        ops.copy(np.ones(4, E4M3))
    assert S.input_dtypes("a") == ("f32", "f16", "bf16", "e4m3") and S.input_dtypes("c") == ("f32", "f16", "bf16")
    with pytest.raises(InvalidArgumentError, match="matmul: out must be a writable array of f32, f16 or bf16, got "
                                                   "float64"):
        ops.matmul(np.ones((2, 16), E4M3), np.ones((16, 2), E4M3), out=np.ones((2, 2), np.float64))


# -- e4m3: the numpy backend -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("case_set", ["smoke", "edge"])
def test_numpy_backend_every_case_in_e4m3(case_set):
    be = operators.equip(NumpyBackend())
    for case in S.cases(case_set):
        result, _, out = run_checked(be, S, case, "e4m3", 31)
        assert result.ok, f"{case}: {result.message}"
        assert out.dtype == np.dtype(BF16)


def test_numpy_backend_result_is_the_f32_sum_rounded_once_to_bf16():
    a, b = S.make_inputs(matmul_case(9, 10, 48), "e4m3", np.random.default_rng(5))
    out = np.empty((9, 10), BF16)
    operators.equip(NumpyBackend()).prepare("matmul", [a, b], out, {"alpha": -0.5})()
    want = (np.float32(-0.5) * np.matmul(a.astype(np.float32), b.astype(np.float32))).astype(BF16)
    assert np.array_equal(out.view(np.uint16), want.view(np.uint16))


# -- e4m3: the compiled host library (its e4m3 decode) ---------------------------------------------------------------

def test_host_library_every_smoke_and_edge_case_in_e4m3(host_backend):
    for case in S.cases("smoke") + S.cases("edge"):
        result, _, out = run_checked(host_backend, S, case, "e4m3", 32)
        assert result.ok, f"{case}: {result.message}"
        assert out.dtype_info.name == "bf16"


def test_host_library_decodes_every_finite_e4m3_code(host_backend):
    """a holds each of the 254 finite codes (NaN 0x7f and 0xff aside), b = 1: out is each value, exactly (every e4m3
    value is a bf16 value)."""
    codes = np.array([c for c in range(256) if c & 0x7F != 0x7F], np.uint8)
    a = codes.view(E4M3).reshape(-1, 1)
    b = np.ones((1, 1), E4M3)
    out = host_backend.empty((codes.size, 1), "bf16")
    host_backend.prepare("matmul", [host_backend.to_device(a), host_backend.to_device(b)], out, {})()
    got = host_backend.to_host(out).astype(np.float64).ravel()
    want = a.astype(np.float64).ravel()
    assert np.array_equal(got, want) and got.max() == 448.0 and got[1] == 2.0 ** -9


def test_host_library_refuses_every_other_mix(host_backend):
    b = host_backend
    desc = b.ffi.new("oprt_matmul_descriptor_t *")

    def create(out, a, w, c=None, beta=0.0):
        tds = [b._tensor_desc(t, n) for t, n in zip((out, a, w), ("out", "a", "b"))]
        tc = b._tensor_desc(c, "c") if c is not None else b.ffi.NULL
        b.check(b.lib.oprt_create_matmul_descriptor(desc, *tds, tc, 1.0, beta, 0))

    a8, w8 = b.empty((4, 6), "e4m3"), b.empty((6, 5), "e4m3")
    create(b.empty((4, 5), "bf16"), a8, w8, c=b.empty((4, 5), "bf16"), beta=1.0)  # the one mix
    b.lib.oprt_destroy_matmul_descriptor(desc[0])
    mix = "the only mixed dtypes matmul takes are e4m3 a and b with bf16 out and c"
    with pytest.raises(E.UnsupportedDtypeError, match=f"a is e4m3, b is e4m3 and out is f32; {mix}"):
        create(b.empty((4, 5), "f32"), a8, w8)
    with pytest.raises(E.UnsupportedDtypeError, match=f"a is e4m3, b is bf16 and out is bf16; {mix}"):
        create(b.empty((4, 5), "bf16"), a8, b.empty((6, 5), "bf16"))
    with pytest.raises(E.UnsupportedDtypeError, match=f"a is bf16, b is e4m3 and out is bf16; {mix}"):
        create(b.empty((4, 5), "bf16"), b.empty((4, 6), "bf16"), w8)
    with pytest.raises(E.UnsupportedDtypeError, match="tensor 'out' has dtype e4m3 where f32, f16 or bf16 is needed "
                                                      r"\(e4m3 is matmul's a and b only, with a bf16 out\)"):
        create(b.empty((4, 5), "e4m3"), a8, w8)
    with pytest.raises(E.UnsupportedDtypeError, match="tensor 'c' has dtype e4m3 where f32, f16 or bf16 is needed"):
        create(b.empty((4, 5), "bf16"), a8, w8, c=b.empty((4, 5), "e4m3"), beta=1.0)


def test_host_library_other_ops_refuse_e4m3(host_backend):
    b = host_backend
    desc = b.ffi.new("oprt_copy_descriptor_t *")
    x = b.empty((8,), "e4m3")
    with pytest.raises(E.UnsupportedDtypeError, match="tensor 'out' has dtype e4m3 where f32, f16 or bf16 is needed"):
        b.check(b.lib.oprt_create_copy_descriptor(desc, b._tensor_desc(x, "out"), b._tensor_desc(x, "x")))
    sup = b.supports("copy", "e4m3")
    assert not sup.ok and "does not support dtype e4m3 for copy" in sup.reason
    assert b.supports("matmul", "e4m3").ok


def test_e4m3_tensor_case_layouts_keep_values():
    """make_tensor's views (transposed, stepped, offset, reversed) of e4m3 data hold e4m3 values in [-1, 1)."""
    case = matmul_case(7, 5, 9, a_layout="step2", b_layout="reversed")
    a, b = S.make_inputs(case, "e4m3", np.random.default_rng(6))
    assert a.shape == (7, 9) and b.shape == (9, 5) and a.dtype == np.dtype(E4M3)
    assert np.abs(a.astype(np.float32)).max() <= 1.0
    assert TensorCase((3, 4), "transposed").shape == (3, 4)


# -- the torch baseline (on torch's CPU kernels) --------------------------------------------------------------------

def test_torch_matmul_flags_alpha_and_no_compiled_form(torch_cpu):
    """matmul on torch: out= written (no NaN of the fill left), alpha by a multiply of the result, TF32 switched on
    only for a case that allows it, the 16-bit reduced-precision reductions off; torch-compile has no matmul."""
    import torch

    from oprt_core.baselines import TorchCompileBackend

    flags = torch.backends.cuda.matmul
    for allow_tf32, alpha in ((True, -2.5), (False, 1.0)):
        case = matmul_case(7, 5, 9, b_layout="transposed", alpha=alpha, allow_tf32=allow_tf32)
        run_and_check(torch_cpu, "matmul", case, "f32")
        assert flags.allow_tf32 is allow_tf32
        assert flags.allow_fp16_reduced_precision_reduction is False
    spec = S
    rng = np.random.default_rng(5)
    case = matmul_case(6, 4, 8, alpha=0.5)
    inputs = spec.make_inputs(case, "bf16", rng)
    out = torch_cpu.empty((6, 4), "bf16")
    torch_cpu.prepare("matmul", [torch_cpu.to_device(x) for x in inputs], out, {"alpha": 0.5})()
    got = torch_cpu.to_host(out)
    assert spec.check(got, inputs, "bf16", {"alpha": 0.5}).ok
    assert not spec.check(got, inputs, "bf16", {"alpha": 1.0}).ok  # alpha was applied: the check tells
    sup = operators.equip(TorchCompileBackend(device="cpu")).supports("matmul", "f32", case)
    assert not sup.ok and "has no implementation of 'matmul'" in sup.reason


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_torch_matmul_with_c_respects_alpha_and_beta(torch_cpu, dtype):
    """alpha * a @ b + beta * c on torch (addmm 2-D, baddbmm batched): within budget, and the check fails on the
    result taken without c or with another beta; a c given with beta 0 is not read (NaN in it, a finite result)."""
    spec = S
    for case in (matmul_case(9, 7, 11, b_layout="transposed", c_layout="transposed", alpha=-0.5, beta=1.5),
                 matmul_case(5, 6, 4, batch=3, alpha=2.0, beta=-0.25)):
        run_and_check(torch_cpu, "matmul", case, dtype)
        params = case.param_dict
        inputs = spec.make_inputs(case, dtype, np.random.default_rng(6))
        out = torch_cpu.empty(spec.output_shape([x.shape for x in inputs], params), dtype)
        torch_cpu.prepare("matmul", [torch_cpu.to_device(x) for x in inputs], out, params)()
        got = torch_cpu.to_host(out)
        assert spec.check(got, inputs, dtype, params).ok
        assert not spec.check(got, inputs[:2], dtype, {**params, "beta": 0.0}).ok
        assert not spec.check(got, inputs, dtype, {**params, "beta": 2 * params["beta"]}).ok
    case = matmul_case(4, 3, 5, c_layout="contiguous")
    a, b, c = spec.make_inputs(case, dtype, np.random.default_rng(7))
    c[...] = np.nan
    out = torch_cpu.empty((4, 3), dtype)
    torch_cpu.prepare("matmul", [torch_cpu.to_device(x) for x in (a, b, c)], out, {})()
    got = torch_cpu.to_host(out)
    assert np.isfinite(got.astype(np.float32)).all() and spec.check(got, [a, b, c], dtype).ok
