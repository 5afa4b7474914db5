"""relu (oprt_core.operators.relu, leaky with ``negative_slope``): the reference against an element-by-element loop,
the op function within budget (a positional slope too), the sign of its zeros (+0 for a zero slope, as torch.relu;
kept by a leaky slope), in place, bytes and flops, the custom case, its aliasing declaration and C params, and the
widths of its models cases."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from op_helpers import arrays, assert_ok, rand

import oprt_core.ops as ops
from oprt_core import cdecl
from oprt_core.dtypes import get_dtype
from oprt_core.operators.relu import SPEC
from oprt_core.spec import Case, TensorCase

DTYPES = ("f32", "f16", "bf16")
FLOATS = (np.float32, np.float16, ml_dtypes.bfloat16)


@given(x=arrays(), slope=st.one_of(st.just(0.0), st.just(0), st.floats(-2.0, 2.0, allow_nan=False)))
def test_reference_vs_loop(x, slope):
    got = SPEC.reference([x], {"negative_slope": slope})
    assert got.shape == x.shape
    for idx in np.ndindex(x.shape):
        v = float(x[idx])
        assert got[idx] == (v if v > 0 else v * float(slope))


def test_reference_default_slope_zeroes_negatives():
    x = np.array([-3.0, -0.5, 0.25, 4.0], np.float32)
    np.testing.assert_array_equal(SPEC.reference([x]), [0.0, 0.0, 0.25, 4.0])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("slope", [0.0, 0.1, 2])
def test_op_function_leaky(dtype, slope):
    x = rand((9, 13), dtype, 4)
    out = ops.relu(x, negative_slope=slope)
    assert_ok("relu", out, [x], dtype, negative_slope=slope)
    if slope == 0.0:
        assert (out.astype(np.float64) >= 0).all()
    np.testing.assert_array_equal(ops.relu(x, slope), out)  # positional slope


@pytest.mark.parametrize("dtype", FLOATS)
def test_positive_zero(dtype):
    x = np.array([-1.0, -0.0, 0.0, -3e-5, 2.0, -np.inf], dtype)
    out = ops.relu(x)
    assert out.dtype == np.dtype(dtype)
    values = out.astype(np.float64)
    assert values.tolist() == [0.0, 0.0, 0.0, 0.0, 2.0, 0.0]
    assert not np.signbit(values).any()
    assert not np.signbit(ops.relu([-1.0])).any()
    assert not np.signbit(ops.relu(x, negative_slope=-0.0).astype(np.float64)).any()
    assert np.isnan(ops.relu(np.array([np.nan], dtype)).astype(np.float64)).all()


@pytest.mark.parametrize("dtype", FLOATS)
def test_leaky_keeps_the_sign(dtype):
    out = ops.relu(np.array([-2.0, -0.0, 4.0], dtype), negative_slope=0.5).astype(np.float64)
    assert out.tolist() == [-1.0, 0.0, 4.0] and np.signbit(out[:2]).all()


def test_in_place():
    x = np.array([-1.0, 2.0], np.float32)
    assert ops.relu(x, out=x) is x
    assert x.tolist() == [0.0, 2.0] and not np.signbit(x).any()


def test_bytes_and_flops():
    case = Case("relu", "r", (TensorCase((1000,)),), (("negative_slope", 0.1),))
    assert SPEC.bytes_moved(case, "f16") == SPEC.bytes_moved(case, get_dtype("f16")) == 4000
    assert SPEC.flops(case) == 1000


def test_custom_case():
    c = SPEC.custom_case((5,), {"negative_slope": 0.2})
    assert c.param_dict == {"negative_slope": 0.2}


def test_in_place_over_x_and_the_slope_as_a_c_float():
    assert SPEC.inplace == ("x",)
    values = cdecl.c_params(SPEC, SPEC.validate_params({"negative_slope": 2}))
    assert values == (2.0,) and type(values[0]) is float


def test_models_cover_hidden_widths():
    two_d = [c for c in SPEC.cases("models") if len(c.shape) == 2]
    assert {4096, 5120, 7168, 8192, 2048, 14336, 18944} <= {c.shape[-1] for c in two_d}
    assert {c.shape[0] for c in two_d} == {1, 128, 4096}
