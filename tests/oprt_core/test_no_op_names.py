"""No built-in op is named in the code that serves every op: oprt_core's modules outside its op folders, the baseline
backends, oprt_bench, the scripts and the test suites' shared helpers. Such code finds an op by a property its folder
declares (``operators.with_role``, the spec's group, inputs and outputs), so that an op folder is the whole op.

Read with ``ast``: a string constant (docstrings aside) naming an op, or an identifier holding an op's name as a word
of its own (``_``-separated, any case: ``SOFTMAX``, ``softmax_rows``, ``ops.softmax``). An op named by an ordinary
word (``copy``: a stdlib module and a method of the builtin types) is matched only where it can mean the op: a string
constant that is exactly its name, and an identifier made of it and other words (``copy_case``) that is neither an
attribute nor a method of a class nor a call's keyword (``x.copy()``, ``copy=True``, ``Backend.copy_probe``).
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
from pathlib import Path

import pytest

from oprt_core import operators

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "oprt_core" / "src" / "oprt_core"
TESTS = ROOT / "tests"


def generic_modules() -> list[Path]:
    paths = [*CORE.glob("*.py"), *(CORE / "baselines").glob("*.py"), *(ROOT / "oprt_bench" / "src").rglob("*.py"),
             *(ROOT / "scripts").glob("*.py"), TESTS / "conftest.py", *TESTS.glob("*/conftest.py"),
             TESTS / "oprt_bench" / "bench_helpers.py", *TESTS.glob("*_helpers.py")]
    return sorted(set(paths))


def ordinary_word(name: str) -> bool:
    """A name that is also an ordinary word of Python code: a stdlib module or an attribute of a builtin type."""
    types = (str, bytes, list, dict, set, tuple, int, float, object)
    return name in sys.stdlib_module_names or any(hasattr(t, name) for t in types) or hasattr(builtins, name)


def words(identifier: str) -> list[str]:
    return [w for w in identifier.lower().split("_") if w]


def holds(identifier: str, name: str) -> bool:
    """``identifier``'s ``_``-separated words hold ``name``'s words in a row."""
    have, want = words(identifier), words(name)
    return any(have[i:i + len(want)] == want for i in range(len(have) - len(want) + 1))


def docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
                    first.value.value, str):
                found.add(id(first.value))
    return found


def identifiers(tree: ast.AST) -> list[tuple[ast.AST, str, str]]:
    """(node, identifier, kind) of every name the code binds or reads; kind: "attribute", "method", "keyword" or
    "name"."""
    methods = {id(item) for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for item in node.body
               if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found: list[tuple[ast.AST, str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.append((node, node.id, "name"))
        elif isinstance(node, ast.Attribute):
            found.append((node, node.attr, "attribute"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append((node, node.name, "method" if id(node) in methods else "name"))
        elif isinstance(node, ast.arg):
            found.append((node, node.arg, "name"))
        elif isinstance(node, ast.keyword) and node.arg:
            found.append((node, node.arg, "keyword"))
        elif isinstance(node, ast.alias):
            found.append((node, node.asname or node.name.rpartition(".")[2], "name"))
    return found


def op_names_in(source: str, names: tuple[str, ...]) -> list[str]:
    """Where ``source`` names one of ``names``: ``line: what`` each."""
    tree = ast.parse(source)
    skip = docstrings(tree)
    hits = []
    for name in names:
        plain = ordinary_word(name)
        in_text = re.compile(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])")
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
                if node.value == name or (not plain and in_text.search(node.value)):
                    hits.append(f"{node.lineno}: {name!r} in the string {node.value[:60]!r}")
        for node, ident, kind in identifiers(tree):
            if not holds(ident, name):
                continue
            if plain and (kind != "name" or words(ident) == words(name)):
                continue
            hits.append(f"{node.lineno}: {name!r} in the identifier {ident!r}")
    return sorted(set(hits), key=lambda h: int(h.split(":")[0]))


def test_the_modules_are_found():
    paths = generic_modules()
    assert CORE / "compiled.py" in paths and TESTS / "gpu_helpers.py" in paths and TESTS / "conftest.py" in paths
    assert not [p for p in paths if CORE / "operators" in p.parents]
    assert len(paths) > 40


def test_the_rule_catches_op_names_and_leaves_ordinary_words():
    names = ("copy", "softmax", "rms_norm", "add_rms_norm")
    caught = op_names_in('backend.supports("softmax", "f32")\nSOFTMAX_SHAPES = 1\nx = ops.rms_norm\n'
                         'def _copy_case(): pass\nprepare("copy", [x], out, {})\nf"oprt_add_rms_norm_t"\n', names)
    assert [h.split(":")[0] for h in caught] == ["1", "2", "3", "4", "5", "6", "6"], caught
    fine = '"""softmax in a docstring"""\nimport copy\ny = x.copy()\nz = copy.deepcopy(y)\nnp.array(v, copy=True)\n' \
           'class B:\n    def copy_probe(self): pass\nmsg = "copy it through the host"\nb.copy_probe(4)\n'
    assert op_names_in(fine, names) == []


@pytest.mark.parametrize("path", generic_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_built_in_op_is_named(path):
    hits = op_names_in(path.read_text(encoding="utf-8"), operators.names())
    assert not hits, f"{path.relative_to(ROOT)} names built-in ops:\n" + "\n".join(hits)
