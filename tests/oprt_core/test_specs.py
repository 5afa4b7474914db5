"""OpSpecs, every core op alike: listing order, case sets and what ``edge`` covers, input generation, bytes that
scale with the dtype, shape parsing, and error budgets that are tight enough to catch a wrong result (each documented
in the op's README.md); OpSpec's declarations (optional inputs, index inputs, outputs, output dtypes). Each op's own
tests (its edge cases, bytes and flops, custom case) are in its folder (oprt_core/operators/<op>/test_<op>.py)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from oprt_core import operators
from oprt_core.dtypes import DTYPES, INDEX_DTYPES, get_dtype
from oprt_core.errors import InvalidArgumentError, UnknownNameError
from oprt_core.spec import (
    CASE_SETS,
    LAYOUTS,
    Budget,
    Case,
    OpSpec,
    Output,
    TensorCase,
    format_shape,
    make_tensor,
    parse_shape,
)

DT = list(DTYPES)


def edge(op: str) -> list[Case]:
    return operators.spec(op).cases("edge")


def axis_of(case: Case):
    return case.param_dict.get("axis", -1)


# -------------------------------------------------------------------------------------------------
# case sets


def test_ops_listed_by_group_and_order_and_case_set_names():
    listed = [(operators.module(name).ORDER, name) for name in operators.names()]
    assert listed == sorted(listed) and len(set(operators.names())) == len(listed)
    assert operators.names() == tuple(name for group in operators.GROUPS for name in operators.names(group))
    assert all(operators.names(group) for group in operators.GROUPS)
    assert CASE_SETS == ("smoke", "default", "large", "edge", "models")


@pytest.mark.parametrize("op", list(operators.names("core")))
def test_every_op_has_the_four_case_sets(op):
    spec = operators.spec(op)
    assert set(spec.case_sets) == set(CASE_SETS)
    assert spec.dtypes == ("f32", "f16", "bf16")
    assert set(spec.budgets) == set(DT)
    for case_set in CASE_SETS:
        cases = spec.cases(case_set)
        assert cases, f"{op}: empty case set {case_set}"
        names = [c.name for c in cases]
        assert len(names) == len(set(names)), f"{op}/{case_set}: duplicate case names {names}"
        for c in cases:
            assert c.op == op and spec.min_inputs <= len(c.inputs) <= spec.n_inputs
            # every case is valid for its op: params and shapes agree
            full = spec.validate_params(c.param_dict, [t.shape for t in c.inputs])
            spec.output_shape([t.shape for t in c.inputs], full)
            assert c.data in ("uniform", "large")
    with pytest.raises(UnknownNameError, match=f"unknown case set of {op} 'huge'; valid choices: default, edge"):
        spec.cases("huge")


@pytest.mark.parametrize("op", list(operators.names("core")))
def test_edge_covers_sizes_and_layouts(op):
    cases = edge(op)
    sizes = [c.numel for c in cases]
    assert 1 in sizes, "size 1"
    assert 0 in sizes, "zero-size"
    odd = [n for n in sizes if n > 1 and n % 4 and n % 8 and n % 32]
    assert odd, "odd sizes (not multiples of 4, 8 or 32)"
    assert any(n > 1 and n % 2 and n > 1000 for n in sizes), "an odd size larger than a block"
    assert any(any(s % 2 and s > 32 for s in c.shape) for c in cases), "an odd extent across a warp"
    layouts = {t.layout for c in cases for t in c.inputs}
    assert {"transposed", "step2"} <= layouts, "non-contiguous views: transposed and sliced with a step"
    assert {"offset1", "reversed"} <= layouts
    assert any(len(c.shape) >= 3 for c in cases), "more than two dims"


AXIS_OPS = [spec.name for spec in operators.specs("core") if any(p.name == "axis" for p in spec.params)]


def test_there_are_ops_over_an_axis():
    assert AXIS_OPS


@pytest.mark.parametrize("op", AXIS_OPS)
def test_edge_negative_axes(op):
    axes = [axis_of(c) for c in edge(op)]
    assert any(a is not None and a < -1 for a in axes), "a negative axis other than the default -1"
    assert any(a is not None and a >= 0 for a in axes)
    inner = [c for c in edge(op) if axis_of(c) is not None and len(c.shape) >= 3
             and 0 < axis_of(c) % len(c.shape) < len(c.shape) - 1]
    assert inner, "a reduction over a middle axis"
    # reduction along a non-contiguous axis of a view
    assert any(c.inputs[0].layout != "contiguous" and axis_of(c) is not None for c in edge(op))


# -------------------------------------------------------------------------------------------------
# make_inputs


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _expected_strides(t: TensorCase, itemsize: int) -> tuple[int, ...]:
    """TensorCase.strides in bytes: what make_tensor's array must have."""
    return tuple(s * itemsize for s in t.strides)


