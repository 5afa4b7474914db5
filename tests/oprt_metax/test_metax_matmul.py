"""matmul on the GPU, metax: tests/oprt_nvidia/test_nvidia_matmul.py's tests with the metax fixtures (one shared
kernel source, matmul.cu), but those of the CUTLASS kernels, which the metax build never has."""

from __future__ import annotations

from gpu_helpers import load_test_module, reuse_tests

MAPPING = {"nvidia_backend": "metax_backend", "nvidia_ext": "metax_ext", "nvidia_raw": "metax_raw"}

globals().update(reuse_tests("oprt_nvidia/test_nvidia_matmul.py", MAPPING,
                             exclude=load_test_module("oprt_nvidia/test_nvidia_matmul.py").CUTLASS_TESTS))
