"""Which ops a change touches: the ops a verification run on the GPU sweeps (scripts/gpu-suite.sh's ``verify``).

A changed file touches an op when
- a component of its path, or its file name, names the op (``OP.cu``, ``test_nvidia_OP.py``, ``OP_rows.cuh``, a
  folder named after the op);
- it is a C or CUDA source that defines the op's entry points (``OPRT_DEFINE_OP(OP, ...)`` or
  ``oprt_create_OP_descriptor``), or a header that such a source of the same folder includes.
Documentation and results touch nothing. Any other change (a generic module, a shared header no op source
includes) may touch every op: :func:`touched_ops` then answers ``None``, "all".

``python -m oprt_bench.touched [BASE]`` prints the ops of the working tree's change against the git revision BASE
(default ``HEAD``: the uncommitted change; with none, ``HEAD~1``) as a comma-separated list, or ``all``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import PurePosixPath

#: files that describe and never change what runs: no sweep for them
QUIET_SUFFIXES = (".md", ".txt", ".csv", ".json", ".html", ".log", ".xml", ".png", ".svg")
QUIET_DIRS = ("docs", "results")
C_SUFFIXES = (".c", ".cu", ".cuh", ".h", ".hpp", ".cpp")
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def _names_op(path: PurePosixPath, op: str) -> bool:
    """Whether a path component or the file's stem names the op as a whole word (``_`` and ``-`` separate
    words: ``OP_rows`` names OP; a word that is part of an op's name, or another word of it, names no op)."""
    word = re.compile(rf"(^|[^a-z0-9]){re.escape(op)}([^a-z0-9]|$)")
    parts = [*path.parts[:-1], path.stem]
    return any(word.search(p.lower()) for p in parts)


def _defines(text: str, op: str) -> bool:
    return bool(re.search(rf"OPRT_DEFINE_OP\(\s*{re.escape(op)}\s*,|\boprt_create_{re.escape(op)}_descriptor\s*\(",
                          text))


def touched_ops(changed: Iterable[str], ops: Sequence[str], read: Callable[[str], str | None],
                siblings: Callable[[str], Iterable[str]] = lambda p: ()) -> list[str] | None:
    """The ops among ``ops`` that the changed paths touch, in ``ops``' order; None where a change may touch all.

    :param changed: paths relative to the repository root, as git names them (``/`` separators)
    :param read: a path's text, or None where it is gone (a deleted file)
    :param siblings: the paths of the folder a header lies in (the sources that may include it)
    """
    hit: set[str] = set()
    for name in changed:
        path = PurePosixPath(name)
        if path.suffix.lower() in QUIET_SUFFIXES or (path.parts and path.parts[0] in QUIET_DIRS):
            continue
        mine = {op for op in ops if _names_op(path, op)}
        if not mine and path.suffix in C_SUFFIXES:
            text = read(name) or ""
            mine = {op for op in ops if _defines(text, op)}
            if not mine and path.suffix in (".cuh", ".h", ".hpp"):
                # a header: the ops of the sources beside it that include it
                for sib in siblings(name):
                    sib_text = read(sib) or ""
                    if path.name in _INCLUDE.findall(sib_text):
                        mine |= {op for op in ops if _defines(sib_text, op) or _names_op(PurePosixPath(sib), op)}
        if not mine:
            return None
        hit |= mine
    return [op for op in ops if op in hit]


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def changed_files(base: str | None) -> list[str]:
    """The paths changed between ``base`` and the working tree (uncommitted files included); with no base, the
    uncommitted change, or the last commit's where there is none."""
    untracked = _git("ls-files", "--others", "--exclude-standard").split()
    if base is None:
        paths = _git("diff", "--name-only", "HEAD").split() + untracked
        if paths:
            return sorted(set(paths))
        base = "HEAD~1"
    return sorted(set(_git("diff", "--name-only", base).split() + untracked))


def main(argv: list[str] | None = None) -> int:
    from pathlib import Path

    from oprt_core.plugins import get_registry

    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0].startswith("-")):
        print("usage: python -m oprt_bench.touched [BASE]", file=sys.stderr)
        return 2
    try:
        changed = changed_files(args[0] if args else None)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"all  # git could not say what changed: {exc}", file=sys.stderr)
        print("all")
        return 0

    def read(p: str) -> str | None:
        try:
            return Path(p).read_text(errors="replace")
        except OSError:
            return None

    def siblings(p: str) -> list[str]:
        folder = Path(p).parent
        return [str(q) for q in sorted(folder.glob("*")) if q.suffix in C_SUFFIXES] if folder.is_dir() else []

    ops = sorted(get_registry().ops)
    found = touched_ops(changed, ops, read, siblings)
    print("all" if found is None else ",".join(found) or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