def _small_cases():
    for spec in operators.specs("core"):
        for case_set in ("smoke", "edge"):
            for c in spec.cases(case_set):
                if c.numel <= 1 << 17:
                    yield pytest.param(spec.name, c, id=f"{spec.name}-{case_set}-{c.name}")


@pytest.mark.parametrize(("op", "case"), list(_small_cases()))
@pytest.mark.parametrize("dtype", DT)
def test_make_inputs_layouts_and_no_zeros(op, case, dtype):
    spec = operators.spec(op)
    dt = get_dtype(dtype)
    inputs = spec.make_inputs(case, dtype, np.random.default_rng(7))
    assert len(inputs) == len(case.inputs)
    for x, t in zip(inputs, case.inputs):
        assert x.shape == t.shape and x.dtype == dt.numpy
        x64 = x.astype(np.float64)
        assert np.isfinite(x64).all() and not (x64 == 0).any(), "inputs must never be zero"
        if x.size > 1 and len(t.shape) and min(t.shape[-2:]) > 1:
            exp = _expected_strides(t, x.itemsize)
            assert x.strides == exp, f"{t.layout}: strides {x.strides}, expected {exp}"
            if t.layout != "contiguous":
                assert not x.flags.c_contiguous or t.layout == "offset1"
        if t.layout == "offset1" and x.size:
            root = _root(x)
            assert x.ctypes.data - root.ctypes.data == dt.itemsize, "offset1 starts one element in"
    again = spec.make_inputs(case, dtype, np.random.default_rng(7))
    for a, b in zip(inputs, again):
        np.testing.assert_array_equal(a, b)  # a fixed seed gives the same inputs


@pytest.mark.parametrize("shape", [(6, 10), (2, 3, 5)])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_make_tensor_each_layout(layout, shape):
    """make_tensor's array has the layout's strides (TensorCase.strides, which backends read without an array)."""
    t = TensorCase(shape, layout)
    x = make_tensor(t, get_dtype("f16"), np.random.default_rng(0))
    assert x.shape == shape
    assert x.strides == _expected_strides(t, 2)
    if layout == "broadcast0":
        assert (x == x[0]).all()


def test_make_inputs_uniform_range_and_fresh_values():
    case = operators.spec("copy").cases("smoke")[0]
    a = operators.spec("copy").make_inputs(case, "f32", np.random.default_rng(1))[0]
    b = operators.spec("copy").make_inputs(case, "f32", np.random.default_rng(2))[0]
    assert -1.0 <= a.min() and a.max() <= 1.0
    assert (a < 0).any() and (a > 0).any()
    assert not np.array_equal(a, b)


def test_layout_validation():
    with pytest.raises(InvalidArgumentError, match="unknown layout 'diagonal'; valid: contiguous, transposed"):
        TensorCase((3, 3), "diagonal")
    with pytest.raises(InvalidArgumentError, match="transposed layout needs at least 2 dims"):
        TensorCase((3,), "transposed")


