"""The model ops (group "model" of oprt_core.operators), each alike: every case set present and smoke tiny, the numpy
backend within budget on every smoke and edge case, a reference rounded once passes and a few ulps too many fail,
each registered and declared in oprt.h; the host C library fuzzed against the references for the norms (the ops
whose package makes cases with ``norm_case``). Each op's own tests are in its folder
(oprt_core/operators/<op>/test_<op>.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gpu_helpers import run_checked
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import oprt_core
from oprt_core import cdecl, operators
from oprt_core.dtypes import DTYPES
from oprt_core.numpy_backend import NumpyBackend
from oprt_core.plugins import get_registry
from oprt_core.spec import LAYOUTS, as_outputs

# -- the numpy backend on every smoke and edge case ----------------------------------------------------------

CASES = [(spec.name, cs, case) for spec in operators.specs("model") for cs in ("smoke", "edge")
         for case in spec.cases(cs)]


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("op,case_set,case", CASES, ids=[f"{o}-{s}-{c.name}" for o, s, c in CASES])
def test_numpy_backend_within_budget(op, case_set, case, dtype):
    spec, be = operators.spec(op), operators.equip(NumpyBackend())
    inputs = spec.make_inputs(case, dtype, np.random.default_rng(hash(case.name) % 1000))
    params = spec.validate_params(case.param_dict, [x.shape for x in inputs])
    out = spec.new_outputs(be, [x.shape for x in inputs], params, dtype)
    for o in as_outputs(out):
        be.fill_nan(o)  # an element left unwritten stays NaN and fails the check
    assert be.supports(op, dtype, case).ok
    be.prepare(op, inputs, out, params)()
    result = spec.check(out, inputs, dtype, params)
    assert result.ok, result.message


def test_every_case_set_and_a_tiny_smoke_set():
    for spec in operators.specs("model"):
        for cs in ("smoke", "default", "large", "edge", "models"):
            assert spec.cases(cs) and all(c.op == spec.name for c in spec.cases(cs))
        assert max(c.numel for c in spec.cases("smoke")) <= 1 << 12  # smoke stays tiny


# -- budgets: one rounding passes, a few ulps off fail ----------------------------------------------------------

@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("spec", operators.specs("model"), ids=lambda s: s.name)
def test_reference_rounded_once_passes_and_ulps_off_fail(spec, dtype):
    case = spec.cases("smoke")[0]
    inputs = spec.make_inputs(case, dtype, np.random.default_rng(0))
    params = spec.validate_params(case.param_dict)
    refs = as_outputs(spec.reference(inputs, params))
    np_dt = DTYPES[dtype].numpy
    rounded = tuple(r.astype(np_dt) for r in refs)
    assert spec.check(rounded if spec.multi_output else rounded[0], inputs, dtype, params).ok
    # every element of any one output 3 ulps of the dtype (or, for f32, 40 ulps: more than the f32 terms) too large
    k = 40 if dtype == "f32" else 3
    for j, ref in enumerate(refs):
        wrong = (ref * (1 + k * DTYPES[dtype].eps)).astype(np_dt)
        outs = rounded[:j] + (wrong,) + rounded[j + 1:]
        result = spec.check(outs if spec.multi_output else wrong, inputs, dtype, params)
        assert not result.ok
        assert not spec.multi_output or result.message.startswith(f"{spec.output_names[j]}: ")


def test_registered_with_the_built_in_ops_and_declared_in_oprt_h():
    reg = get_registry()
    header = (Path(oprt_core.__file__).parent / "include" / "oprt.h").read_text()
    entry = (Path(oprt_core.__file__).parent / "include" / "oprt_entry.h").read_text()
    for spec in operators.specs("model"):
        assert reg.get_op(spec.name) is spec and spec.has_c_abi
        assert cdecl.prototypes(spec) in header
        assert cdecl.entry_macro(spec) in entry
    assert not set(operators.names("model")) & set(operators.names("core"))
    names = [s.name for s in cdecl.c_abi_ops()]  # the core ops, the model ops, then the compute-bound ops
    core, model = operators.names("core"), operators.names("model")
    assert tuple(names[len(core):len(core) + len(model)]) == model


# -- fuzzing the norms: the host library against the references on random shapes, layouts, eps and dtypes -----------

NORMS = [spec for spec in operators.specs() if hasattr(operators.module(spec.name), "norm_case")]


@st.composite
def _norm_case(draw):
    spec = draw(st.sampled_from(NORMS))
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 70), min_size=ndim, max_size=ndim)))
    layout = draw(st.sampled_from([lay for lay in LAYOUTS if lay != "transposed" or ndim >= 2]))
    eps = draw(st.sampled_from([0.0, 1e-6, 1e-3, 0.5]))
    case = operators.module(spec.name).norm_case(
        spec.name, shape, layout if layout != "broadcast0" or ndim >= 2 else "contiguous", eps,
        draw(st.sampled_from(["contiguous", "step2", "reversed", "offset1"])))
    return case, draw(st.sampled_from(sorted(DTYPES))), draw(st.integers(0, 2**32 - 1))


def test_there_are_norms_to_fuzz():
    assert NORMS


@settings(max_examples=90, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=_norm_case())
def test_fuzz_host_library_within_budget(host_backend, drawn):
    """Any shape, layout (including broadcast, reversed and offset views) and eps: the host C library's plans and
    loops land within the op's budget of the float64 reference, and out is never touched outside its shape."""
    case, dtype, seed = drawn
    result, _, _ = run_checked(host_backend, operators.spec(case.op), case, dtype, seed)
    assert result.ok, (case, dtype, result.message)
