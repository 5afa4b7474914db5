"""``--cases models`` and ``--shapes FILE``: the plan they make, a sweep end to end, and every mistake in a file
as a one-line error (exit 2) naming the file and the entry, before anything is written."""

from __future__ import annotations

import builtins
import csv
import dataclasses
import json
import re
from pathlib import Path

import pytest
from bench_helpers import _Plugin
from test_cli import invoke, one_error_line

from oprt_bench.errors import UsageError
from oprt_bench.shapes_file import file_cases, load_shapes_file
from oprt_bench.sweep import SweepOptions, make_plan
from oprt_core import hookimpl, operators
from oprt_core.numpy_backend import NumpyBackend
from oprt_core.operators.copy import SPEC as copy_spec
from oprt_core.plugins import Registry, get_plugin_manager

ROOT = Path(__file__).resolve().parents[2]

# a third-party op without a models set: the core copy under another name, its four required sets only
PLAIN = dataclasses.replace(copy_spec, name="plaincopy",
                            case_sets={k: v for k, v in copy_spec.case_sets.items() if k != "models"})


class _Ops:
    @hookimpl
    def oprt_register_ops(self, register) -> None:
        register(PLAIN)


def registry_with_plain():
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(_Plugin(NumpyBackend()), "numpy", "oprt-core")
    pm.register_plugin(_Ops(), "plainops", "oprt-bench-tests")
    return Registry(pm)


def plan(reg, **kw):
    return make_plan(reg, SweepOptions(backends="numpy", baseline="none", isolation="none", calibrate=False, **kw))


def test_models_plan_has_every_core_op_and_a_note_for_an_op_without_the_set():
    reg = registry_with_plain()
    assert "plaincopy" in reg.ops
    p = plan(reg, cases="models", mode="test")
    for spec in operators.specs("core"):
        assert [c.name for c in p.cases[spec.name]] == [c.name for c in spec.cases("models")]
        assert len(p.cases[spec.name]) >= 19
    assert p.cases["plaincopy"] == []
    assert any("'plaincopy' has no 'models' case set" in n for n in p.notes)
    with pytest.raises(UsageError, match="no op of --ops has a 'models' case set"):
        plan(reg, cases="models", ops="plaincopy")


def test_models_sweep_of_small_cases_on_numpy(registry, tmp_path, monkeypatch):
    # the real set moves up to GBs per case; the sweep runs its cases below 1 M elements through the CLI
    # (reduce_sum's smallest is the 6.25 M-element probe/cube50)
    small = {spec.name: [c for c in spec.cases("models") if c.numel <= 1 << 20]
             or [min(spec.cases("models"), key=lambda c: c.numel)] for spec in operators.specs("core")}
    assert all(small.values())
    for spec in operators.specs("core"):
        monkeypatch.setitem(spec.case_sets, "models", small[spec.name])
    out = tmp_path / "run"
    r = invoke(registry, "--cases", "models", "--mode", "test", "--dtypes", "f32,bf16", "--backends", "numpy",
               "--ops", ",".join(operators.names("core")), "--isolation", "none", "--format", "csv", "--out", str(out),
               "-q")
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert {(row["op"], row["case"]) for row in rows} == {(op, c.name) for op, cs in small.items() for c in cs}
    assert all(row["status"] == "ok" for row in rows)
    assert any(row["case"] == "llama3-8b/vocab/1tok" for row in rows)


SHAPES = [
    {"name": "mine/logits", "op": "softmax", "shape": [8, 50257]},
    {"name": "mine/hidden", "shape": "128x3584"},
    {"name": "mine/bias", "op": "vector_add", "shape": [[128, 3584], [3584]]},
    {"name": "mine/mid", "op": ["reduce_sum", "softmax"], "shape": [4, 3, 5, 7], "axis": 2, "layout": "transposed"},
    {"name": "mine/keep", "op": "reduce_sum", "shape": "33x65", "params": {"axis": 0, "keepdims": True}},
]