# -------------------------------------------------------------------------------------------------
# cost model


@pytest.mark.parametrize("op", list(operators.names("core")))
def test_bytes_scale_with_itemsize(op):
    spec = operators.spec(op)
    for c in spec.cases("smoke") + spec.cases("edge"):
        b32, b16, bb16 = (spec.bytes_moved(c, d) for d in ("f32", "f16", "bf16"))
        assert b32 == 2 * b16 == 2 * bb16 >= 0
        assert spec.flops(c) >= 0


# -------------------------------------------------------------------------------------------------
# parse_shape


@pytest.mark.parametrize(("text", "shape"), [
    ("4096x4096", (4096, 4096)), ("1000", (1000,)), (" 3X5 ", (3, 5)), ("scalar", ()), ("0", (0,)),
    ("1x0x7", (1, 0, 7)), ("1x2x3x4x5x6x7x8", (1, 2, 3, 4, 5, 6, 7, 8)), ("007", (7,)),
])
def test_parse_shape_good(text, shape):
    assert parse_shape(text) == shape
    assert parse_shape(format_shape(shape)) == shape


@pytest.mark.parametrize("text", ["", "x", "4096x", "x4096", "a", "-1", "4096*4096", "1.5", "4096 x 4096",
                                  "4096,4096", "(4096, 4096)", "4096xx4096", "1e3"])
def test_parse_shape_malformed(text):
    with pytest.raises(InvalidArgumentError,
                       match=r"malformed shape .*expected extents joined by 'x', e\.g\. 4096x4096"):
        parse_shape(text)


def test_parse_shape_too_many_dims():
    with pytest.raises(InvalidArgumentError, match="has 9 dims; at most 8 are supported"):
        parse_shape("1x2x3x4x5x6x7x8x9")


def test_format_shape():
    assert format_shape((4096, 4096)) == "4096x4096"
    assert format_shape(()) == "scalar"
    assert format_shape(np.array([3, 5]).tolist()) == "3x5"


# -------------------------------------------------------------------------------------------------
# error budgets are not vacuous


SMOKE = [pytest.param(spec.name, case, id=f"{spec.name}-{case.name}") for spec in operators.specs("core")
         for case in spec.cases("smoke")]


def _setup(op: str, case: Case, dtype: str, seed: int = 0):
    spec = operators.spec(op)
    inputs = spec.make_inputs(case, dtype, np.random.default_rng(seed))
    params = spec.validate_params(case.param_dict)
    ref = spec.reference(inputs, params)
    return spec, inputs, params, ref


@pytest.mark.parametrize(("op", "case"), SMOKE)
@pytest.mark.parametrize("dtype", DT)
def test_reference_rounded_to_dtype_passes(op, case, dtype):
    spec, inputs, params, ref = _setup(op, case, dtype)
    rounded = ref.astype(get_dtype(dtype).numpy)
    res = spec.check(rounded, inputs, dtype, params)
    assert res.ok, res.message
    assert spec.check(ref, inputs, dtype, params).ok


@pytest.mark.parametrize(("op", "case"), SMOKE)
@pytest.mark.parametrize("dtype", DT)
def test_one_element_just_outside_budget_fails(op, case, dtype):
    spec, inputs, params, ref = _setup(op, case, dtype)
    atol, rtol = spec.tolerance(dtype, [x.astype(np.float64) for x in inputs], ref, params)
    allowed = np.broadcast_to(np.asarray(atol) + rtol * np.abs(ref), ref.shape)
    idx = np.unravel_index(int(np.argmax(np.abs(ref))), ref.shape)
    inside = ref.copy()
    inside[idx] = ref[idx] + 0.9 * allowed[idx]
    assert spec.check(inside, inputs, dtype, params).ok
    for sign in (1.0, -1.0):
        delta = 1.1 * allowed[idx] if allowed[idx] > 0 else max(abs(ref[idx]), 1.0) * 1e-12
        bad = ref.copy()
        bad[idx] = ref[idx] + sign * delta
        res = spec.check(bad, inputs, dtype, params)
        assert not res.ok, f"{op} {dtype}: an error of {delta:.3g} at {idx} passed"
        assert "1 of" in res.message and "outside budget" in res.message
        where = tuple(int(i) for i in idx) if ref.ndim else (0,)  # a 0-d result's one element is (0,)
        assert str(where) in res.message


