"""vector_add (oprt_core.operators.vector_add, numpy-style broadcasting): the reference against explicit broadcast
loops (output shape and index mapping worked out by hand), what the edge cases cover (broadcasts of every kind, a
stride-0 input), the op function, shapes that do not broadcast, in place (an array added to itself; a broadcast
input inside out refused), bytes and flops (a broadcast operand charged at its own size), the custom case, its
aliasing declaration and the shapes of its models cases."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from op_helpers import arrays, assert_ok, dtypes, rand, shapes

import oprt_core.ops as ops
from oprt_core.dtypes import get_dtype
from oprt_core.errors import InvalidArgumentError, OverlapError
from oprt_core.operators.vector_add import SPEC
from oprt_core.spec import Case, TensorCase

DTYPES = ("f32", "f16", "bf16")


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


# -- the reference ----------------------------------------------------------------------------------------------

@given(pair=broadcastable_pair())
def test_reference_vs_broadcast_loop(pair):
    a, b = pair
    got = SPEC.reference([a, b])
    want = broadcast_loop(a, b)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # one float64 add of two narrower floats is exact
    assert SPEC.output_shape([a.shape, b.shape], {}) == want.shape


def test_reference_broadcast_examples():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([10, 20, 30], np.float32)
    np.testing.assert_array_equal(SPEC.reference([a, b]), broadcast_loop(a, b))
    c = np.arange(3, dtype=np.float16).reshape(3, 1)
    d = np.arange(4, dtype=np.float16).reshape(1, 4)
    assert SPEC.reference([c, d]).shape == (3, 4)
    np.testing.assert_array_equal(SPEC.reference([c, d]), broadcast_loop(c, d))


# -- cases ------------------------------------------------------------------------------------------------------

def test_edge_broadcasts():
    edge = SPEC.cases("edge")
    shapes = [tuple(t.shape for t in c.inputs) for c in edge]
    broadcast = [(a, b) for a, b in shapes if a != b]
    assert broadcast, "broadcast inputs for vector_add"
    assert any(len(a) != len(b) for a, b in broadcast), "rank-extending broadcast"
    assert any(len(a) == len(b) and 1 in a and 1 in b for a, b in broadcast), "both inputs broadcast"
    assert any(0 in np.broadcast_shapes(a, b) and a != b for a, b in broadcast), "zero-size broadcast"
    layouts = {t.layout for c in edge for t in c.inputs}
    assert "broadcast0" in layouts, "a stride-0 input"


@pytest.mark.parametrize(("case", "dtype", "nbytes", "flops"), [
    (Case("vector_add", "v", (TensorCase((17, 33)), TensorCase((33,)))), "f16", (561 + 33 + 561) * 2, 561),
    (Case("vector_add", "v", (TensorCase((37, 1)), TensorCase((1, 129)))), "f32", (37 + 129 + 37 * 129) * 4,
     37 * 129),
])
def test_bytes_and_flops(case, dtype, nbytes, flops):
    assert SPEC.bytes_moved(case, dtype) == SPEC.bytes_moved(case, get_dtype(dtype)) == nbytes
    assert SPEC.flops(case) == flops


def test_custom_case():
    c = SPEC.custom_case([3, 4])
    assert [t.shape for t in c.inputs] == [(3, 4), (3, 4)] and c.name == "3x4"


def test_models_cover_hidden_widths_and_bias_adds():
    models = {c.name: c for c in SPEC.cases("models")}
    assert [t.shape for t in models["llama3-70b/hidden+bias/128tok"].inputs] == [(128, 8192), (8192,)]
    assert [t.shape for t in models["deepseek-v3/expert/1tok"].inputs] == [(1, 2048), (1, 2048)]
    two_d = [c for c in models.values() if len(c.shape) == 2]
    assert {4096, 5120, 7168, 8192, 2048, 14336, 18944} <= {c.shape[-1] for c in two_d}
    assert {c.shape[0] for c in two_d} == {1, 128, 4096}


# -- the op function --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_op_function_broadcasting(dtype):
    a, b = rand((4, 1, 5), dtype, 1), rand((3, 1), dtype, 2)
    out = ops.vector_add(a, b)
    assert out.shape == (4, 3, 5)
    assert_ok("vector_add", out, [a, b], dtype)
    row = rand((5,), dtype, 3)
    assert_ok("vector_add", ops.vector_add(rand((2, 5), dtype), row), [rand((2, 5), dtype), row], dtype)
    assert ops.vector_add(rand((0, 5), dtype), row).shape == (0, 5)


def test_not_broadcastable():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(InvalidArgumentError, match=re.escape("vector_add: b has shape (5,), a has (3, 4): shape "
                                                             "mismatch, they do not broadcast together")):
        ops.vector_add(x, np.ones(5, np.float32))
    with pytest.raises(InvalidArgumentError, match="shape mismatch"):
        SPEC.output_shape([(2, 3), (3, 2)], {})
    with pytest.raises(InvalidArgumentError, match="do not broadcast"):
        SPEC.reference([np.ones(3), np.ones(4)])


# -- aliasing ---------------------------------------------------------------------------------------------------

def test_in_place_over_either_input():
    assert SPEC.inplace == ("a", "b")


def test_numpy_broadcast_input_inside_out_is_refused():
    """b is out's first row: written by the first row of out while later rows still read it."""
    a = rand((5, 7), low=-2.0, high=2.0)
    with pytest.raises(OverlapError, match="vector_add: out overlaps input b \\(the same memory in another layout\\); "
                                           "use a separate output, or b itself as out \\(in place\\)$"):
        ops.vector_add(a, a[0], out=a)


def test_numpy_one_array_with_itself_in_place():
    a = rand((9, 11), "bf16", 3, low=-2.0, high=2.0)
    before = a.copy()
    ops.vector_add(a, a, out=a)
    res = SPEC.check(a, [before, before], "bf16")
    assert res.ok, res.message
