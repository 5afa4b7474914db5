"""Aliasing on the GPU, metax: tests/oprt_nvidia/test_nvidia_overlap.py's tests with the metax fixtures (the
launch check is oprt_validate.h's oprt_check_alias, shared by both libraries)."""

from __future__ import annotations

import pytest
from gpu_helpers import reuse_tests

import oprt_core.ops as ops

MAPPING = {"nvidia_backend": "metax_backend", "nvidia_ext": "metax_ext", "nvidia_raw": "metax_raw"}

globals().update(reuse_tests("oprt_nvidia/test_nvidia_overlap.py", MAPPING))


@pytest.fixture(autouse=True)
def fresh_cache():
    ops.clear_cache()
    yield
    ops.clear_cache()