def _exact(spec, dtype: str) -> bool:
    """The op's budget on its first smoke case is exact: no error allowed anywhere."""
    case = spec.cases("smoke")[0]
    inputs = spec.make_inputs(case, dtype, np.random.default_rng(3))
    params = spec.validate_params(case.param_dict)
    ref = spec.reference(inputs, params)
    atol, rtol = spec.tolerance(dtype, [x.astype(np.float64) for x in inputs], ref, params)
    return rtol == 0 and not np.any(atol)


@pytest.mark.parametrize("dtype", DT)
def test_exact_ops_catch_one_ulp(dtype):
    dt = get_dtype(dtype)
    exact = [spec for spec in operators.specs("core") if _exact(spec, dtype)]
    assert exact
    for spec in exact:
        op = spec.name
        case = spec.cases("smoke")[0]
        inputs = spec.make_inputs(case, dtype, np.random.default_rng(3))
        out = spec.reference(inputs, case.param_dict).astype(dt.numpy)
        assert spec.check(out, inputs, dtype, case.param_dict).ok
        flat = out.reshape(-1)
        j = int(np.argmax(flat.astype(np.float64)))
        flat[j] = np.nextafter(flat[j].astype(np.float32), np.float32(np.inf)).astype(dt.numpy) \
            if dtype == "f32" else (flat[j].astype(np.float64) * (1 + 2 * dt.eps)).astype(dt.numpy)
        assert not spec.check(out, inputs, dtype, case.param_dict).ok, f"{op} {dtype}: one ulp passed"


def test_check_reports_shape_nan_and_inf():
    spec = operators.spec("copy")
    x = np.array([1.0, -2.0, np.inf], np.float32)
    assert spec.check(x.copy(), [x], "f32").ok  # matching infinities are no error
    res = spec.check(x[:2], [x], "f32")
    assert not res.ok and "output shape (2,) differs from reference shape (3,)" in res.message
    poisoned = x.copy()
    poisoned[1] = np.nan
    res = spec.check(poisoned, [x], "f32")
    assert not res.ok and res.max_abs_err == math.inf and "worst at (1,)" in res.message
    assert spec.check(np.empty((0, 3), np.float32), [np.empty((0, 3), np.float32)], "f32").ok
    res = spec.check(np.array([1.0, -2.0, -np.inf], np.float32), [x], "f32")
    assert not res.ok


def test_check_matches_nan_only_where_the_reference_is_nan():
    """A NaN input propagated (numpy and torch give NaN there) is exact; a NaN anywhere else still fails,
    and so does a finite value where the reference is NaN."""
    spec = operators.spec("softmax")
    x = np.array([[0.5, np.nan, -1.0], [0.25, 1.0, -2.0]], np.float32)
    ref = spec.reference([x], {"axis": -1})
    assert np.isnan(ref[0]).all() and np.isfinite(ref[1]).all()
    assert spec.check(ref.astype(np.float32), [x], "f32", {"axis": -1}).ok
    finite_row0 = ref.copy()
    finite_row0[0] = 1.0 / 3.0
    assert not spec.check(finite_row0.astype(np.float32), [x], "f32", {"axis": -1}).ok
    nan_row1 = ref.copy()
    nan_row1[1, 2] = np.nan
    res = spec.check(nan_row1.astype(np.float32), [x], "f32", {"axis": -1})
    assert not res.ok and "worst at (1, 2)" in res.message