def test_shapes_file_sweep_end_to_end(registry, tmp_path):
    f = tmp_path / "shapes.json"
    f.write_text(json.dumps(SHAPES))
    out = tmp_path / "run"
    r = invoke(registry, "--shapes", str(f), "--mode", "test", "--dtypes", "f32", "--backends", "numpy",
               "--ops", ",".join(operators.names("core")), "--isolation", "none", "--format", "csv", "--out", str(out),
               "-q")
    assert r.exit_code == 0, r.output
    rows = {(row["op"], row["case"]): row for row in csv.DictReader((out / "results.csv").open())}
    expect = {("softmax", "mine/logits"), ("vector_add", "mine/bias"), ("reduce_sum", "mine/mid"),
              ("softmax", "mine/mid"), ("reduce_sum", "mine/keep")}
    expect |= {(op, "mine/hidden") for op in operators.names("core")}  # no op named: every op that accepts it
    assert set(rows) == expect
    assert all(row["status"] == "ok" for row in rows.values())
    assert rows[("vector_add", "mine/bias")]["shape"] == "128x3584,3584"
    assert json.loads(rows[("reduce_sum", "mine/keep")]["params"]) == {"axis": 0, "keepdims": True}
    meta = json.loads((out / "run.json").read_text())
    assert meta["options"]["shapes_file"] == str(f)


def test_shapes_file_entry_without_op_goes_only_to_ops_that_accept_it(registry):
    p = plan(registry, shapes_file=None, cases="smoke")
    assert p.cases["softmax"]
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump([{"name": "x", "shape": [4, 6], "params": {"keepdims": True}}], fh)
    p = plan(registry, shapes_file=fh.name, mode="test")
    assert {op for op, cs in p.cases.items() if cs} == {"reduce_sum"}


@pytest.mark.parametrize("content, message", [
    ("[{", "not valid JSON"),
    ("{}", "expected a non-empty list of entries"),
    ("[]", "expected a non-empty list of entries"),
    ('[{"name": "a", "shape": [3]}, 5]', "entry 1: expected a mapping"),
    ('[{"name": "a", "shape": [3], "axes": 1}]', "entry 0: unknown key 'axes'; valid keys: name, op, shape"),
    ('[{"shape": [3]}]', "entry 0: 'name' is missing"),
    ('[{"name": "a"}]', "entry 0: 'shape' is missing"),
    ('[{"name": "", "shape": [3]}]', "entry 0: name must be a non-empty string"),
    ('[{"name": "a", "op": "nosuch", "shape": [3]}]', "entry 0 ('a'): unknown op 'nosuch'; valid: copy"),
    ('[{"name": "a", "op": "copy", "shape": [3, -1]}]', "entry 0 ('a'): copy: malformed shape"),
    ('[{"name": "a", "op": "copy", "shape": "3y4"}]', "entry 0 ('a'): copy: malformed shape '3y4'"),
    ('[{"name": "a", "op": "copy", "shape": 7}]', "shape must be a list of extents"),
    ('[{"name": "a", "op": "softmax", "shape": [3, 4], "axis": 2}]',
     "entry 0 ('a'): softmax: axis 2 is out of range for a 2-d input"),
    ('[{"name": "a", "shape": [3, 4], "axis": 5}]', "entry 0 ('a'): no swept op accepts it"),
    ('[{"name": "a", "op": "copy", "shape": [3], "layout": "diagonal"}]', "unknown layout 'diagonal'"),
    ('[{"name": "a", "op": "copy", "shape": [3], "params": {"slope": 1}}]', "unknown param of copy 'slope'"),
    ('[{"name": "a", "op": "copy", "shape": [3], "params": [1]}]', "params must be a mapping"),
    ('[{"name": "a", "op": "vector_add", "shape": [[3, 4], [5]]}]', "do not broadcast together"),
    ('[{"name": "a", "op": "copy", "shape": [[3], [3]]}]', "2 shapes given; copy takes 1 input(s)"),
    ('[{"name": "a", "op": "copy", "shape": [3]}, {"name": "a", "op": "copy", "shape": [4]}]',
     "entry 1 ('a'): a case of copy named 'a' is already in the file"),
    ('[{"name": "a\\nb", "op": "copy", "shape": [3]}]', "entry 0: name must be printable text"),
])
def test_shapes_file_mistakes_are_one_line_errors_naming_file_and_entry(registry, tmp_path, content, message):
    f = tmp_path / "shapes.json"
    f.write_text(content)
    out = tmp_path / "run"
    r = invoke(registry, "--shapes", str(f), "--mode", "test", "--backends", "numpy", "--out", str(out))
    assert r.exit_code == 2, r.output
    line = one_error_line(r)
    assert f"--shapes {str(f)!r}" in line and message in line, line
    assert not out.exists()


