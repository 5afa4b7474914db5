"""Fixtures of the oprt-nvidia tests.

``nvidia_ext`` is the compiled cffi extension (loads on any machine: the CUDA runtime is linked
statically); ``nvidia_raw`` a CompiledBackend over it, available or not; ``nvidia_backend`` the same
backend, skipping with its availability reason where there is no GPU. The fixtures' bodies are shared
with tests/oprt_metax through tests/gpu_helpers.py.
"""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("gpu_helpers")  # before its first import: its asserts report as a test's
pytest.importorskip("oprt_nvidia", reason="oprt-nvidia is not installed")

from gpu_helpers import available_or_skip, seeded_rng, tdesc_maker  # noqa: E402


@pytest.fixture(scope="session")
def nvidia_ext():
    from oprt_nvidia import load_extension

    return load_extension()


@pytest.fixture(scope="session")
def nvidia_raw():
    from oprt_nvidia.plugin import make_backend

    return make_backend()


@pytest.fixture(scope="session")
def nvidia_backend(nvidia_raw):
    return available_or_skip(nvidia_raw, "nvidia")


@pytest.fixture(scope="session")
def tdesc(nvidia_ext):
    """tdesc(shape, dtype=0, strides=None) -> a new oprt_tensor_desc_t * (contiguous by default)."""
    return tdesc_maker(nvidia_ext.ffi)


@pytest.fixture
def rng(request):
    """A generator seeded from the test's id: fresh but reproducible inputs per test."""
    return seeded_rng(request)
