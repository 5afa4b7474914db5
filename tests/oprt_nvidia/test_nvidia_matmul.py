"""matmul on the GPU against the float64 reference (skips without a GPU): the tiled kernel (matmul_tiled) in every
dtype on odd M, N and K (past and short of the 64 x 64 x 16 tiles), transposed, stepped and reversed operands,
batched products (a transposed weight among them), alpha, K = 0 and an empty output; e4m3 inputs with a bf16 out
(those cases, with c too, the smoke and edge sets, and the decode of every e4m3 code). The case sets' smoke and
edge cases of the default dtypes run in test_nvidia_ops.py's test_case_sets."""

from __future__ import annotations

import numpy as np
import pytest

from oprt_core.compute_ops import matmul_case
from oprt_core.compute_ops import matmul_spec as MATMUL
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


# -- fp8: e4m3 a and b, a bf16 out (and c); the loads decoded to f32 (cuda_fp8.h on NVIDIA, a bit decode on MetaX) --

@pytest.mark.gpu
@pytest.mark.parametrize("case", [*_CASES, matmul_case(37, 29, 41, beta=0.5), matmul_case(9, 11, 13, batch=3,
                                                                                            c_layout="transposed",
                                                                                            beta=-1.0)],
                         ids=lambda c: c.name)
def test_matmul_tiled_e4m3(nvidia_backend, rng, case):
    result, got, _ = _run(nvidia_backend, case, "e4m3", rng)
    assert result.ok, result.message
    assert got.dtype.name == "bfloat16" and np.isfinite(got.astype(np.float32)).all()
    launched = nvidia_backend.last_launch()
    assert launched is None or launched == "matmul_tiled", launched


@pytest.mark.gpu
@pytest.mark.parametrize("case_set", ["smoke", "edge"])
def test_matmul_case_sets_e4m3(nvidia_backend, case_set):
    for case in MATMUL.cases(case_set):
        result, _, _ = _run(nvidia_backend, case, "e4m3", np.random.default_rng(33))
        assert result.ok, f"{case}: {result.message}"


@pytest.mark.gpu
def test_matmul_e4m3_decodes_every_finite_code_exactly(nvidia_backend):
    """a holds each finite e4m3 code (NaN 0x7f and 0xff aside), b = 1: out is each value exactly (e4m3 is a subset
    of bf16), subnormals and +-448 among them; a wrong result here is the decode, not the sum."""
    import ml_dtypes

    b = nvidia_backend
    codes = np.array([c for c in range(256) if c & 0x7F != 0x7F], np.uint8)
    a = codes.view(ml_dtypes.float8_e4m3fn).reshape(-1, 1)
    one = np.ones((1, 1), ml_dtypes.float8_e4m3fn)
    out = b.empty((codes.size, 1), "bf16")
    b.prepare("matmul", [b.to_device(a), b.to_device(one)], out, {})()
    b.synchronize()
    got = b.to_host(out).astype(np.float64).ravel()
    assert np.array_equal(got, a.astype(np.float64).ravel())
    assert got.max() == 448.0 and got.min() == -448.0 and got[1] == 2.0 ** -9
