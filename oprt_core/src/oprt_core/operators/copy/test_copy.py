"""copy (oprt_core.operators.copy): the reference against an element-by-element loop on any strided view, the op
function on contiguous and transposed inputs, bytes and flops, its aliasing declaration and C params, and the widths
of its models cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from op_helpers import arrays, rand

import oprt_core.ops as ops
from oprt_core import cdecl
from oprt_core.dtypes import get_dtype
from oprt_core.operators.copy import SPEC
from oprt_core.spec import Case, TensorCase

DTYPES = ("f32", "f16", "bf16")


@given(x=arrays())
def test_reference_vs_loop(x):
    got = SPEC.reference([x])
    assert got.shape == x.shape and got.dtype == np.float64
    for idx in np.ndindex(x.shape):
        assert got[idx] == float(x[idx])
    if x.size:
        assert not np.shares_memory(got, x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_op_function(dtype):
    x = rand((5, 7), dtype)
    out = ops.copy(x)
    np.testing.assert_array_equal(out, x)
    assert not np.shares_memory(out, x)
    view = rand((6, 14), dtype, 1)[:, ::2].T
    np.testing.assert_array_equal(ops.copy(view), view)


@pytest.mark.parametrize(("case", "dtype", "nbytes", "flops"), [
    (Case("copy", "c", (TensorCase((1000,)),)), "f32", 8000, 0),
    (Case("copy", "c", (TensorCase((33, 65), "transposed"),)), "bf16", 2 * 33 * 65 * 2, 0),
])
def test_bytes_and_flops(case, dtype, nbytes, flops):
    assert SPEC.bytes_moved(case, dtype) == SPEC.bytes_moved(case, get_dtype(dtype)) == nbytes
    assert SPEC.flops(case) == flops


def test_in_place_over_x_and_no_c_params():
    assert SPEC.inplace == ("x",)
    assert cdecl.c_params(SPEC, {}) == ()


def test_models_cover_hidden_widths():
    two_d = [c for c in SPEC.cases("models") if len(c.shape) == 2]
    assert {4096, 5120, 7168, 8192, 2048, 14336, 18944} <= {c.shape[-1] for c in two_d}
    assert {c.shape[0] for c in two_d} == {1, 128, 4096}
