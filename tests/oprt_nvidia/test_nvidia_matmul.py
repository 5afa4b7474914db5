"""matmul on the GPU against the float64 reference (skips without a GPU): the tiled kernel (matmul_tiled) in every
dtype on odd M, N and K (past and short of the 64 x 64 x 16 tiles), transposed, stepped and reversed operands,
batched products (a transposed weight among them), alpha, K = 0 and an empty output; the epilogue's beta * c with c
in every layout, c given with beta 0 (NaN in it, not read), in place over c and a partial overlap refused. The case
sets' smoke and edge cases (c among them) run in test_nvidia_ops.py's test_case_sets."""

from __future__ import annotations

import numpy as np
import pytest

import oprt_core.errors as E
from oprt_core.compute_ops import matmul_case
from oprt_core.compute_ops import matmul_spec as MATMUL
from oprt_core.device_array import DeviceArray
from oprt_core.dtypes import DTYPES


def _run(b, case, dtype, rng):
    inputs = MATMUL.make_inputs(case, dtype, rng)
    params = MATMUL.validate_params(case.param_dict)
    dev = [b.to_device(x) for x in inputs]
    out = MATMUL.new_outputs(b, [x.shape for x in inputs], params, dtype)
    b.fill_nan(out)
    b.prepare("matmul", dev, out, params)()
    b.synchronize()
    return MATMUL.check(b.to_host(out), inputs, dtype, params), b.to_host(out), inputs


_CASES = [
    matmul_case(64, 64, 16),                                       # one tile, one k step
    matmul_case(65, 63, 17),                                       # one past / short of a tile on every dim
    matmul_case(1, 1, 1), matmul_case(1, 300, 77), matmul_case(300, 1, 77),
    matmul_case(129, 200, 1000),                                   # many k steps
    matmul_case(257, 130, 96, a_layout="transposed"),              # a column-major
    matmul_case(257, 130, 96, b_layout="transposed"),              # b column-major (x @ W.T)
    matmul_case(77, 45, 33, a_layout="transposed", b_layout="transposed"),
    matmul_case(41, 39, 70, a_layout="step2", b_layout="reversed"),
    matmul_case(40, 50, 60, a_layout="offset1", b_layout="offset1"),
    matmul_case(33, 71, 45, batch=5),
    matmul_case(70, 31, 129, batch=3, b_layout="transposed", alpha=-0.75),
    matmul_case(17, 19, 23, batch=2, a_layout="transposed", alpha=2.0),
    matmul_case(100, 90, 513, allow_tf32=True),
    # out = alpha * a @ b + beta * c: c in every layout, batched, K = 0 (out = beta * c)
    matmul_case(65, 63, 17, beta=1.0),
    matmul_case(257, 130, 96, b_layout="transposed", c_layout="transposed", alpha=0.5, beta=-1.5),
    matmul_case(41, 39, 70, a_layout="step2", c_layout="step2", beta=0.25),
    matmul_case(40, 50, 60, c_layout="offset1", beta=2.0),
    matmul_case(33, 71, 45, batch=5, c_layout="reversed", alpha=-0.75, beta=0.5),
    matmul_case(70, 31, 129, batch=3, b_layout="transposed", beta=-1.0),
    matmul_case(9, 7, 0, beta=3.0),
]


@pytest.mark.gpu
@pytest.mark.parametrize("case", _CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_matmul_tiled(nvidia_backend, rng, case, dtype):
    result, got, _ = _run(nvidia_backend, case, dtype, rng)
    assert result.ok, result.message
    assert np.isfinite(got.astype(np.float32)).all()  # every element written over the NaN fill
    launched = nvidia_backend.last_launch()
    assert launched is None or launched == "matmul_tiled", launched  # None: a backend that cannot say (metax)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_matmul_k0_gives_zeros_and_empty_output_launches_nothing(nvidia_backend, rng, dtype):
    result, got, _ = _run(nvidia_backend, matmul_case(9, 7, 0), dtype, rng)
    assert result.ok, result.message
    assert got.shape == (9, 7) and not got.astype(np.float32).any()  # written over the NaN fill: zeros
    result, got, _ = _run(nvidia_backend, matmul_case(0, 7, 5), dtype, rng)
    assert result.ok and got.shape == (0, 7)
    launched = nvidia_backend.last_launch()
    assert launched is None or launched == "none", launched


@pytest.mark.gpu
def test_matmul_wrong_kernel_is_caught(nvidia_backend, rng):
    """The check these tests rely on fails on a result one product term off (here: alpha applied twice)."""
    case = matmul_case(65, 63, 17, alpha=0.5)
    result, got, inputs = _run(nvidia_backend, case, "f32", rng)
    assert result.ok, result.message
    assert not MATMUL.check(got * 0.5, inputs, "f32", {"alpha": 0.5}).ok


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_matmul_c_with_beta_zero_is_not_read(nvidia_backend, rng, dtype):
    """c given, beta 0: the kernel does not read it (a NaN there would reach every output element otherwise)."""
    b = nvidia_backend
    case = matmul_case(65, 70, 33, c_layout="contiguous")
    a, w, c = MATMUL.make_inputs(case, dtype, rng)
    c[...] = np.nan
    out = b.empty((65, 70), dtype)
    b.fill_nan(out)
    b.prepare("matmul", [b.to_device(x) for x in (a, w, c)], out, MATMUL.validate_params({}))()
    b.synchronize()
    got = b.to_host(out)
    assert np.isfinite(got.astype(np.float32)).all()
    assert MATMUL.check(got, [a, w], dtype).ok


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_matmul_in_place_over_c_and_partial_overlap_refused(nvidia_backend, rng, dtype):
    """out = c itself (C = A @ B + beta C: each element's c read by the thread that then writes it), over several
    tiles and a transposed c; out one row into c's memory is refused at launch (OPRT_STATUS_OVERLAP)."""
    b = nvidia_backend
    case = matmul_case(130, 70, 40, c_layout="transposed", beta=-0.5)
    a, w, c = MATMUL.make_inputs(case, dtype, rng)
    params = MATMUL.validate_params(case.param_dict)
    da, dw = b.to_device(a), b.to_device(w)
    dc = b.to_device(c)
    assert dc.strides_elements == (1, 130)  # the transposed layout reached the device
    b.prepare("matmul", [da, dw, dc], dc, params)()
    b.synchronize()
    got = b.to_host(dc)
    res = MATMUL.check(got, [a, w, c], dtype, params)
    assert res.ok, res.message
    assert not MATMUL.check(got, [a, w], dtype, {}).ok
    item = DTYPES[dtype].itemsize
    buf = b.empty((131, 70), dtype)
    c_view = DeviceArray(b, buf.ptr, (130, 70), (70, 1), dtype, buf)
    out_view = DeviceArray(b, buf.ptr + 70 * item, (130, 70), (70, 1), dtype, buf)
    with pytest.raises(E.OverlapError, match="matmul: out overlaps input c"):
        b.prepare("matmul", [da, dw, c_view], out_view, params)()
