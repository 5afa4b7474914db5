"""The ``models`` case set: every core op has one, each case named after its source and valid for its op; every
model shape names its source."""

from __future__ import annotations

import re

import pytest

from oprt_core import model_shapes, operators

# <model>/<tensor>[/<count>]: lower-case source names, e.g. llama3-8b/vocab/4096tok or vit-b16/attn/b128
NAME = re.compile(r"^[a-z0-9.-]+/[a-z0-9.+-]+(/[a-z0-9-]+)?$")


@pytest.mark.parametrize("op", list(operators.names("core")))
def test_every_core_op_has_a_models_set_of_valid_source_named_cases(op):
    spec = operators.spec(op)
    cases = spec.cases("models")
    assert len(cases) >= 19
    names = [c.name for c in cases]
    assert len(names) == len(set(names))
    for c in cases:
        assert NAME.match(c.name), c.name
        shapes = [t.shape for t in c.inputs]
        full = spec.validate_params(c.param_dict, shapes)
        spec.output_shape(shapes, full)
        assert spec.bytes_moved(c, "f32") > 0


def _tables() -> list[tuple[model_shapes.ModelShape, ...]]:
    """model_shapes' lists of shapes and those of the op folders (the selection an op makes of them)."""
    modules = [model_shapes, *(operators.module(name) for name in operators.names())]
    return [value for module in modules for value in vars(module).values()
            if isinstance(value, tuple) and value and all(isinstance(m, model_shapes.ModelShape) for m in value)]


def test_every_entry_names_its_source():
    tables = _tables()
    assert model_shapes.ELEMENTWISE in tables and len(tables) > 3
    for table in tables:
        for m in table:
            assert m.source and m.kind in ("hidden", "mlp", "expert", "vocab", "attention", "conv", "probe"), m