@pytest.mark.parametrize("op, content", [
    ("softmax", '[{"name": "a", "op": "softmax", "shape": [3, 4], "axis": 2}]'),
    ("matmul", '[{"name": "a", "op": "matmul", "shape": [[3, 4], [5, 6]]}]'),
    ("copy", '[{"name": "a", "op": "copy", "shape": [3], "params": {"slope": 1}}]'),
    ("copy", '[{"name": "a", "op": "copy", "shape": [[3], [3]]}]'),
    ("copy", '[{"name": "a", "op": "copy", "shape": "3y4"}]'),
    ("softmax", '[{"name": "a", "shape": [3, 4], "axis": 5}]'),
])
def test_shapes_file_errors_name_the_op_once(registry, tmp_path, op, content):
    """The op's own message names it where it does; the error adds the op's name only where it does not."""
    f = tmp_path / "shapes.json"
    f.write_text(content)
    r = invoke(registry, "--shapes", str(f), "--mode", "test", "--backends", "numpy", "--out", str(tmp_path / "run"))
    assert r.exit_code == 2, r.output
    why = one_error_line(r).split("('a'): ", 1)[1]
    assert len(re.findall(rf"(?<!\w){op}(?!\w)", why)) == 1, why


def test_a_shapes_file_with_no_entry_for_the_swept_ops_is_refused(registry, tmp_path):
    f = tmp_path / "shapes.json"
    f.write_text('[{"name": "a", "op": "relu", "shape": [3]}]')
    r = invoke(registry, "--shapes", str(f), "--ops", "copy,softmax", "--backends", "numpy", "--out",
               str(tmp_path / "run"))
    assert r.exit_code == 2, r.output
    assert "none of its entries is for an op of --ops (copy, softmax)" in one_error_line(r)


@pytest.mark.parametrize("args", [["--shape", "4x4", "--shapes", "FILE"], ["--shape", "4x4", "--shape", "4x4"]],
                         ids=["shape-and-file", "repeated-shape"])
def test_two_cases_of_one_name_are_refused(registry, tmp_path, args):
    """A --shape case is named by its shape: a file entry of that name (another shape) or a repeated --shape would
    give two cases one row key, whose rows tables, compare, merge and --resume then confuse."""
    f = tmp_path / "shapes.json"
    f.write_text('[{"name": "4x4", "op": "copy", "shape": [8, 8]}]')
    out = tmp_path / "run"
    r = invoke(registry, *[str(f) if a == "FILE" else a for a in args], "--ops", "copy", "--mode", "test",
               "--backends", "numpy", "--out", str(out))
    assert r.exit_code == 2, r.output
    assert "two cases of op copy are named '4x4'" in one_error_line(r)
    assert not out.exists()


def test_shapes_file_missing_or_yaml_without_pyyaml(registry, tmp_path, monkeypatch):
    r = invoke(registry, "--shapes", str(tmp_path / "none.json"), "--backends", "numpy")
    assert r.exit_code == 2 and "cannot read it" in one_error_line(r)
    real_import = builtins.__import__

    def no_yaml(name, *args, **kw):
        if name == "yaml":
            raise ImportError("no yaml")
        return real_import(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_yaml)
    f = tmp_path / "shapes.yaml"
    f.write_text("- {name: a, shape: [3]}\n")
    r = invoke(registry, "--shapes", str(f), "--backends", "numpy")
    assert r.exit_code == 2
    assert "reading YAML needs PyYAML, which oprt-bench does not depend on" in one_error_line(r)


def test_shapes_file_yaml_with_pyyaml(registry, tmp_path):
    pytest.importorskip("yaml", reason="PyYAML is not installed (an optional reader of --shapes)")
    f = tmp_path / "shapes.yml"
    f.write_text("- name: mine/logits\n  op: softmax\n  shape: [8, 77]\n")
    p = plan(registry, shapes_file=str(f), mode="test")
    assert [c.name for c in p.cases["softmax"]] == ["mine/logits"]


@pytest.mark.parametrize("path", sorted((ROOT / "scripts" / "shapes").glob("*.json")), ids=lambda p: p.name)
def test_the_repository_shapes_files_load(registry, path):
    """scripts/shapes/*.json (the files the nvidia path rule and the matmul scheduler designs are measured on) make
    cases for the ops they name: a broken entry fails here, not on the GPU host."""
    entries = load_shapes_file(path)
    ops = sorted({op for e in entries for op in ([e["op"]] if isinstance(e["op"], str) else e["op"])})
    cases = file_cases(path, entries, [registry.get_op(op) for op in ops], ops)
    assert sum(len(v) for v in cases.values()) == len(entries)
