"""spec.check on threads (large outputs) judges exactly as on one: same errors, same worst element."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import oprt_core.spec as spec_module
from oprt_core import operators
from oprt_core.spec import to_float64


@pytest.fixture
def small_spans(monkeypatch):
    """Threads from 4096 elements on, in chunks of 256, so a small test array takes the parallel path."""
    monkeypatch.setattr(spec_module, "_PARALLEL_MIN", 4096)
    monkeypatch.setattr(spec_module, "_CHUNK", 256)
    monkeypatch.setattr(spec_module.os, "cpu_count", lambda: 4)


def _serial(monkeypatch):
    monkeypatch.setattr(spec_module, "_PARALLEL_MIN", 1 << 60)


@pytest.mark.parametrize("poison", ["none", "one", "many", "nan", "tie"])
def test_parallel_check_equals_serial(small_spans, monkeypatch, poison):
    spec = operators.spec("relu")
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, 50_001).astype(np.float32)
    out = np.maximum(x, 0)
    if poison == "one":
        out[33_333] += 1.0
    elif poison == "many":
        out[[10, 9000, 40_000]] += np.array([0.5, 2.0, 1.0], np.float32)
    elif poison == "nan":
        out[[100, 30_000]] = [5.0, np.nan]
    elif poison == "tie":  # equal excesses in two spans: the first one is named, as a serial pass names it
        out[[1000, 45_000]] = out[[1000, 45_000]] + 3.0
    assert len(spec_module._spans(out.size)) == 4
    parallel = spec.check(out, [x], "f32")
    _serial(monkeypatch)
    assert len(spec_module._spans(out.size)) == 1
    serial = spec.check(out, [x], "f32")
    assert parallel == serial
    assert parallel.ok is (poison == "none")


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32])
def test_to_float64_on_threads_is_exact(small_spans, dtype):
    x = np.random.default_rng(1).standard_normal(20_000).astype(dtype)
    assert len(spec_module._spans(x.size)) > 1
    got = to_float64(x)
    assert got.dtype == np.float64 and np.array_equal(got, x.astype(np.float32).astype(np.float64))
    assert np.array_equal(to_float64(x[::-2]), got[::-2])  # a view: converted as one piece, layout kept
    assert to_float64(np.zeros(0, dtype)).shape == (0,)
