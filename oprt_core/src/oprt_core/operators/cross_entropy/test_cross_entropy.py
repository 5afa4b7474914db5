"""cross_entropy (oprt_core.operators.cross_entropy), the first op with an index input (its i64 target).

The reference against a row-by-row math.fsum formula, the budget against a dropped logit and a wrong class, the
targets make_inputs draws, index-dtype validation at every layer (spec, ops API, numpy backend, the C plan of the
host library), the reduction param's C value and bytes; the host library fuzzed against the reference; liger's
refusals (rows, a kernel that overwrites its logits).
"""

from __future__ import annotations

import math
import sys
import types

import numpy as np
import pytest
from baseline_helpers import fake_liger_ops, fake_torch, install_modules
from gpu_helpers import run_checked
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import oprt_core.errors as E
import oprt_core.ops as ops
from oprt_core import cdecl, operators
from oprt_core.baselines import LigerBackend
from oprt_core.device_array import DeviceArray
from oprt_core.dtypes import DTYPES
from oprt_core.errors import InvalidArgumentError
from oprt_core.numpy_backend import NumpyBackend
from oprt_core.operators.cross_entropy import SPEC as XENT
from oprt_core.operators.cross_entropy import cross_entropy_case
from oprt_core.operators.cross_entropy.baselines import IMPLS, rows_overlap
from oprt_core.operators.rms_norm import norm_case
from oprt_core.spec import LAYOUTS


def fsum_xent(x: np.ndarray, t: np.ndarray, ignore: int = -100) -> np.ndarray:
    out = np.empty(t.shape)
    for r in np.ndindex(*t.shape):
        row = [float(v) for v in x[r]]
        if int(t[r]) == ignore:
            out[r] = 0.0
            continue
        m = max(row)
        out[r] = m + math.log(math.fsum(math.exp(v - m) for v in row)) - row[int(t[r])]
    return out


