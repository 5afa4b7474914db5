"""Fixtures of the oprt-metax tests.

``metax_ext`` is the compiled cffi extension; ``metax_raw`` a CompiledBackend over it, available or not;
``metax_backend`` the same backend, skipping with its availability reason where there is no GPU. Tests
that need the installed package skip without it; the dry-run plan tests need only the source tree. The
fixtures' bodies are shared with tests/oprt_nvidia through tests/gpu_helpers.py.
"""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("gpu_helpers")  # before its first import: its asserts report as a test's

from gpu_helpers import available_or_skip, seeded_rng, tdesc_maker  # noqa: E402


@pytest.fixture(scope="session")
def metax_pkg():
    return pytest.importorskip("oprt_metax", reason="oprt-metax is not installed")


@pytest.fixture(scope="session")
def metax_ext(metax_pkg):
    return metax_pkg.load_extension()


@pytest.fixture(scope="session")
def metax_raw(metax_pkg):
    from oprt_metax.plugin import make_backend

    return make_backend()


@pytest.fixture(scope="session")
def metax_backend(metax_raw):
    return available_or_skip(metax_raw, "metax")


@pytest.fixture(scope="session")
def tdesc(metax_ext):
    """tdesc(shape, dtype=0, strides=None) -> a new oprt_tensor_desc_t * (contiguous by default)."""
    return tdesc_maker(metax_ext.ffi)


@pytest.fixture
def rng(request):
    """A generator seeded from the test's id: fresh but reproducible inputs per test."""
    return seeded_rng(request)
