"""reduce_sum (oprt_core.operators.reduce_sum): the reference against math.fsum per output element (axis, negative
axis, axis=None, keepdims; catastrophic cancellation; empty reductions), what the edge cases cover, the budget against
a dropped element, the op function, bytes and flops, the custom case, axis=None's C value, its refusal of any in-place
output and the shapes of its models cases."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from op_helpers import EPS64, arrays, assert_ok, axes, rand

import oprt_core.ops as ops
from oprt_core import cdecl
from oprt_core.dtypes import DTYPES, get_dtype
from oprt_core.errors import OverlapError
from oprt_core.operators._shared import OPRT_AXIS_ALL
from oprt_core.operators.reduce_sum import SPEC
from oprt_core.spec import Case, TensorCase


def axis_of(case: Case):
    return case.param_dict.get("axis", -1)


def fsum_reduce(x: np.ndarray, axis, keepdims: bool) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if axis is None:
        total = math.fsum(x[idx] for idx in np.ndindex(x.shape))
        return np.full((1,) * x.ndim if keepdims else (), total)
    ax = axis % x.ndim
    rest = x.shape[:ax] + x.shape[ax + 1:]
    out = np.empty(rest)
    for idx in np.ndindex(rest):
        out[idx] = math.fsum(x[idx[:ax] + (k,) + idx[ax:]] for k in range(x.shape[ax]))
    return np.expand_dims(out, ax) if keepdims else out


def assert_sums_close(got: np.ndarray, want: np.ndarray, x: np.ndarray, axis, keepdims) -> None:
    assert got.shape == want.shape and got.dtype == np.float64
    n = x.size if axis is None else x.shape[axis]
    scale = np.sum(np.abs(x.astype(np.float64)), axis=axis, keepdims=keepdims)
    # a float64 pairwise sum errs by at most ~n * eps64 * sum|x|; fsum is exact (correctly rounded)
    assert (np.abs(got - want) <= (n + 1) * EPS64 * scale).all()


# -- the reference ----------------------------------------------------------------------------------------------

@given(data=st.data())
def test_reference_vs_fsum(data):
    x = data.draw(arrays())
    axis = data.draw(axes(x.ndim, allow_none=True))
    keepdims = data.draw(st.booleans())
    got = SPEC.reference([x], {"axis": axis, "keepdims": keepdims})
    assert_sums_close(got, fsum_reduce(x, axis, keepdims), x, axis, keepdims)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, -2, -3])
def test_reference_vs_fsum_fixed(axis, keepdims):
    x = np.random.default_rng(5).uniform(-1, 1, (4, 7, 9)).astype(np.float32)[:, ::-1, :]
    got = SPEC.reference([x], {"axis": axis, "keepdims": keepdims})
    assert_sums_close(got, fsum_reduce(x, axis, keepdims), x, axis, keepdims)


def test_reference_catastrophic_cancellation_vs_fsum():
    # values whose naive float64 sum loses everything; fsum and a reference within n*eps*sum|x| agree
    x = np.array([1e16, 1.0, -1e16, 3.0, 1e-3], np.float64)
    want = fsum_reduce(x, None, False)
    assert float(want) == math.fsum([1e16, 1.0, -1e16, 3.0, 1e-3])
    got = SPEC.reference([x], {"axis": None})
    assert_sums_close(got, want, x, None, False)


def test_empty_reductions_are_zero():
    x = np.empty((0, 5), np.float16)
    np.testing.assert_array_equal(SPEC.reference([x], {"axis": 0}), np.zeros(5))
    assert SPEC.reference([x], {"axis": -1}).shape == (0,)
    assert float(SPEC.reference([x], {"axis": None})) == 0.0
    assert SPEC.reference([np.float32(2.5)], {"axis": None}) == 2.5


# -- cases and the budget ---------------------------------------------------------------------------------------

def test_edge_axis_none_and_keepdims():
    cases = SPEC.cases("edge")
    none = [c for c in cases if axis_of(c) is None]
    assert none, "axis=None"
    assert any(c.param_dict["keepdims"] for c in none), "axis=None with keepdims"
    assert any(c.param_dict["keepdims"] and axis_of(c) is not None for c in cases)
    assert any(c.shape == () for c in none), "a 0-d input"
    # an empty reduction (sum over a zero-length axis is 0) and an empty output
    assert any(c.shape[axis_of(c)] == 0 and c.numel == 0 and 0 not in
               tuple(s for i, s in enumerate(c.shape) if i != axis_of(c) % len(c.shape))
               for c in cases if axis_of(c) is not None and c.shape)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("case_index", [0, 1, 2])  # axis -1, axis 0, axis None
def test_dropped_element_fails(dtype, case_index):
    case = SPEC.cases("smoke")[case_index]
    params = SPEC.validate_params(case.param_dict)
    inputs = SPEC.make_inputs(case, dtype, np.random.default_rng(11))
    x = inputs[0].astype(np.float64)
    ref = SPEC.reference(inputs, params)
    # drop the largest-magnitude element of one output's reduction
    j = int(np.argmax(np.abs(x)))
    dropped = x.copy().reshape(-1)
    dropped[j] = 0.0
    out = SPEC.reference([dropped.reshape(x.shape)], params).astype(get_dtype(dtype).numpy)
    assert SPEC.check(ref.astype(get_dtype(dtype).numpy), inputs, dtype, params).ok
    res = SPEC.check(out, inputs, dtype, params)
    assert not res.ok, f"a dropped element (|x| = {abs(x.reshape(-1)[j]):.3g}) passed"
    if dtype == "f32":
        # in f32 even a typical element is caught
        k = int(np.argsort(np.abs(x).reshape(-1))[x.size // 2])
        dropped = x.copy().reshape(-1)
        dropped[k] = 0.0
        out = SPEC.reference([dropped.reshape(x.shape)], params).astype(np.float32)
        assert not SPEC.check(out, inputs, dtype, params).ok


@pytest.mark.parametrize(("case", "dtype", "nbytes", "flops"), [
    (Case("reduce_sum", "r", (TensorCase((64, 1000)),), (("axis", -1), ("keepdims", False))), "f32",
     (64000 + 64) * 4, 64000),
    (Case("reduce_sum", "r", (TensorCase((64, 1000)),), (("axis", 0), ("keepdims", True))), "bf16",
     (64000 + 1000) * 2, 64000),
    (Case("reduce_sum", "r", (TensorCase((1000,)),), (("axis", None), ("keepdims", False))), "f32", (1000 + 1) * 4,
     1000),
])
def test_bytes_and_flops(case, dtype, nbytes, flops):
    assert SPEC.bytes_moved(case, dtype) == SPEC.bytes_moved(case, get_dtype(dtype)) == nbytes
    assert SPEC.flops(case) == flops


def test_custom_case():
    c = SPEC.custom_case((3, 4), {"axis": None, "keepdims": True})
    assert c.param_dict == {"axis": None, "keepdims": True}


def test_axis_none_and_keepdims_in_c():
    assert cdecl.c_params(SPEC, SPEC.validate_params({"axis": None, "keepdims": True})) == (OPRT_AXIS_ALL, 1)
    assert cdecl.c_params(SPEC, SPEC.validate_params({"axis": -2})) == (-2, 0)


def test_models_cover_hidden_sizes_and_columns():
    models = {c.name: c for c in SPEC.cases("models")}
    assert models["llama2-13b/hidden/16384tok"].shape == (16384, 5120)
    assert sum(1 for c in models.values() if c.param_dict["axis"] == 0 and c.shape[0] == 2048) >= 5
    assert models["probe/cube50"].param_dict == {"axis": 2, "keepdims": False}


# -- the op function and aliasing -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize(("axis", "keepdims", "shape"), [
    (None, False, ()), (None, True, (1, 1, 1)), (-1, False, (3, 5)), (0, True, (1, 5, 7)), (-2, False, (3, 7)),
])
def test_op_function(dtype, axis, keepdims, shape):
    x = rand((3, 5, 7), dtype, 5)
    out = ops.reduce_sum(x, axis=axis, keepdims=keepdims)
    assert out.shape == shape
    assert_ok("reduce_sum", out, [x], dtype, axis=axis, keepdims=keepdims)
    if axis is None:
        assert abs(float(out.astype(np.float64).sum()) - float(x.astype(np.float64).sum())) < 0.1


def test_never_in_place():
    assert SPEC.inplace == ()
    x = rand((5, 1), low=-2.0, high=2.0)
    before = x.copy()
    with pytest.raises(OverlapError, match=re.escape("reduce_sum: out is input x itself, and reduce_sum cannot run "
                                                     "in place; use a separate output") + "$"):
        ops.reduce_sum(x, axis=-1, keepdims=True, out=x)
    y = rand((5, 3), low=-2.0, high=2.0)
    with pytest.raises(OverlapError, match=re.escape("reduce_sum: out overlaps input x (partial overlap of the same "
                                                     "memory); use a separate output") + "$"):
        ops.reduce_sum(y, axis=1, out=y[:, 1])
    with pytest.raises(OverlapError, match=re.escape("reduce_sum: out overlaps input x (the same memory in another "
                                                     "layout); use a separate output") + "$"):
        ops.reduce_sum(y, axis=1, out=y[:, 0])
    np.testing.assert_array_equal(x, before)
