"""Fixtures of the oprt-nvidia tests.

``nvidia_ext`` is the compiled cffi extension (loads on any machine: the CUDA runtime is linked
statically); ``nvidia_raw`` a CompiledBackend over it, available or not; ``nvidia_backend`` the same
backend, skipping with its availability reason where there is no GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("oprt_nvidia", reason="oprt-nvidia is not installed")


def _contiguous(shape):
    strides, run = [], 1
    for n in reversed(shape):
        strides.append(run)
        run *= max(int(n), 1)
    return tuple(reversed(strides))


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
    avail = nvidia_raw.availability()
    if not avail.ok:
        pytest.skip(f"backend nvidia is unavailable: {avail.reason}")
    return nvidia_raw


@pytest.fixture(scope="session")
def tdesc(nvidia_ext):
    """tdesc(shape, dtype=0, strides=None) -> a new oprt_tensor_desc_t * (contiguous by default)."""
    ffi = nvidia_ext.ffi

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
