"""The first-party packages have no import cycles between their modules.

The graph is read from the source with ``ast`` (no import happens), and counts every
``import`` of a sibling module, also those inside functions (a lazy import is still a
cycle) and those under ``TYPE_CHECKING`` (a type-only cycle still ties the modules' designs
together). Subpackages are nodes of their own; ``from . import x`` names module ``x``. The test modules inside a
package (each op folder's ``test_<op>.py``, ``operators/conftest.py``) are no nodes: pytest imports them, nothing
in the package does.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "oprt_core": ROOT / "oprt_core" / "src" / "oprt_core",
    "oprt_bench": ROOT / "oprt_bench" / "src" / "oprt_bench",
}


def module_name(package: str, src: Path, path: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([package, *parts])


def imported_modules(mod: str, path: Path, known: set[str]) -> set[str]:
    """The first-party modules that ``mod`` (file ``path``) imports."""
    is_pkg = path.name == "__init__.py"
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - node.level + 1]
                target = ".".join(anchor + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [target] + [f"{target}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            # the longest known prefix: `from .x import f` names module x, not x.f
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != mod:
                found.add(name)
    return found


def is_test_code(path: Path) -> bool:
    """A test module or conftest inside the package (an op folder's tests): pytest's, imported by nothing there."""
    return path.name == "conftest.py" or path.name.startswith("test_")


def import_graph(package: str, src: Path) -> dict[str, set[str]]:
    files = {module_name(package, src, p): p for p in src.rglob("*.py") if not is_test_code(p)}
    known = set(files)
    return {mod: imported_modules(mod, path, known) for mod, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a list of modules (first == last), or None. A package importing its own
    submodules (``__init__`` re-exports) is not a cycle unless a submodule imports back."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            # a submodule importing its parent package's __init__ re-exports is the usual
            # package pattern only when the parent is an ancestor: skip ancestor edges
            if node.startswith(nxt + "."):
                continue
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}}) == ["p.a", "p.b", "p.c", "p.a"]
    assert find_cycle({"p.a": {"p.b"}, "p.b": set(), "p": {"p.a"}}) is None


def test_the_op_folders_tests_are_left_out_of_the_graph() -> None:
    graph = import_graph("oprt_core", PACKAGES["oprt_core"])
    assert "oprt_core.operators.copy" in graph and "oprt_core.operators.copy.numpy_impl" in graph
    assert not [mod for mod in graph if mod.rpartition(".")[2].startswith("test_") or mod.endswith(".conftest")]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycles(package: str) -> None:
    graph = import_graph(package, PACKAGES[package])
    assert len(graph) > 3, f"no modules found under {PACKAGES[package]}"
    cycle = find_cycle(graph)
    assert cycle is None, f"import cycle in {package}: {' -> '.join(cycle)}"
