"""matmul with fp8 e4m3 inputs and a bf16 output: the dtype registry (e4m3 opt-in, its aliases and code), the mixed
output dtype through the spec (new_outputs, make_inputs, check, bytes), the budget (a simulated fp8 tensor-core
accumulation passes, a wrong product term fails), Python's and C's refusals of every other mix, the numpy backend and
the compiled host library (its e4m3 decode of every code) against the float64 reference."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from gpu_helpers import run_checked

import oprt_core.errors as E
import oprt_core.ops as ops
from oprt_core import OPT_IN_DTYPES, operators
from oprt_core.dtypes import DTYPES, INDEX_DTYPES, dtype_of, get_dtype
from oprt_core.errors import InvalidArgumentError, UnknownNameError, UnsupportedCase
from oprt_core.numpy_backend import NumpyBackend
from oprt_core.operators.matmul import EPS_FP8_ACC, matmul_atol_factor, matmul_case
from oprt_core.operators.matmul import SPEC as matmul_spec
from oprt_core.spec import Budget, OpSpec, TensorCase, to_float64
from oprt_core.validate import check_call

S = matmul_spec
E4M3 = ml_dtypes.float8_e4m3fn
BF16 = ml_dtypes.bfloat16


# -- the dtype registry ------------------------------------------------------------------------------------------

def test_e4m3_is_an_opt_in_dtype_known_by_name_alias_and_numpy_type():
    dt = get_dtype("e4m3")
    assert dt is get_dtype("fp8") is get_dtype("float8_e4m3fn") is get_dtype("E4M3") is dtype_of(np.dtype(E4M3))
    assert (dt.code, dt.itemsize, dt.eps, dt.opt_in) == (5, 1, 0.125, True)
    assert list(OPT_IN_DTYPES) == ["e4m3"]
    # the default value dtypes stay f32, f16, bf16: an op's default dtypes and a sweep's "all"
    assert list(DTYPES) == ["f32", "f16", "bf16"] and not any(d.opt_in for d in DTYPES.values())
    assert OpSpec.__dataclass_fields__["dtypes"].default == ("f32", "f16", "bf16")
    assert "e4m3" not in operators.spec("copy").dtypes and "e4m3" in S.dtypes
    assert get_dtype("i32", index=True) is INDEX_DTYPES["i32"]
    with pytest.raises(UnknownNameError, match="e4m3"):  # the error lists it among the known ones
        get_dtype("e5m2")


def test_oprt_h_code_is_the_registry_code():
    from oprt_core.cabi import header_text

    assert "OPRT_DTYPE_F8E4M3 = 5" in header_text()


# -- mixed dtypes through the spec ----------------------------------------------------------------------------------

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


def test_output_dtypes_must_name_an_op_dtype():
    with pytest.raises(InvalidArgumentError, match="output_dtypes maps 'e4m3'"):
        OpSpec("x", "", 1, ("x",), lambda x: x, lambda c, d: 0, lambda c: 0, {"f32": Budget(0, 0)}, {},
               output_dtypes={"e4m3": "bf16"})  # e4m3 not among its dtypes


# -- the budget -----------------------------------------------------------------------------------------------------

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
def test_one_wrong_product_term_fails(k):
    """An output element missing one product of magnitude >= 0.5, or counting it twice, is refused; the correctly
    rounded result passes."""
    a, b = S.make_inputs(matmul_case(8, 8, k), "e4m3", np.random.default_rng(3))
    a64, b64 = to_float64(a), to_float64(b)
    exact = a64 @ b64
    i, j = 1, 1
    terms = a64[i, :] * b64[:, j]
    kk = int(np.argmax(np.abs(terms) >= 0.5))
    assert abs(terms[kk]) >= 0.5
    for wrong in (exact[i, j] - terms[kk], exact[i, j] + terms[kk]):
        out = exact.copy()
        out[i, j] = wrong
        res = S.check(out.astype(np.float32).astype(BF16), [a, b], "e4m3")
        assert not res.ok and f"worst at ({i}, {j})" in res.message
    assert S.check(exact.astype(np.float32).astype(BF16), [a, b], "e4m3").ok


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


# -- refusals ---------------------------------------------------------------------------------------------------------

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


# -- the numpy backend ------------------------------------------------------------------------------------------------

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


# -- the compiled host library (oprt_plan_matmul, the host's e4m3 decode) --------------------------------------------

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
