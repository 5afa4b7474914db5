"""Fixtures of the oprt-metax tests.

``metax_ext`` is the compiled cffi extension; ``metax_raw`` a CompiledBackend over it, available or not;
``metax_backend`` the same backend, skipping with its availability reason where there is no GPU. Tests
that need the installed package skip without it; the dry-run plan tests need only the source tree.
"""

from __future__ import annotations

import numpy as np
import pytest


def _contiguous(shape):
    strides, run = [], 1
    for n in reversed(shape):
        strides.append(run)
        run *= max(int(n), 1)
    return tuple(reversed(strides))


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
    avail = metax_raw.availability()
    if not avail.ok:
        pytest.skip(f"backend metax is unavailable: {avail.reason}")
    return metax_raw


@pytest.fixture(scope="session")
def tdesc(metax_ext):
    """tdesc(shape, dtype=0, strides=None) -> a new oprt_tensor_desc_t * (contiguous by default)."""
    ffi = metax_ext.ffi

    def make(shape, dtype=0, strides=None):
        shape = tuple(shape)
        strides = _contiguous(shape) if strides is None else tuple(strides)
        t = ffi.new("oprt_tensor_desc_t *")
        t.dtype = dtype
        t.ndim = len(shape)
        for i, (n, s) in enumerate(zip(shape, strides)):
            t.shape[i] = n
            t.strides[i] = s
        return t

    return make


@pytest.fixture
def rng(request):
    """A generator seeded from the test's id: fresh but reproducible inputs per test."""
    return np.random.default_rng(abs(hash(request.node.nodeid)) % (1 << 32))