def _logits(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    v = rng.uniform(-scale, scale, shape)
    v[v == 0.0] = 0.5
    return v


@pytest.mark.parametrize("shape", [(1, 1), (5, 7), (3, 1001), (2, 3, 17)])
def test_reference_matches_fsum(shape):
    rng = np.random.default_rng(1)
    x = _logits(rng, *shape, scale=30.0)
    t = rng.integers(0, shape[-1], shape[:-1])
    t.reshape(-1)[1::3] = -100
    want = fsum_xent(x, t)
    np.testing.assert_allclose(XENT.reference([x, t]), want, rtol=1e-13, atol=1e-13)
    mean = XENT.reference([x, t], {"reduction": "mean"})
    assert mean.shape == () and math.isclose(float(mean), want[t != -100].mean(), rel_tol=1e-13)
    assert np.all(XENT.reference([x, t])[t == -100] == 0.0) and np.all(want[t != -100] >= 0)


def test_reference_ignored_out_of_range_and_no_row():
    x = np.array([[1.0, 2.0, 3.0], [0.5, 0.25, 1.0], [2.0, 1.0, 0.0]])
    ref = XENT.reference([x, np.array([2, 7, 1])], {"ignore_index": 7})
    assert ref[1] == 0.0 and math.isclose(ref[0], math.log(math.exp(-2) + math.exp(-1) + 1))
    assert np.isnan(XENT.reference([x, np.array([3, -1, 0])])[:2]).all()  # out of [0, V), not ignored
    assert np.isnan(XENT.reference([x, np.full(3, -100)], {"reduction": "mean"}))  # 0 / 0, as torch
    assert XENT.reference([np.ones((0, 4)), np.ones(0, np.int64)]).shape == (0,)


def test_budget_catches_a_dropped_logit_and_a_wrong_class():
    rng = np.random.default_rng(2)
    for v in (32000, 128256):
        x = _logits(rng, 16, v).astype(np.float32)
        t = rng.integers(0, v - 1, 16)
        x64 = x.astype(np.float64)
        good = XENT.reference([x, t]).astype(np.float32)
        assert XENT.check(good, [x, t], "f32").ok
        m = x64.max(-1)
        dropped = m + np.log(np.exp(x64[:, 1:] - m[:, None]).sum(-1)) - x64[np.arange(16), t]
        assert not XENT.check(dropped.astype(np.float32), [x, t], "f32").ok, v
        wrong = good + (x64[np.arange(16), t] - x64[np.arange(16), t + 1]).astype(np.float32)
        assert not XENT.check(wrong, [x, t], "f32").ok, v


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_make_inputs_draws_valid_targets(dtype):
    case = cross_entropy_case((4096, 1000), ignore_index=5)
    x, t = XENT.make_inputs(case, dtype, np.random.default_rng(3))
    assert x.dtype == DTYPES[dtype].numpy and t.dtype == np.int64 and t.shape == (4096,)
    assert t.min() >= 0 and t.max() < 1000
    ignored = np.count_nonzero(t == 5)
    assert 300 < ignored < 800  # about one row in eight, plus class 5 drawn now and then
    x, t = XENT.make_inputs(cross_entropy_case((64, 9), target_layout="reversed"), dtype, np.random.default_rng(4))
    assert t.strides == (-8,) and set(np.unique(t)) <= {-100, *range(9)}


def test_bytes_count_the_i64_targets():
    case = cross_entropy_case((4096, 128256))
    assert XENT.bytes_moved(case, "bf16") == 4096 * 128256 * 2 + 4096 * 8 + 4096 * 2
    mean = cross_entropy_case((4096, 128256), reduction="mean")
    assert XENT.bytes_moved(mean, "f32") == 4096 * 128256 * 4 + 4096 * 8 + 4
    assert XENT.flops(mean) == 4 * 4096 * 128256 + 4 * 4096


def test_models_set_covers_the_vocabularies():
    cases = {c.name: c for c in XENT.cases("models")}
    assert {c.shape[-1] for c in cases.values()} == {32000, 50257, 128256, 151936, 256000}
    assert cases["llama3-8b/vocab/4096tok"].shape == (4096, 128256)
    assert cases["llama2-7b/vocab/16384tok"].shape == (16384, 32000)
    assert {c.shape[0] for c in cases.values()} >= {1, 16, 512, 4096, 8192, 16384}
    for c in cases.values():
        assert c.inputs[1].shape == c.shape[:-1]


def test_ops_api_and_numpy_backend_refuse_other_target_dtypes():
    x = np.array([[1.0, 2.0, 3.0], [0.0, 1.0, 0.5]], np.float32)
    got = ops.cross_entropy(x, np.array([2, -100]))
    assert got.dtype == np.float32 and got[1] == 0 and math.isclose(got[0], fsum_xent(x, np.array([2, -100]))[0],
                                                                      rel_tol=1e-6)
    assert ops.cross_entropy(x, [0, 1], reduction="mean").shape == ()  # a list of Python ints is i64
    for bad in (np.int32, np.float32, np.uint8):
        with pytest.raises(InvalidArgumentError, match=f"cross_entropy: target must be an array of i64, got "
                                                       f"{np.dtype(bad).name}"):
            ops.cross_entropy(x, np.array([0, 1], bad))
    with pytest.raises(InvalidArgumentError, match="logits must be an array of f32, f16 or bf16, got int64"):
        ops.cross_entropy(np.ones((2, 3), np.int64), np.array([0, 1]))
    with pytest.raises(InvalidArgumentError, match="reduction' must be one of 'none', 'mean', got 'sum'"):
        ops.cross_entropy(x, np.array([0, 1]), reduction="sum")
    with pytest.raises(InvalidArgumentError, match=r"target has shape \(3,\), expected \(2,\)"):
        ops.cross_entropy(x, np.array([0, 1, 2]))
    with pytest.raises(InvalidArgumentError, match="no class"):
        ops.cross_entropy(np.ones((2, 0), np.float32), np.array([0, 1]))
    be = operators.equip(NumpyBackend())
    with pytest.raises(InvalidArgumentError, match="target must be an array of i64 \\(indices\\), got i32"):
        be.prepare("cross_entropy", [x, np.array([0, 1], np.int32)], be.empty((2,), "f32"), {})
    with pytest.raises(InvalidArgumentError, match="shape mismatch: out has shape"):
        be.prepare("cross_entropy", [x, np.array([0, 1])], be.empty((2,), "f32"), {"reduction": "mean"})


def test_ignore_index_out_of_int32_is_refused():
    """ignore_index is an int32_t in the C ABI: every backend refuses a value C could not take, naming the param and
    the range (numpy would otherwise compare the targets with it and run)."""
    x = np.ones((2, 3), np.float32)
    t = np.array([0, 1])
    be = operators.equip(NumpyBackend())
    for bad in (2**40, 2**31, -(2**31) - 1):
        with pytest.raises(InvalidArgumentError, match=f"^cross_entropy: param 'ignore_index' does not fit a C int32: "
                                                       f"got {bad}, valid -2147483648\\.\\.2147483647$"):
            ops.cross_entropy(x, t, ignore_index=bad)
        with pytest.raises(InvalidArgumentError, match="'ignore_index' does not fit a C int32"):
            be.prepare("cross_entropy", [x, t], np.empty(2, np.float32), {"ignore_index": bad})
    for edge in (2**31 - 1, -(2**31)):
        assert ops.cross_entropy(x, t, ignore_index=edge).shape == (2,)


def test_reduction_is_passed_to_c_as_its_index():
    assert cdecl.c_params(XENT, XENT.validate_params({"reduction": "mean", "ignore_index": 3})) == (3, 1)
    assert cdecl.c_params(XENT, XENT.validate_params({})) == (-100, 0)
    with pytest.raises(InvalidArgumentError, match="^ignore_index 1099511627776 does not fit a C int32$"):
        cdecl.c_params(XENT, {**XENT.validate_params({}), "ignore_index": 1 << 40})  # c_params' own check
    assert "reduction (int32_t: 0 none, 1 mean)" in cdecl.prototypes(XENT)
    assert " * target (an index tensor): i64" in cdecl.prototypes(XENT)


# -- the host C library ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", ["none", "mean"])
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_host_library_on_strided_views(host_backend, dtype, reduction):
    b, rng = host_backend, np.random.default_rng(5)
    x = _logits(rng, 9, 2 * 301).astype(DTYPES[dtype].numpy)[:, ::2]  # (9, 301), stride 2 along the classes
    t = rng.integers(0, 301, 18)[::-2]  # (9,), negative stride
    t[[1, 4]] = -100
    params = {"reduction": reduction}
    out = b.empty((9,) if reduction == "none" else (), dtype)
    b.fill_nan(out)
    b.prepare("cross_entropy", [b.to_device(x), b.to_device(t)], out, params)()
    got = b.to_host(out)
    assert XENT.check(got, [x, t], dtype, params).ok
    if reduction == "none":
        assert got[1] == 0 and got[4] == 0 and np.all(got[[0, 2, 3]] > 0)


def test_host_library_refuses_bad_input(host_backend):
    b, rng = host_backend, np.random.default_rng(6)
    x = b.to_device(_logits(rng, 4, 8).astype(np.float32))
    t = b.to_device(np.array([0, 1, 2, 3]))
    out = b.empty((4,), "f32")
    assert b.to_device(np.array([5, -3])).dtype_info.name == "i64"
    assert list(b.to_host(b.to_device(np.array([5, -3], np.int64)))) == [5, -3]
    with pytest.raises(E.UnsupportedDtypeError, match="cross_entropy: target must be an index tensor of i64, got i32"):
        b.prepare("cross_entropy", [x, b.to_device(np.arange(4, dtype=np.int32))], out, {})
    with pytest.raises(E.UnsupportedDtypeError, match="cross_entropy: target must be an index tensor of i64, got f32"):
        b.prepare("cross_entropy", [x, b.to_device(np.arange(4, dtype=np.float32))], out, {})
    with pytest.raises(E.UnsupportedDtypeError, match="tensor 'logits' has dtype i64 \\(an index dtype\\)"):
        b.prepare("cross_entropy", [t, t], out, {})
    with pytest.raises(E.UnsupportedDtypeError, match="tensor 'out' has dtype i64"):  # a value op refuses indices
        b.prepare("relu", [t], b.empty((4,), "i64"), {})
    with pytest.raises(E.ShapeError, match=r"target has shape \(3,\), expected logits' shape without its last dim"):
        b.prepare("cross_entropy", [x, b.to_device(np.array([0, 1, 2]))], out, {})
    with pytest.raises(E.ShapeError, match=r"out has shape \(4,\), expected \(\) for reduction mean"):
        b.prepare("cross_entropy", [x, t], out, {"reduction": "mean"})
    with pytest.raises(E.ShapeError, match="no class"):
        b.prepare("cross_entropy", [b.to_device(np.ones((4, 0), np.float32)), t], out, {})
    desc = b.ffi.new("oprt_cross_entropy_descriptor_t *")
    tds = [b._tensor_desc(a, n) for a, n in ((out, "out"), (x, "logits"), (t, "target"))]
    with pytest.raises(E.ParamError, match="reduction must be 0 \\(none\\) or 1 \\(mean\\), got 2"):
        b.check(b.lib.oprt_create_cross_entropy_descriptor(desc, *tds, -100, 2))
    column = DeviceArray(b, x.ptr, (4,), (8,), "f32", x)  # x[:, 0]: out inside the logits
    with pytest.raises(E.OverlapError, match="cross_entropy: out overlaps input logits"):
        b.prepare("cross_entropy", [x, t], column, {})()


def test_host_library_mean_over_no_row_and_out_of_range_targets(host_backend):
    b = host_backend
    x = b.to_device(np.array([[1.0, 2.0], [3.0, 0.5]], np.float32))
    out = b.empty((), "f32")
    b.prepare("cross_entropy", [x, b.to_device(np.array([-100, -100]))], out, {"reduction": "mean"})()
    assert np.isnan(b.to_host(out))
    rows = b.empty((2,), "f32")
    b.prepare("cross_entropy", [x, b.to_device(np.array([2, 0]))], rows, {})()
    got = b.to_host(rows)
    assert np.isnan(got[0]) and math.isclose(got[1], math.log(1 + math.exp(-2.5)), abs_tol=1e-6)


@st.composite
def _fuzz_case(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 70), min_size=ndim, max_size=ndim)))
    layout = draw(st.sampled_from([lay for lay in LAYOUTS if lay != "transposed" or ndim >= 2]))
    target_layouts = ["contiguous", "step2", "reversed", "offset1"] + (["broadcast0"] if ndim >= 2 else [])
    case = cross_entropy_case(shape, layout, draw(st.sampled_from(target_layouts)),
                              draw(st.sampled_from(["none", "mean"])), draw(st.sampled_from([-100, 0, 3])))
    return case, draw(st.sampled_from(sorted(DTYPES))), draw(st.integers(0, 2**32 - 1))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=_fuzz_case())