def test_budgets_are_documented_and_ordered():
    for op in operators.names():
        readme = (Path(operators.module(op).__file__).parent / "README.md").read_text(encoding="utf-8")
        assert "- Budget:" in readme or "Error budget" in readme, f"the error budget of {op} lacks its reasoning"
    inexact = [spec for spec in operators.specs() if spec.budgets["f32"].rtol > 0]
    assert inexact
    for spec in inexact:  # a budget relative to the dtype's precision: the narrower the dtype, the wider
        b = spec.budgets
        assert b["f32"].rtol < b["f16"].rtol < b["bf16"].rtol, spec.name


# -------------------------------------------------------------------------------------------------
# optional inputs (matmul's c)


def _spec_with_optional(**kw):
    from oprt_core.spec import OpSpec

    base = dict(name="axpby", doc="out = x (+ y)", n_inputs=3, input_names=("x", "y", "z"),
                reference_fn=lambda x, y=None, z=None: x, bytes_fn=lambda c, d: 0, flops_fn=lambda c: 0,
                budgets={}, case_sets={})
    return OpSpec(**{**base, **kw})


def test_optional_inputs_are_the_last_ones_and_counted():
    spec = _spec_with_optional(optional_inputs=("y", "z"))
    assert spec.min_inputs == 1 and spec.n_inputs == 3
    assert spec.inputs_wording() == "1 or 2 or 3 inputs (x, optionally y, z)"
    for n in (1, 2, 3):
        spec.check_input_count(n)
        assert spec.output_shapes([(4,)] * n, {}) == ((4,),)
    for n in (0, 4):
        with pytest.raises(InvalidArgumentError, match=rf"axpby takes 1 or 2 or 3 inputs \(x, optionally y, z\), "
                                                       rf"got {n}"):
            spec.check_input_count(n)
    assert _spec_with_optional().inputs_wording() == "3 input(s) (x, y, z)"


@pytest.mark.parametrize(("kw", "fragment"), [
    ({"optional_inputs": ("y",)}, "optional_inputs 'y' must be the last inputs, in order"),
    ({"optional_inputs": ("z", "y")}, "must be the last inputs, in order"),
    ({"optional_inputs": ("x", "y", "z")}, "after at least one required one"),
    ({"n_inputs": 2}, "axpby: n_inputs is 2 but input_names names 3 (x, y, z)"),
])
def test_optional_inputs_declared_wrongly_are_refused(kw, fragment):
    with pytest.raises(InvalidArgumentError) as info:
        _spec_with_optional(**kw)
    assert fragment in str(info.value)


def test_op_function_of_optional_inputs_takes_them_as_keywords_defaulting_to_none():
    import inspect

    from oprt_core import ops

    fn = ops._op_function(_spec_with_optional(optional_inputs=("y", "z")))
    params = inspect.signature(fn).parameters
    assert list(params)[:3] == ["x", "y", "z"] and params["y"].default is None and params["z"].default is None
    assert "y: None (left out), or an array of f32, f16 or bf16" in fn.__doc__
    assert ops._given((1, 2, None), 1, "axpby") == (1, 2) and ops._given((1, None, None), 1, "axpby") == (1,)
    with pytest.raises(InvalidArgumentError, match="axpby: an optional input is None while a later one is given"):
        ops._given((1, None, 3), 1, "axpby")


