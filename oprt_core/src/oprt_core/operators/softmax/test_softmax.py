"""softmax (oprt_core.operators.softmax) over one axis: the reference (rows sum to one and keep their order, shift
invariance, a direct exp/fsum on small magnitudes, no overflow on large ones, rows of one and empty, known values),
what the edge cases cover (rows of one, magnitudes a naive exp overflows), the op function, a scalar's missing axis,
infinities quiet and IEEE, bytes and flops, the custom case, axis' C range, its aliasing declaration, the shapes of its
models cases and liger's refusals."""

from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes
from op_helpers import EPS64, arrays, assert_ok, axes, rand

import oprt_core.ops as ops
from oprt_core import cdecl
from oprt_core.dtypes import DTYPES, get_dtype
from oprt_core.errors import InvalidArgumentError
from oprt_core.operators.softmax import SPEC
from oprt_core.operators.softmax.baselines import IMPLS
from oprt_core.spec import Case, TensorCase

FLOATS = (np.float32, np.float16, ml_dtypes.bfloat16)


def axis_of(case: Case):
    return case.param_dict.get("axis", -1)


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# -- the reference ----------------------------------------------------------------------------------------------

def softmax_rows_direct(x: np.ndarray, axis: int) -> np.ndarray:
    """exp and fsum, one row at a time, no max subtraction (fine for small magnitudes)."""
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        e = [math.exp(v) for v in x[idx]]
        s = math.fsum(e)
        out[idx] = [v / s for v in e]
    return np.moveaxis(out, -1, axis)


def _softmax_input(data, min_dims=1, low=-1.0, high=1.0):
    shape = data.draw(array_shapes(min_dims=min_dims, max_dims=4, min_side=0, max_side=9))
    x = data.draw(arrays(shape, low=low, high=high))
    axis = data.draw(axes(x.ndim, allow_none=False))
    return x, axis


@given(data=st.data())
def test_reference_sums_to_one_and_is_a_distribution(data):
    x, axis = _softmax_input(data, low=-30.0, high=30.0)
    y = SPEC.reference([x], {"axis": axis})
    assert y.shape == x.shape
    if x.size:
        assert ((y >= 0) & (y <= 1)).all()
        np.testing.assert_allclose(np.sum(y, axis=axis), 1.0, rtol=0, atol=16 * EPS64 * x.shape[axis])
        # order preserving along the axis: a larger input never gets a smaller probability
        xs = np.moveaxis(x.astype(np.float64), axis, -1)
        ys = np.moveaxis(y, axis, -1)
        order = np.argsort(xs, axis=-1, kind="stable")
        sorted_y = np.take_along_axis(ys, order, axis=-1)
        assert (np.diff(sorted_y, axis=-1) >= -4 * EPS64).all()


@given(data=st.data(), c=st.floats(-50.0, 50.0, allow_nan=False))
def test_reference_shift_invariance(data, c):
    x, axis = _softmax_input(data)
    x64 = x.astype(np.float64)
    y = SPEC.reference([x64], {"axis": axis})
    y_shift = SPEC.reference([x64 + c], {"axis": axis})
    # x + c rounds by <= |c| * eps64, which moves each probability by about that, relatively
    np.testing.assert_allclose(y_shift, y, rtol=64 * (abs(c) + 1) * EPS64, atol=0)


