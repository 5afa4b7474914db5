"""Every one-input op's float64 reference: float64 out, of the declared output shape, the input untouched, on any
strided view as on its contiguous copy. Hypothesis draws shapes (1..4 dims, extents 0..9), strided views (transposed,
stepped, reversed), axes (negative included; None where the op allows it) and dtypes. Each op's reference against an
independent formulation is in its folder (oprt_core/operators/<op>/test_<op>.py).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes
from op_helpers import arrays, axes

from oprt_core import operators

ONE_INPUT = [spec for spec in operators.specs() if spec.n_inputs == 1]


def test_there_are_one_input_ops():
    assert ONE_INPUT


@given(data=st.data(), spec=st.sampled_from(ONE_INPUT))
def test_references_are_float64_and_do_not_touch_inputs(data, spec):
    x = data.draw(arrays(data.draw(array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=9))))
    before = x.copy()
    axis = next((p for p in spec.params if p.name == "axis"), None)
    params = {"axis": data.draw(axes(x.ndim, allow_none=axis.allow_none))} if axis else {}
    y = spec.reference([x], params)
    assert y.dtype == np.float64
    assert y.shape == spec.output_shape([x.shape], params)
    np.testing.assert_array_equal(x, before)
    contiguous = spec.reference([np.ascontiguousarray(x)], params)
    if axis:  # numpy's summation order along the axis may follow the layout
        np.testing.assert_allclose(y, contiguous, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(y, contiguous)