def test_index_input_declarations_are_checked():
    kw = dict(name="op", doc="", n_inputs=2, input_names=("x", "i"), reference_fn=lambda x, i: x,
              bytes_fn=lambda c, d: 0, flops_fn=lambda c: 0, budgets={}, case_sets={})
    with pytest.raises(InvalidArgumentError, match="index_inputs names 'j', which are not inputs"):
        OpSpec(**kw, index_inputs={"j": ("i64",)}, index_fn=lambda *a: None)
    with pytest.raises(InvalidArgumentError, match="index input 'i' must declare dtypes of i32, i64"):
        OpSpec(**kw, index_inputs={"i": ("f32",)}, index_fn=lambda *a: None)
    with pytest.raises(InvalidArgumentError, match="need an index_fn"):
        OpSpec(**kw, index_inputs={"i": ("i32", "i64")})
    with pytest.raises(InvalidArgumentError, match="must be an index dtype"):
        TensorCase((3,), dtype="f32")
    spec = OpSpec(**kw, index_inputs={"i": ("i32", "i64")}, index_fn=lambda c, n, k, rng: np.arange(k))
    case = spec.custom_case((4,))
    for idt in ("i32", "i64"):
        c = type(case)(case.op, case.name, (case.inputs[0], TensorCase((4,), dtype=idt)))
        x, i = spec.make_inputs(c, "f16", np.random.default_rng(0))
        assert x.dtype == np.float16 and i.dtype == INDEX_DTYPES[idt].numpy and list(i) == [0, 1, 2, 3]
    assert spec.input_dtypes("i") == ("i32", "i64") and spec.input_dtypes("x") == tuple(DTYPES)


def test_output_dtypes_must_name_an_op_dtype():
    with pytest.raises(InvalidArgumentError, match="output_dtypes maps 'e4m3'"):
        OpSpec("x", "", 1, ("x",), lambda x: x, lambda c, d: 0, lambda c: 0, {"f32": Budget(0, 0)}, {},
               output_dtypes={"e4m3": "bf16"})  # e4m3 not among its dtypes


def test_bad_output_declarations_are_refused():
    base = dict(doc="", n_inputs=1, input_names=("x",), reference_fn=lambda x: (x, x), bytes_fn=lambda c, d: 0,
                flops_fn=lambda c: 0, budgets={"f32": Budget(0, 0)}, case_sets={})
    with pytest.raises(InvalidArgumentError, match="must differ"):
        OpSpec(name="a", outputs=(Output("y"), Output("y")), **base)
    with pytest.raises(InvalidArgumentError, match="must differ"):
        OpSpec(name="a", outputs=(Output("x"), Output("y")), **base)
    with pytest.raises(InvalidArgumentError, match="'z', which are not inputs"):
        OpSpec(name="a", outputs=(Output("y", inplace=("z",)), Output("w")), **base)
    with pytest.raises(InvalidArgumentError, match="per output"):
        OpSpec(name="a", outputs=(Output("y"), Output("w")), inplace=("x",), **base)
    spec = OpSpec(name="a", outputs=(Output("y"), Output("w")), **base)
    x = np.ones(3, np.float32)
    assert [r.dtype for r in spec.reference([x])] == [np.float64, np.float64]
    bad = OpSpec(name="b", outputs=(Output("y"), Output("w"), Output("v")), **base)
    with pytest.raises(InvalidArgumentError, match="returned 2 array"):
        bad.reference([x])


# -------------------------------------------------------------------------------------------------
# roles: what code that serves every op asks of some op (oprt_core.operators.with_role)


def test_every_role_is_played_by_one_op_as_it_says():
    for role in operators.ROLES:
        players = [name for name in operators.names() if role in getattr(operators.module(name), "ROLES", {})]
        assert len(players) == 1, (role, players)
        spec, params = operators.with_role(role)
        assert spec.name == players[0]
        spec.validate_params(params, [(7,)])  # params the op takes, for a 1-D input
    x = np.arange(1, 8, dtype=np.float32)
    spec, params = operators.with_role("bandwidth-probe")
    np.testing.assert_array_equal(spec.reference([x], params), x)  # out = x
    spec, params = operators.with_role("sum-all")
    full = spec.validate_params(params, [x.shape])
    assert spec.output_shape([x.shape], full) == () and spec.reference([x], full) == 28.0
    with pytest.raises(ValueError, match="unknown op role 'nope'; the roles are bandwidth-probe, sum-all"):
        operators.with_role("nope")
