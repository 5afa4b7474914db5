"""``--shapes FILE``: a user's own cases, read from JSON (or YAML, where PyYAML is installed).

The file is a list of entries, each a mapping (docs/cases.md has the schema with examples)::

    name    the case's name, used as given (required; unique per op)
    op      an op name or a list of them (optional: every swept op that accepts the entry)
    shape   one shape for every input ([4096, 4096] or "4096x4096"), or one per input
            ([[4096, 4096], [4096]] or "4096x4096,4096")
    axis    the op's axis param (optional; the same as params: {axis: ...})
    layout  a layout for every input, or a list with one per input (optional; default contiguous)
    params  the op's other params, a mapping (optional)

Every mistake is a :class:`~oprt_bench.errors.UsageError` naming the file and the entry's index, raised before
anything runs.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from oprt_core import OprtError
from oprt_core.spec import LAYOUTS, Case, OpSpec, TensorCase, check_shape, parse_shape

from .errors import UsageError

__all__ = ["KEYS", "load_shapes_file", "file_cases"]

KEYS = ("name", "op", "shape", "axis", "layout", "params")
MAX_SHAPE_BYTES = 2**48  # as --shape: a shape whose float64 copy would exceed this (256 TiB) is a mistake


def _read(path: Path) -> Any:
    where = f"--shapes {str(path)!r}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{where}: cannot read it ({exc})") from None
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml  # type: ignore[import-untyped]
        except ImportError:
            raise UsageError(f"{where}: reading YAML needs PyYAML, which oprt-bench does not depend on "
                             "(pip install pyyaml), or write the file as JSON") from None
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise UsageError(f"{where}: not valid YAML: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where}: not valid JSON: {exc}") from None


def _shape(value: Any) -> tuple[int, ...]:
    if isinstance(value, str):
        return parse_shape(value)
    shape = check_shape(value)
    if any(d >= 2**63 for d in shape) or math.prod(shape) * 8 > MAX_SHAPE_BYTES:
        raise UsageError(f"shape {list(shape)} is too large: {math.prod(shape)} elements (at most "
                         f"{MAX_SHAPE_BYTES // 8} float64 elements)")
    return shape


def _shapes(value: Any) -> list[tuple[int, ...]] | tuple[int, ...]:
    """One shape (a tuple) or one per input (a list of tuples)."""
    if isinstance(value, str):
        parts = value.split(",")
        return [_shape(p) for p in parts] if len(parts) > 1 else _shape(value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (list, tuple, str)) for v in value):
        return [_shape(v) for v in value]
    if not isinstance(value, (list, tuple)):
        raise UsageError(f"shape must be a list of extents, a list of such lists (one per input) or a string "
                         f"like 4096x4096, got {value!r}")
    return _shape(value)


def _entry(spec: OpSpec, name: str, entry: Mapping[str, Any]) -> Case:
    """The case of one entry for one op; OprtError (UsageError among them) when it does not fit."""
    shapes = _shapes(entry["shape"])
    if not isinstance(entry.get("params") or {}, Mapping):
        raise UsageError(f"params must be a mapping of name to value, got {entry['params']!r}")
    params = dict(entry.get("params") or {})
    if "axis" in entry:
        if "axis" in params and params["axis"] != entry["axis"]:
            raise UsageError("axis is given twice (axis and params.axis) with different values")
        params["axis"] = entry["axis"]
    if isinstance(shapes, tuple):
        full = spec.validate_params(params, [shapes] * spec.n_inputs)
        case = replace(spec.custom_case(shapes, full), name=name)
    else:
        if not spec.min_inputs <= len(shapes) <= spec.n_inputs:
            raise UsageError(f"{len(shapes)} shapes given; {spec.name} takes {spec.inputs_wording()}")
        full = spec.validate_params(params, shapes)
        case = Case(spec.name, name, tuple(TensorCase(s) for s in shapes), tuple(sorted(full.items())))
    layout = entry.get("layout", "contiguous")
    layouts = [layout] * len(case.inputs) if isinstance(layout, str) else layout
    if not isinstance(layouts, list) or len(layouts) != len(case.inputs) or not all(isinstance(x, str)
                                                                                     for x in layouts):
        raise UsageError(f"layout must be one of {', '.join(LAYOUTS)} or a list of {len(case.inputs)} of them "
                         f"(one per input), got {layout!r}")
    case = replace(case, inputs=tuple(TensorCase(t.shape, lay) for t, lay in zip(case.inputs, layouts)))
    in_shapes = [t.shape for t in case.inputs]
    spec.output_shape(in_shapes, spec.validate_params(case.param_dict, in_shapes))
    return case


def load_shapes_file(path: Path | str) -> list[dict[str, Any]]:
    """The file's entries, each checked for its keys and a name (the shapes are checked per op by
    :func:`file_cases`); UsageError naming the file (and the entry's index) otherwise."""
    path = Path(path)
    where = f"--shapes {str(path)!r}"
    data = _read(path)
    if not isinstance(data, list) or not data:
        raise UsageError(f"{where}: expected a non-empty list of entries ({{name, shape, ...}}), got "
                         f"{type(data).__name__ if data else 'nothing'}")
    for i, entry in enumerate(data):
        if not isinstance(entry, dict):
            raise UsageError(f"{where}: entry {i}: expected a mapping with keys {', '.join(KEYS)}, got {entry!r}")
        unknown = [k for k in entry if k not in KEYS]
        if unknown:
            raise UsageError(f"{where}: entry {i}: unknown key {unknown[0]!r}; valid keys: {', '.join(KEYS)}")
        for key in ("name", "shape"):
            if key not in entry:
                raise UsageError(f"{where}: entry {i}: {key!r} is missing")
        if not isinstance(entry["name"], str) or not entry["name"].strip():
            raise UsageError(f"{where}: entry {i}: name must be a non-empty string, got {entry['name']!r}")
        if not entry["name"].isprintable():  # a newline or tab would break the tables and the CSV's readers
            raise UsageError(f"{where}: entry {i}: name must be printable text (no newline, tab or control "
                             f"character), got {entry['name']!r}")
    return data


def _refusal(op: str, exc: Exception) -> str:
    """``exc``'s message on one line, led by ``op: `` unless it names the op already (the op's own checks do)."""
    text = " ".join(str(exc).split())
    return text if re.search(rf"(?<!\w){re.escape(op)}(?!\w)", text) else f"{op}: {text}"


def file_cases(path: Path | str, entries: Sequence[Mapping[str, Any]], specs: Sequence[OpSpec],
               known_ops: Sequence[str]) -> dict[str, list[Case]]:
    """The cases of ``entries`` for each of ``specs`` (the swept ops): an entry naming ops goes to those of them
    that are swept, one naming none to every swept op that accepts it. UsageError naming the file and the entry's
    index for an unknown op, a shape or param an op it names refuses, one no op accepts, or a duplicate name."""
    where = f"--shapes {str(path)!r}"
    swept = {s.name: s for s in specs}
    out: dict[str, list[Case]] = {s.name: [] for s in specs}
    for i, entry in enumerate(entries):
        name = entry["name"].strip()
        label = f"{where}: entry {i} ({name!r})"
        ops = entry.get("op")
        named = ops is not None
        if isinstance(ops, str):
            ops = [ops]
        if named and (not isinstance(ops, list) or not ops or not all(isinstance(o, str) for o in ops)):
            raise UsageError(f"{label}: op must be an op name or a list of them, got {entry['op']!r}")
        for op in ops or ():
            if op not in known_ops:
                raise UsageError(f"{label}: unknown op {op!r}; valid: {', '.join(known_ops)}")
        refusals: list[str] = []
        for op in (ops if ops is not None else list(swept)):
            if op not in swept:
                continue  # named, but not in --ops: left out of this sweep
            try:
                case = _entry(swept[op], name, entry)
            except OprtError as exc:
                if named:
                    raise UsageError(f"{label}: {_refusal(op, exc)}") from None
                refusals.append(_refusal(op, exc))
                continue
            if any(c.name == name for c in out[op]):
                raise UsageError(f"{label}: a case of {op} named {name!r} is already in the file")
            out[op].append(case)
        if not named and len(refusals) == len(swept):
            raise UsageError(f"{label}: no swept op accepts it ({'; '.join(refusals)})")
    return out
