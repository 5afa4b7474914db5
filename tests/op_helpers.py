"""Helpers of the tests about ops: the op folders' tests (``oprt_core/operators/<op>/test_<op>.py``) and the tests over
every op in tests/oprt_core.

- hypothesis strategies: :func:`arrays` (an array of a drawn or given shape and dtype, laid out as a drawn strided
  view of a larger buffer), :func:`axes` (an axis of an ``nd``-dim array, negative ones included), ``shapes`` and
  ``dtypes``;
- :func:`rand` (a seeded uniform array of an oprt dtype) and :func:`assert_ok` (a result within its op's budget, in
  the dtype it was asked in).
"""

from __future__ import annotations

import itertools
import re
from functools import cache
from pathlib import Path

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes

from oprt_core import operators
from oprt_core.dtypes import DTYPES, get_dtype

EPS64 = float(np.finfo(np.float64).eps)

dtypes = st.sampled_from([d.numpy for d in DTYPES.values()])
shapes = array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=9)
VIEWS = ("contiguous", "transposed", "swapped", "stepped", "reversed")


@st.composite
def arrays(draw, shape=None, dtype=None, low=-1.0, high=1.0):
    """An array of logical ``shape`` laid out as a drawn strided view of a larger buffer."""
    shape = draw(shapes) if shape is None else shape
    dtype = draw(dtypes) if dtype is None else dtype
    view = draw(st.sampled_from(VIEWS))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    nd = len(shape)
    if view == "transposed" and nd >= 2:
        base = rng.uniform(low, high, shape[::-1]).astype(dtype)
        x = base.transpose()
    elif view == "swapped" and nd >= 2:
        i, j = draw(st.sampled_from(list(itertools.combinations(range(nd), 2))))
        perm = list(range(nd))
        perm[i], perm[j] = perm[j], perm[i]
        base = rng.uniform(low, high, tuple(shape[p] for p in perm)).astype(dtype)
        x = base.transpose(perm)
    elif view == "stepped" and nd >= 1:
        ax = draw(st.integers(0, nd - 1))
        step = draw(st.integers(2, 3))
        big = tuple(s * step if i == ax else s for i, s in enumerate(shape))
        base = rng.uniform(low, high, big).astype(dtype)
        x = base[tuple(slice(None, None, step) if i == ax else slice(None) for i in range(nd))]
    elif view == "reversed" and nd >= 1:
        ax = draw(st.integers(0, nd - 1))
        base = rng.uniform(low, high, shape).astype(dtype)
        x = base[tuple(slice(None, None, -1) if i == ax else slice(None) for i in range(nd))]
    else:
        x = np.asarray(rng.uniform(low, high, shape)).astype(dtype)
    assert x.shape == tuple(shape)
    return x


def axes(nd: int, allow_none: bool):
    """An axis of an ``nd``-dim array (negative ones included), or None too where ``allow_none``."""
    ints = st.integers(-nd, nd - 1) if nd else st.nothing()
    return st.one_of(ints, st.none()) if allow_none else ints


def rand(shape, dtype="f32", seed=0, low=-1.0, high=1.0) -> np.ndarray:
    """Uniform values in [low, high) of ``shape`` in oprt dtype ``dtype``, from ``seed``."""
    return np.random.default_rng(seed).uniform(low, high, shape).astype(get_dtype(dtype).numpy)


def assert_ok(op: str, out, inputs, dtype: str, **params) -> None:
    """``out`` is within op ``op``'s budget of the reference of ``inputs`` and of dtype ``dtype``."""
    res = operators.spec(op).check(out, inputs, dtype, params)
    assert res.ok, res.message
    assert out.dtype == get_dtype(dtype).numpy


HOST_SOURCE = Path(__file__).parent / "oprt_core" / "host_lib" / "oprt_host.c"


@cache
def host_ops() -> frozenset[str]:
    """The ops the host C library (tests/oprt_core/host_lib/oprt_host.c) implements: its ``OPRT_DEFINE_OP`` lines. An
    op of oprt.h it lacks (one just added in its folder) is unsupported there, as on any library built before the op,
    so the tests over the host library take these."""
    return frozenset(re.findall(r"^OPRT_DEFINE_OP\((\w+),", HOST_SOURCE.read_text(encoding="utf-8"), re.M))


def registry_of(backend, plugin: str, distribution: str = "tests"):
    """A registry of the built-in ops and this one backend, registered in-process by a plugin of that name (installed
    entry points are not loaded)."""
    from oprt_core import hookimpl
    from oprt_core.plugins import Registry, get_plugin_manager

    class _Register:
        @hookimpl
        def oprt_register_backends(self, register):
            register(backend)

    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(_Register(), plugin, distribution)
    return Registry(pm)
