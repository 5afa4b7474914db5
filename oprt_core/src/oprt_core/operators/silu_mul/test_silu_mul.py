"""silu_mul (oprt_core.operators.silu_mul): the reference against an element-by-element loop, on views, and closed
forms (an exp that overflows float64 included); the budget against a swapped gate; a packed gate-up buffer through
views; real hidden sizes in the case sets; shape errors, bytes, flops, the custom case; the op function; the host C
library (strided views, validation, in place on gate) and fuzzed against the reference; liger's refusal of a 0-d
input."""

from __future__ import annotations

import inspect
import math

import ml_dtypes
import numpy as np
import pytest
from gpu_helpers import run_checked
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import oprt_core.errors as E
import oprt_core.ops as ops
from oprt_core.dtypes import DTYPES
from oprt_core.errors import InvalidArgumentError
from oprt_core.operators.silu_mul import SPEC as SILU
from oprt_core.operators.silu_mul import silu_mul_case
from oprt_core.operators.silu_mul.baselines import IMPLS
from oprt_core.spec import LAYOUTS


def _rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    v = rng.uniform(-1.0, 1.0, shape)
    v[v == 0.0] = 0.5  # never zeros
    return v


def loop_silu_mul(g: np.ndarray, u: np.ndarray) -> np.ndarray:
    flat = [float(a) / (1.0 + math.exp(-float(a))) * float(c) for a, c in zip(g.reshape(-1), u.reshape(-1))]
    return np.array(flat).reshape(g.shape)


def _silu_mul_f64(g: np.ndarray, u: np.ndarray) -> np.ndarray:
    g64 = g.astype(np.float64)
    return g64 / (1 + np.exp(-g64)) * u


# -- the reference ----------------------------------------------------------------------------------------------

def test_reference_of_non_contiguous_views():
    rng = np.random.default_rng(3)
    x = _rand(rng, 31, 2 * 65)[:, ::2]  # stepped
    xt = _rand(rng, 65, 31).T  # transposed
    np.testing.assert_allclose(SILU.reference([x, xt]), loop_silu_mul(x, xt), rtol=1e-14)


def test_closed_forms():
    # silu(0.5 ln 3 ... ): sigmoid(ln 3) = 3/4, so silu_mul(ln 3, 2) = 1.5 ln 3
    g = np.array([math.log(3.0), -math.log(3.0)])
    np.testing.assert_allclose(SILU.reference([g, np.array([2.0, 4.0])]),
                               [1.5 * math.log(3.0), -math.log(3.0)], rtol=1e-15)
    # a gate below -709 (exp overflows float64): silu is -0 to the reference, without a warning
    with np.errstate(all="raise"):
        assert SILU.reference([np.array([-800.0]), np.array([1.0])])[0] == 0.0


# -- the budget, views ------------------------------------------------------------------------------------------

def test_budget_catches_a_swapped_gate():
    case = silu_mul_case((16, 1000))
    g, u = SILU.make_inputs(case, "bf16", np.random.default_rng(0))
    swapped = SILU.reference([u, g]).astype(ml_dtypes.bfloat16)
    assert not SILU.check(swapped, [g, u], "bf16").ok


def test_packed_gate_and_up_through_views():
    rng = np.random.default_rng(4)
    t = _rand(rng, 6, 2 * 33).astype(np.float32)
    got = ops.silu_mul(t[..., :33], t[..., 33:])
    assert got.shape == (6, 33)
    assert SILU.check(got, [t[..., :33], t[..., 33:]], "f32").ok


# -- cases, shapes, counts --------------------------------------------------------------------------------------

def test_real_hidden_sizes():
    assert {4096, 14336} <= {c.shape[-1] for c in SILU.cases("default")}


def test_bad_shapes_are_refused():
    with pytest.raises(InvalidArgumentError, match="gate has shape"):
        SILU.output_shape([(4, 8), (4, 9)], {})


def test_bytes_and_flops():
    c = silu_mul_case((5, 7))
    assert SILU.bytes_moved(c, "f16") == 3 * 35 * 2 and SILU.flops(c) == 5 * 35


def test_custom_case():
    assert [t.shape for t in SILU.custom_case((8, 64)).inputs] == [(8, 64), (8, 64)]


# -- the op function ------------------------------------------------------------------------------------------------

def test_op_function_signature_and_results():
    assert list(inspect.signature(ops.silu_mul).parameters) == ["gate", "up", "backend", "out"]
    assert "silu_mul" in ops.__all__
    x = _rand(np.random.default_rng(5), 9, 300).astype(np.float32)
    out = np.empty_like(x)
    assert ops.silu_mul(x, x[::-1], out=out) is out and SILU.check(out, [x, x[::-1]], "f32").ok


# -- the host C library ---------------------------------------------------------------------------------------------

def test_host_library_on_strided_views(host_backend):
    rng = np.random.default_rng(11)
    x = _rand(rng, 6, 40).astype(np.float32)[:, ::2]  # (6, 20), inner stride 2
    out = host_backend.empty(x.shape, "f32")
    host_backend.fill_nan(out)
    host_backend.prepare("silu_mul", [host_backend.to_device(a) for a in (x, x[::-1])], out, {})()
    result = SILU.check(host_backend.to_host(out), [x, x[::-1]], "f32", {})
    assert result.ok, result.message


def test_host_library_refuses_bad_input(host_backend):
    b, rng = host_backend, np.random.default_rng(12)
    x, up = (b.to_device(_rand(rng, *s).astype(np.float32)) for s in ((4, 8), (1, 8)))
    with pytest.raises(E.ShapeError, match="silu_mul needs up"):
        b.prepare("silu_mul", [x, up], b.empty((4, 8), "f32"), {})


def test_host_library_in_place_on_gate(host_backend):
    b, rng = host_backend, np.random.default_rng(13)
    g = b.to_device(_rand(rng, 4, 8).astype(np.float32))
    u = b.to_device(_rand(rng, 4, 8).astype(np.float32))
    want = _silu_mul_f64(b.to_host(g), b.to_host(u))
    b.prepare("silu_mul", [g, u], g, {})()  # in place on gate: allowed by the declaration
    assert np.allclose(b.to_host(g), want, rtol=1e-6, atol=1e-7)


@st.composite
def _fuzz_case(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 70), min_size=ndim, max_size=ndim)))
    layouts = [lay for lay in LAYOUTS if lay != "transposed" or ndim >= 2]
    case = silu_mul_case(shape, draw(st.sampled_from(layouts)), draw(st.sampled_from(layouts)))
    return case, draw(st.sampled_from(sorted(DTYPES))), draw(st.integers(0, 2**32 - 1))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=_fuzz_case())
def test_fuzz_host_library_within_budget(host_backend, drawn):
    """Any shape and layouts of gate and up (broadcast, reversed and offset views among them): the host C library
    lands within the budget of the float64 reference, and out is never touched outside its shape."""
    case, dtype, seed = drawn
    result, _, _ = run_checked(host_backend, SILU, case, dtype, seed)
    assert result.ok, (case, dtype, result.message)


# -- the baselines' implementations ---------------------------------------------------------------------------------

def test_liger_row_refusal():
    assert "at least a 1-d" in IMPLS["liger"].case_refusal("silu_mul", (), {})