def test_fuzz_host_library_within_budget(host_backend, drawn):
    """Any shape, layouts of logits and target (broadcast, reversed and offset views among them), reduction and
    ignore_index: the host C library lands within the budget of the float64 reference, and out is never touched
    outside its shape."""
    case, dtype, seed = drawn
    result, _, _ = run_checked(host_backend, XENT, case, dtype, seed)
    assert result.ok, (case, dtype, result.message)


# -- the baselines' implementations ---------------------------------------------------------------------------------

def test_liger_row_refusal():
    refusal = IMPLS["liger"].case_refusal
    assert refusal("cross_entropy", (4096, 256000), {"reduction": "none"}) is None  # it loops over the classes
    assert "at least one row" in refusal("cross_entropy", (0, 5), {})
    assert "at least a 1-d" in refusal("cross_entropy", (), {})


def _fake_liger(monkeypatch, tmp_path, switch: bool) -> LigerBackend:
    """A Liger backend over stand-in modules whose cross-entropy source has (``switch``) or lacks the HAS_GRADIENTS
    switch."""
    src = tmp_path / "fake_liger_xent.py"
    switch_line = "# HAS_GRADIENTS: tl.constexpr\n" if switch else ""
    src.write_text("class LigerCrossEntropyFunction:\n    pass\n" + switch_line)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("fake_liger_xent", None)
    import fake_liger_xent

    liger_ops = fake_liger_ops("LigerRMSNormFunction")
    liger_ops.LigerCrossEntropyFunction = fake_liger_xent.LigerCrossEntropyFunction
    install_modules(monkeypatch, torch=fake_torch(gpu=True), liger_kernel=types.ModuleType("liger_kernel"),
                    liger_kernel__ops=liger_ops)
    be = operators.equip(LigerBackend())
    assert be.availability().ok
    return be