@given(data=st.data())
def test_reference_vs_direct_exp_sum_small_magnitudes(data):
    x, axis = _softmax_input(data, low=-5.0, high=5.0)
    got = SPEC.reference([x], {"axis": axis})
    np.testing.assert_allclose(got, softmax_rows_direct(x, axis), rtol=64 * EPS64, atol=0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_reference_large_magnitudes_do_not_overflow(dtype):
    hi = {"float32": 1000.0, "float16": 60000.0, "bfloat16": 1e30}[np.dtype(dtype).name]
    rng = np.random.default_rng(9)
    x = (rng.choice([-1.0, 1.0], (6, 50)) * rng.uniform(hi / 10, hi, (6, 50))).astype(dtype)
    y = SPEC.reference([x], {"axis": -1})
    assert np.isfinite(y).all()
    np.testing.assert_allclose(y.sum(axis=-1), 1.0, atol=1e-12)
    # the row maximum dominates: its probability is at least 1/n
    assert (y.max(axis=-1) >= 1 / 50).all()


def test_reference_row_of_one_and_empty():
    x = np.random.default_rng(1).uniform(-9, 9, (7, 1)).astype(np.float16)
    np.testing.assert_array_equal(SPEC.reference([x], {"axis": -1}), np.ones((7, 1)))
    assert SPEC.reference([np.empty((0, 5), np.float32)], {"axis": -1}).shape == (0, 5)
    assert SPEC.reference([np.empty((5, 0), np.float32)], {"axis": 0}).shape == (5, 0)


def test_reference_known_values():
    x = np.log(np.array([[1.0, 2.0, 5.0], [1.0, 1.0, 2.0]], np.float32))
    np.testing.assert_allclose(SPEC.reference([x]), [[0.125, 0.25, 0.625], [0.25, 0.25, 0.5]],
                               rtol=1e-6)
    np.testing.assert_allclose(SPEC.reference([x], {"axis": 0}).sum(axis=0), 1.0)


# -- the edge cases --------------------------------------------------------------------------------------------

def test_edge_rows_of_one_and_large_magnitudes():
    cases = SPEC.cases("edge")
    assert any(c.shape[axis_of(c)] == 1 and c.numel > 1 for c in cases), "softmax rows of length 1"
    large = [c for c in cases if c.data == "large"]
    assert large, "rows with large magnitudes"
    rng = np.random.default_rng(0)
    for c in large:
        for dtype in DTYPES:
            (x,) = SPEC.make_inputs(c, dtype, rng)
            x32 = x.astype(np.float32)
            with np.errstate(over="ignore"):
                naive = np.exp(x32) if dtype != "f16" else np.exp(x)  # a naive exp overflows the dtype
            assert np.isinf(naive).any(), f"{c} {dtype}: no overflow of a naive exp"
            if dtype == "f32":
                assert np.abs(x32).max() > 80
            if dtype == "f16":
                assert np.abs(x32).max() > 0.5 * float(np.finfo(np.float16).max), "near the f16 maximum"
            assert np.isfinite(x32).all()


# -- the op function -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", list(DTYPES))
def test_op_function_axis0(dtype):
    x = rand((33, 6), dtype, 6, -4.0, 4.0)
    out = ops.softmax(x, axis=0)
    assert_ok("softmax", out, [x], dtype, axis=0)
    np.testing.assert_allclose(out.astype(np.float64).sum(axis=0), 1.0, rtol=0.05)
    assert_ok("softmax", ops.softmax(x), [x], dtype, axis=-1)


def test_a_scalar_has_no_axis():
    with pytest.raises(InvalidArgumentError, match=r"^softmax: axis -1 is out of range for a 0-d input"):
        ops.softmax(3.0)


@pytest.mark.usefixtures("no_warnings")
@pytest.mark.parametrize("dtype", FLOATS)
def test_infinities_are_quiet_and_ieee(dtype):
    inf = np.inf
    x = np.array([[-inf, -inf], [inf, 1.0], [-inf, 0.0], [1.0, 2.0]], dtype)
    out = ops.softmax(x).astype(np.float64)
    assert np.isnan(out[0]).all() and np.isnan(out[1]).all()  # as torch.softmax gives
    assert out[2].tolist() == [0.0, 1.0]
    np.testing.assert_allclose(out[3], np.exp([1.0, 2.0]) / np.exp([1.0, 2.0]).sum(), rtol=1e-2)


# -- bytes and flops, the custom case, C params, aliasing, models ------------------------------------------------

@pytest.mark.parametrize(("case", "dtype", "nbytes", "flops"), [
    (Case("softmax", "s", (TensorCase((64, 1000)),), (("axis", -1),)), "f32", 2 * 64000 * 4, 5 * 64000),
    (Case("softmax", "s", (TensorCase((0, 5)),), (("axis", -1),)), "f16", 0, 0),
])
def test_bytes_and_flops(case, dtype, nbytes, flops):
    assert SPEC.bytes_moved(case, dtype) == SPEC.bytes_moved(case, get_dtype(dtype)) == nbytes
    assert SPEC.flops(case) == flops


def test_custom_case():
    c = SPEC.custom_case((8, 100), {"axis": 0})
    assert c.shape == (8, 100) and c.param_dict == {"axis": 0} and c.inputs[0].layout == "contiguous"
    with pytest.raises(InvalidArgumentError, match="axis 2 is out of range"):
        SPEC.custom_case((8, 100), {"axis": 2})


def test_axis_must_fit_a_c_int32():
    with pytest.raises(InvalidArgumentError, match=r"^axis 2147483648 does not fit a C int32$"):
        cdecl.c_params(SPEC, {**SPEC.validate_params({}), "axis": 1 << 31})  # its own check, past validate_params'


def test_in_place_over_x():
    assert SPEC.inplace == ("x",)


def test_models_cover_vocabularies_sequences_and_images():
    models = {c.name: c for c in SPEC.cases("models")}
    widths = {c.shape[-1] for c in models.values()}
    assert {50257, 128256, 151936, 256000, 77, 197, 577} <= widths
    assert models["llama3-8b/vocab/4096tok"].shape == (4096, 128256)
    assert models["gpt2/vocab/1tok"].shape == (1, 50257)
    assert models["resnet50/input/b64"].shape == (64, 3, 224, 224)
    assert models["resnet50/input/b64"].param_dict["axis"] == 1
    assert models["probe/cube50"].param_dict["axis"] == 2


# -- the baselines' implementations ---------------------------------------------------------------------------------

def test_liger_row_refusal():
    refusal = IMPLS["liger"].case_refusal
    assert "at most 65536" in refusal("softmax", (4096, 128256), {"axis": -1})
    assert "last axis only" in refusal("softmax", (4, 8), {"axis": 0})
    assert refusal("softmax", (4, 8), {"axis": 1}) is None
