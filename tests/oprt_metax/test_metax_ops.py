"""Correctness of every op on the GPU for backend metax (skips without a GPU).

The test functions are tests/oprt_nvidia/test_nvidia_ops.py's own (every case set of every op in every
dtype against spec.check, extra layouts, permuted and misaligned views, descriptor reuse), run here with
the metax fixtures; only what names the nvidia backend or needs 4 GiB is written anew below.
"""

from __future__ import annotations

import numpy as np
import pytest
from gpu_helpers import check_torch_inputs, reuse_tests

import oprt_core.ops as ops
from oprt_core import operators

MAPPING = {"nvidia_backend": "metax_backend", "nvidia_ext": "metax_ext", "nvidia_raw": "metax_raw"}

globals().update(reuse_tests(
    "oprt_nvidia/test_nvidia_ops.py", MAPPING,
    # backend="nvidia" inside: rewritten below; the 2^31-element tests need their module fixture (4 GiB); the
    # metax plugin reports no kernel names (no last_launch), so the kernel column test is nvidia's alone
    exclude=("test_cupy_inputs", "test_torch_inputs", "test_copy_over_2_31_elements",
             "test_reduce_sum_over_2_31_elements", "test_bench_rows_name_their_kernels"),
))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_torch_inputs(metax_backend, rng, dtype):
    """Zero-copy torch tensors: only the nvcc-shim flavour holds CUDA memory."""
    if not metax_backend.cuda_interop:
        pytest.skip("the mxcc flavour's memory is MACA memory: no __cuda_array_interface__")
    check_torch_inputs("metax", dtype)


@pytest.mark.gpu
def test_cupy_inputs(metax_backend, rng):
    if not metax_backend.cuda_interop:
        pytest.skip("the mxcc flavour's memory is MACA memory: no __cuda_array_interface__")
    cp = pytest.importorskip("cupy")
    x_host = rng.uniform(-5, 5, (33, 1000)).astype("float32")
    out = ops.softmax(cp.asarray(x_host), backend="metax")
    got = cp.asnumpy(cp.asarray(out))
    result = operators.spec("softmax").check(got, [x_host], "f32", {"axis": -1})
    assert result.ok, result.message
    s = ops.reduce_sum(cp.asarray(x_host).T, axis=0, backend="metax")
    np.testing.assert_allclose(cp.asnumpy(cp.asarray(s)).astype(np.float64), x_host.astype(np.float64).sum(1),
                               rtol=1e-4, atol=1e-3)