@pytest.mark.parametrize("switch", [True, False])
def test_liger_that_overwrites_its_logits_is_refused(monkeypatch, tmp_path, switch):
    """A Liger whose cross-entropy kernel has no HAS_GRADIENTS switch stores the gradient over the logits in every
    forward: its cross_entropy is unsupported (a timed repeat would read its own gradient), the other ops stay."""
    be = _fake_liger(monkeypatch, tmp_path, switch)
    got = be.supports("cross_entropy", "bf16", cross_entropy_case((4, 128256)))
    assert bool(got) is switch, got.reason
    if not switch:
        assert "writes the logits' gradient over the logits" in got.reason
    assert be.supports("rms_norm", "bf16", norm_case("rms_norm", (4, 8192)))
    assert not be.supports("cross_entropy", "f32", cross_entropy_case((0, 7)))


def test_liger_refuses_logits_whose_rows_share_memory(monkeypatch, tmp_path):
    """Liger zeroes an ignored row's logits in place: a broadcast row (stride 0) is every row, so such logits are
    unsupported with the reason; rows apart (any other layout, or axes that reshape copies) run."""
    be = _fake_liger(monkeypatch, tmp_path, switch=True)
    got = be.supports("cross_entropy", "f32", cross_entropy_case((5, 31), "broadcast0"))
    assert not got and "share memory (row stride 0, 31 classes)" in got.reason, got.reason
    for shape, layout in [((5, 31), "contiguous"), ((17, 65), "transposed"), ((9, 99), "step2"),
                          ((9, 99), "offset1"), ((2, 3, 33), "broadcast0"), ((1, 31), "broadcast0")]:
        assert be.supports("cross_entropy", "f32", cross_entropy_case(shape, layout)), (shape, layout)


