"""layer_norm (oprt_core.operators.layer_norm): the reference against an element-by-element float64 formula
(math.fsum), on rows and views, and a closed form; the budget against a dropped element, a wrong eps and the mean not
subtracted; real hidden sizes in the case sets; shape errors, bytes, flops, the custom case; the op function; the host
C library on strided views and its refusals."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import oprt_core.errors as E
import oprt_core.ops as ops
from oprt_core.errors import InvalidArgumentError
from oprt_core.operators.layer_norm import SPEC as LN
from oprt_core.operators.layer_norm import norm_case
from oprt_core.operators.rms_norm import SPEC as RMS


def _rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    v = rng.uniform(-1.0, 1.0, shape)
    v[v == 0.0] = 0.5  # never zeros
    return v


def fsum_layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    out = np.empty(x.shape)
    n = x.shape[-1]
    for r in np.ndindex(*x.shape[:-1]):
        row = [float(v) for v in x[r]]
        mean = math.fsum(row) / n
        var = math.fsum((v - mean) ** 2 for v in row) / n
        inv = 1.0 / math.sqrt(var + eps)
        out[r] = [(v - mean) * inv * float(w[j]) + float(b[j]) for j, v in enumerate(row)]
    return out


# -- the reference ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(2,), (7,), (3, 1001), (2, 3, 17)])
def test_reference_matches_fsum(shape):
    rng = np.random.default_rng(2)
    x, w, b = _rand(rng, *shape), _rand(rng, shape[-1]), _rand(rng, shape[-1])
    np.testing.assert_allclose(LN.reference([x, w, b], {"eps": 1e-5}), fsum_layer_norm(x, w, b, 1e-5),
                               rtol=1e-12, atol=1e-14)


def test_reference_of_non_contiguous_views():
    rng = np.random.default_rng(3)
    xt = _rand(rng, 65, 31).T  # transposed
    w, b = _rand(rng, 2 * 65)[::2], _rand(rng, 65)[::-1]
    np.testing.assert_allclose(LN.reference([xt, w, b], {"eps": 1e-5}), fsum_layer_norm(xt, w, b, 1e-5),
                               rtol=1e-12, atol=1e-14)


def test_closed_form():
    # layer_norm of [1, 3] (mean 2, var 1) with eps 3: (+-1) / 2 * w + b
    np.testing.assert_allclose(LN.reference([np.array([[1.0, 3.0]]), np.array([2.0, 4.0]), np.array([0.5, -1.0])],
                                            {"eps": 3.0}), [[-0.5, 1.0]], rtol=1e-15)


# -- the budget -------------------------------------------------------------------------------------------------

def test_budget_catches_a_dropped_element_a_wrong_eps_and_no_mean():
    case = norm_case("layer_norm", (64, 4096))
    x, w, b = LN.make_inputs(case, "f32", np.random.default_rng(0))
    x64, w64, b64 = (a.astype(np.float64) for a in (x, w, b))
    p = {"eps": 1e-5}
    dropped = LN.reference([x[:, 1:], w[1:], b[1:]], p)  # statistics over n - 1 elements
    wrong = np.concatenate([x64[:, :1], dropped], axis=-1)
    wrong[:, 0] = LN.reference([x, w, b], p)[:, 0]
    assert not LN.check(wrong.astype(np.float32), [x, w, b], "f32", p).ok
    assert not LN.check(LN.reference([x, w, b], {"eps": 1e-4}).astype(np.float32), [x, w, b], "f32", p).ok
    rms_like = RMS.reference([x, w], p) + b64  # the mean not subtracted
    assert not LN.check(rms_like.astype(np.float32), [x, w, b], "f32", p).ok


# -- cases, shapes, counts --------------------------------------------------------------------------------------

def test_real_hidden_sizes():
    assert {4096, 14336} <= {c.shape[-1] for c in LN.cases("default")}


def test_bad_shapes_are_refused():
    with pytest.raises(InvalidArgumentError, match=r"bias has shape \(4,\), expected \(8,\)"):
        LN.output_shape([(4, 8), (8,), (4,)], {})


def test_bytes_and_flops():
    c = norm_case("layer_norm", (3, 4096))
    assert LN.bytes_moved(c, "f32") == (2 * 3 * 4096 + 2 * 4096) * 4
    assert LN.flops(c) == 7 * 3 * 4096 + 4 * 3


def test_custom_case():
    assert [t.shape for t in LN.custom_case((8, 64)).inputs] == [(8, 64), (64,), (64,)]


# -- the op function ------------------------------------------------------------------------------------------------

def test_op_function_signature_and_results():
    assert list(inspect.signature(ops.layer_norm).parameters) == ["x", "weight", "bias", "eps", "backend", "out"]
    assert inspect.signature(ops.layer_norm).parameters["eps"].default == 1e-5
    assert "layer_norm" in ops.__all__
    rng = np.random.default_rng(5)
    x, w, b = (_rand(rng, *s).astype(np.float32) for s in ((9, 300), (300,), (300,)))
    assert LN.check(ops.layer_norm(x, w, b), [x, w, b], "f32", {"eps": 1e-5}).ok


# -- the host C library ---------------------------------------------------------------------------------------------

def test_host_library_on_strided_views(host_backend):
    rng = np.random.default_rng(11)
    x = _rand(rng, 6, 40).astype(np.float32)[:, ::2]  # (6, 20), inner stride 2
    w, b = (_rand(rng, 40).astype(np.float32)[::2] for _ in range(2))
    out = host_backend.empty(x.shape, "f32")
    host_backend.fill_nan(out)
    host_backend.prepare("layer_norm", [host_backend.to_device(a) for a in (x, w, b)], out, {"eps": 1e-3})()
    result = LN.check(host_backend.to_host(out), [x, w, b], "f32", {"eps": 1e-3})
    assert result.ok, result.message


def test_host_library_refuses_bad_input(host_backend):
    b, rng = host_backend, np.random.default_rng(12)
    x, w = (b.to_device(_rand(rng, *s).astype(np.float32)) for s in ((4, 8), (8,)))
    with pytest.raises(E.ShapeError, match="layer_norm: shape mismatch: bias has shape"):
        b.prepare("layer_norm", [x, w, b.to_device(_rand(rng, 4, 8).astype(np.float32))], b.empty((4, 8), "f32"), {})
