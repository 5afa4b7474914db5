"""Each core op's float64 reference against an independent formulation.

- reduce_sum: math.fsum per output element (axis, negative axis, axis=None, keepdims)
- copy, relu: elementwise Python loops
- vector_add: explicit broadcasting loops (output shape and index mapping worked out by hand)
- softmax: rows sum to one, shift invariance, a direct exp/fsum on small magnitudes, no overflow on large ones

Hypothesis draws shapes (0..4 dims, extents 0..9), strided views (transposed, stepped, reversed), axes
(negative included) and dtypes.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes

from oprt_core import operators
from oprt_core.dtypes import DTYPES

EPS64 = float(np.finfo(np.float64).eps)

dtypes = st.sampled_from([d.numpy for d in DTYPES.values()])
shapes = array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=9)
VIEWS = ("contiguous", "transposed", "swapped", "stepped", "reversed")


@st.composite
def arrays(draw, shape=None, dtype=None, low=-1.0, high=1.0):
    """An array of logical ``shape`` laid out as a drawn strided view of a larger buffer."""
    shape = draw(shapes) if shape is None else shape
    dtype = draw(dtypes) if dtype is None else dtype
    view = draw(st.sampled_from(VIEWS))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    nd = len(shape)
    if view == "transposed" and nd >= 2:
        base = rng.uniform(low, high, shape[::-1]).astype(dtype)
        x = base.transpose()
    elif view == "swapped" and nd >= 2:
        i, j = draw(st.sampled_from(list(itertools.combinations(range(nd), 2))))
        perm = list(range(nd))
        perm[i], perm[j] = perm[j], perm[i]
        base = rng.uniform(low, high, tuple(shape[p] for p in perm)).astype(dtype)
        x = base.transpose(perm)
    elif view == "stepped" and nd >= 1:
        ax = draw(st.integers(0, nd - 1))
        step = draw(st.integers(2, 3))
        big = tuple(s * step if i == ax else s for i, s in enumerate(shape))
        base = rng.uniform(low, high, big).astype(dtype)
        x = base[tuple(slice(None, None, step) if i == ax else slice(None) for i in range(nd))]
    elif view == "reversed" and nd >= 1:
        ax = draw(st.integers(0, nd - 1))
        base = rng.uniform(low, high, shape).astype(dtype)
        x = base[tuple(slice(None, None, -1) if i == ax else slice(None) for i in range(nd))]
    else:
        x = np.asarray(rng.uniform(low, high, shape)).astype(dtype)
    assert x.shape == tuple(shape)
    return x


def axes(nd: int, allow_none: bool):
    ints = st.integers(-nd, nd - 1) if nd else st.nothing()
    return st.one_of(ints, st.none()) if allow_none else ints


# -------------------------------------------------------------------------------------------------
# reduce_sum against math.fsum


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


@given(data=st.data())
def test_reduce_sum_vs_fsum(data):
    x = data.draw(arrays())
    axis = data.draw(axes(x.ndim, allow_none=True))
    keepdims = data.draw(st.booleans())
    got = operators.spec("reduce_sum").reference([x], {"axis": axis, "keepdims": keepdims})
    assert_sums_close(got, fsum_reduce(x, axis, keepdims), x, axis, keepdims)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, -2, -3])
def test_reduce_sum_vs_fsum_fixed(axis, keepdims):
    x = np.random.default_rng(5).uniform(-1, 1, (4, 7, 9)).astype(np.float32)[:, ::-1, :]
    got = operators.spec("reduce_sum").reference([x], {"axis": axis, "keepdims": keepdims})
    assert_sums_close(got, fsum_reduce(x, axis, keepdims), x, axis, keepdims)


def test_reduce_sum_catastrophic_cancellation_vs_fsum():
    # values whose naive float64 sum loses everything; fsum and a reference within n*eps*sum|x| agree
    x = np.array([1e16, 1.0, -1e16, 3.0, 1e-3], np.float64)
    want = fsum_reduce(x, None, False)
    assert float(want) == math.fsum([1e16, 1.0, -1e16, 3.0, 1e-3])
    got = operators.spec("reduce_sum").reference([x], {"axis": None})
    assert_sums_close(got, want, x, None, False)


def test_reduce_sum_empty_reductions_are_zero():
    spec = operators.spec("reduce_sum")
    x = np.empty((0, 5), np.float16)
    np.testing.assert_array_equal(spec.reference([x], {"axis": 0}), np.zeros(5))
    assert spec.reference([x], {"axis": -1}).shape == (0,)
    assert float(spec.reference([x], {"axis": None})) == 0.0
    assert spec.reference([np.float32(2.5)], {"axis": None}) == 2.5


# -------------------------------------------------------------------------------------------------
# copy and relu: elementwise loops


@given(x=arrays())
def test_copy_vs_loop(x):
    got = operators.spec("copy").reference([x])
    assert got.shape == x.shape and got.dtype == np.float64
    for idx in np.ndindex(x.shape):
        assert got[idx] == float(x[idx])
    if x.size:
        assert not np.shares_memory(got, x)


@given(x=arrays(), slope=st.one_of(st.just(0.0), st.just(0), st.floats(-2.0, 2.0, allow_nan=False)))
def test_relu_vs_loop(x, slope):
    got = operators.spec("relu").reference([x], {"negative_slope": slope})
    assert got.shape == x.shape
    for idx in np.ndindex(x.shape):
        v = float(x[idx])
        assert got[idx] == (v if v > 0 else v * float(slope))


def test_relu_default_slope_zeroes_negatives():
    x = np.array([-3.0, -0.5, 0.25, 4.0], np.float32)
    np.testing.assert_array_equal(operators.spec("relu").reference([x]), [0.0, 0.0, 0.25, 4.0])


# -------------------------------------------------------------------------------------------------
# vector_add: explicit broadcast loops


def broadcast_loop(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    shape = []
    for da, db in zip(sa, sb):
        assert da == db or da == 1 or db == 1, "not broadcastable"
        shape.append(db if da == 1 else da)
    a2, b2 = a.reshape(sa), b.reshape(sb)
    out = np.empty(shape)
    for idx in np.ndindex(*shape):
        ia = tuple(0 if d == 1 else i for i, d in zip(idx, sa))
        ib = tuple(0 if d == 1 else i for i, d in zip(idx, sb))
        out[idx] = float(a2[ia]) + float(b2[ib])
    return out


@st.composite
def broadcastable_pair(draw):
    out_shape = draw(shapes)
    dtype = draw(dtypes)

    def operand():
        nd = draw(st.integers(0, len(out_shape)))
        tail = out_shape[len(out_shape) - nd:]
        return tuple(1 if draw(st.booleans()) else s for s in tail)

    a_shape, b_shape = operand(), operand()
    if draw(st.booleans()):
        a_shape = out_shape
    return draw(arrays(a_shape, dtype)), draw(arrays(b_shape, dtype))


@given(pair=broadcastable_pair())
def test_vector_add_vs_broadcast_loop(pair):
    a, b = pair
    got = operators.spec("vector_add").reference([a, b])
    want = broadcast_loop(a, b)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # one float64 add of two narrower floats is exact
    assert operators.spec("vector_add").output_shape([a.shape, b.shape], {}) == want.shape


def test_vector_add_broadcast_examples():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([10, 20, 30], np.float32)
    np.testing.assert_array_equal(operators.spec("vector_add").reference([a, b]), broadcast_loop(a, b))
    c = np.arange(3, dtype=np.float16).reshape(3, 1)
    d = np.arange(4, dtype=np.float16).reshape(1, 4)
    assert operators.spec("vector_add").reference([c, d]).shape == (3, 4)
    np.testing.assert_array_equal(operators.spec("vector_add").reference([c, d]), broadcast_loop(c, d))


# -------------------------------------------------------------------------------------------------
# softmax


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
def test_softmax_sums_to_one_and_is_a_distribution(data):
    x, axis = _softmax_input(data, low=-30.0, high=30.0)
    y = operators.spec("softmax").reference([x], {"axis": axis})
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
def test_softmax_shift_invariance(data, c):
    x, axis = _softmax_input(data)
    x64 = x.astype(np.float64)
    spec = operators.spec("softmax")
    y = spec.reference([x64], {"axis": axis})
    y_shift = spec.reference([x64 + c], {"axis": axis})
    # x + c rounds by <= |c| * eps64, which moves each probability by about that, relatively
    np.testing.assert_allclose(y_shift, y, rtol=64 * (abs(c) + 1) * EPS64, atol=0)


@given(data=st.data())
def test_softmax_vs_direct_exp_sum_small_magnitudes(data):
    x, axis = _softmax_input(data, low=-5.0, high=5.0)
    got = operators.spec("softmax").reference([x], {"axis": axis})
    np.testing.assert_allclose(got, softmax_rows_direct(x, axis), rtol=64 * EPS64, atol=0)


@pytest.mark.parametrize("dtype", [d.numpy for d in DTYPES.values()])
def test_softmax_large_magnitudes_do_not_overflow(dtype):
    hi = {"float32": 1000.0, "float16": 60000.0, "bfloat16": 1e30}[np.dtype(dtype).name]
    rng = np.random.default_rng(9)
    x = (rng.choice([-1.0, 1.0], (6, 50)) * rng.uniform(hi / 10, hi, (6, 50))).astype(dtype)
    y = operators.spec("softmax").reference([x], {"axis": -1})
    assert np.isfinite(y).all()
    np.testing.assert_allclose(y.sum(axis=-1), 1.0, atol=1e-12)
    # the row maximum dominates: its probability is at least 1/n
    assert (y.max(axis=-1) >= 1 / 50).all()


def test_softmax_row_of_one_and_empty():
    spec = operators.spec("softmax")
    x = np.random.default_rng(1).uniform(-9, 9, (7, 1)).astype(np.float16)
    np.testing.assert_array_equal(spec.reference([x], {"axis": -1}), np.ones((7, 1)))
    assert spec.reference([np.empty((0, 5), np.float32)], {"axis": -1}).shape == (0, 5)
    assert spec.reference([np.empty((5, 0), np.float32)], {"axis": 0}).shape == (5, 0)


def test_softmax_known_values():
    x = np.log(np.array([[1.0, 2.0, 5.0], [1.0, 1.0, 2.0]], np.float32))
    np.testing.assert_allclose(operators.spec("softmax").reference([x]), [[0.125, 0.25, 0.625], [0.25, 0.25, 0.5]],
                               rtol=1e-6)
    np.testing.assert_allclose(operators.spec("softmax").reference([x], {"axis": 0}).sum(axis=0), 1.0)


# -------------------------------------------------------------------------------------------------
# every reference: float64 out, inputs untouched, any view


@given(data=st.data(), op=st.sampled_from(["copy", "relu", "reduce_sum", "softmax"]))
def test_references_are_float64_and_do_not_touch_inputs(data, op):
    x = data.draw(arrays(data.draw(array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=9))))
    before = x.copy()
    spec = operators.spec(op)
    params = {"axis": data.draw(axes(x.ndim, allow_none=op == "reduce_sum"))} if op in ("reduce_sum",
                                                                                        "softmax") else {}
    y = spec.reference([x], params)
    assert y.dtype == np.float64
    assert y.shape == spec.output_shape([x.shape], params)
    np.testing.assert_array_equal(x, before)
    contiguous = spec.reference([np.ascontiguousarray(x)], params)
    if op in ("reduce_sum", "softmax"):  # numpy's summation order may follow the layout
        np.testing.assert_allclose(y, contiguous, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(y, contiguous)
