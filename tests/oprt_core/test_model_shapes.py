"""The ``models`` case set: every core op has one, each case named after its source and valid for its op."""

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


def test_the_shapes_the_set_must_cover():
    softmax = {c.name: c for c in operators.spec("softmax").cases("models")}
    widths = {c.shape[-1] for c in softmax.values()}
    assert {50257, 128256, 151936, 256000, 77, 197, 577} <= widths
    assert softmax["llama3-8b/vocab/4096tok"].shape == (4096, 128256)
    assert softmax["gpt2/vocab/1tok"].shape == (1, 50257)
    assert softmax["resnet50/input/b64"].shape == (64, 3, 224, 224)
    assert softmax["resnet50/input/b64"].param_dict["axis"] == 1
    assert softmax["probe/cube50"].param_dict["axis"] == 2
    reduce = {c.name: c for c in operators.spec("reduce_sum").cases("models")}
    assert reduce["llama2-13b/hidden/16384tok"].shape == (16384, 5120)
    assert sum(1 for c in reduce.values() if c.param_dict["axis"] == 0 and c.shape[0] == 2048) >= 5
    assert reduce["probe/cube50"].param_dict == {"axis": 2, "keepdims": False}
    add = {c.name: c for c in operators.spec("vector_add").cases("models")}
    assert [t.shape for t in add["llama3-70b/hidden+bias/128tok"].inputs] == [(128, 8192), (8192,)]
    assert [t.shape for t in add["deepseek-v3/expert/1tok"].inputs] == [(1, 2048), (1, 2048)]
    for op in ("copy", "relu", "vector_add"):
        got = {c.shape[-1] for c in operators.spec(op).cases("models") if len(c.shape) == 2}
        assert {4096, 5120, 7168, 8192, 2048, 14336, 18944} <= got, op
        assert {c.shape[0] for c in operators.spec(op).cases("models") if len(c.shape) == 2} == {1, 128, 4096}


def test_every_entry_names_its_source():
    for table in (model_shapes.SOFTMAX, model_shapes.REDUCE_SUM, model_shapes.ELEMENTWISE, model_shapes.BIAS_ADD):
        for m in table:
            assert m.source and m.kind in ("hidden", "mlp", "expert", "vocab", "attention", "conv", "probe"), m
