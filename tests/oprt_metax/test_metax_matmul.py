"""matmul on the GPU, metax: tests/oprt_nvidia/test_nvidia_matmul.py's tests with the metax fixtures (one shared
kernel source, matmul.cu)."""

from __future__ import annotations

from gpu_helpers import reuse_tests

MAPPING = {"nvidia_backend": "metax_backend", "nvidia_ext": "metax_ext", "nvidia_raw": "metax_raw"}

globals().update(reuse_tests("oprt_nvidia/test_nvidia_matmul.py", MAPPING))