def test_rows_overlap():
    assert rows_overlap(5, 31, 0, 1)  # a broadcast row
    assert rows_overlap(5, 31, 30, 1)  # each row one element into the next
    assert not rows_overlap(5, 31, 31, 1) and not rows_overlap(5, 31, 62, 1)
    assert not rows_overlap(5, 31, 0, 2)  # Liger copies logits whose classes are not adjacent
    assert not rows_overlap(1, 31, 0, 1) and not rows_overlap(5, 0, 0, 1)


def test_liger_make_refuses_tensors_whose_rows_share_memory():
    """The launcher's own check, on torch tensors (CPU: nothing is launched before the refusal)."""
    torch = pytest.importorskip("torch")
    make = IMPLS["liger"].make
    params = {"ignore_index": -100, "reduction": "none"}
    t = torch.zeros(5, dtype=torch.int64)
    out = torch.empty(5)
    calls = []
    fake = types.SimpleNamespace(apply=lambda *a: calls.append(a) or torch.ones(5))
    with pytest.raises(E.UnsupportedCase, match="share memory"):
        make(fake, (torch.randn(1, 31).expand(5, 31), t), out, params)
    run = make(fake, (torch.randn(5, 31), t), out, params)
    assert run() == "liger cross_entropy + copy" and len(calls) == 1 and bool((out == 1).all())
