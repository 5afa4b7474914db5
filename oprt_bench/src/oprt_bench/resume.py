"""``--resume RUN_DIR``: continue a run that was interrupted, in its own folder, never overwriting it.

Rows already in the run's ``results.csv`` are kept and skipped; the rest are measured and appended.
Only a run of the *same provenance* may be continued, or its rows would not be comparable:

- the same ``oprt-core`` and ``oprt-bench`` versions and git commit (where both runs recorded one),
- the same seed, mode and timing options (cold/warm, time budget, sampling rules),
- for every backend in both runs: the same device, build flavour, driver and toolkit, and the same
  version of the plugin distribution that registered it.

Anything else is refused with one line naming the first difference, as is a ``results.csv`` whose columns are
another schema version's. Options not given on the command
line default to the resumed run's (``oprt-bench --resume RUN_DIR`` continues it as it was started).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import UsageError
from .results import COLUMNS, CSV_NAME, RUN_JSON, SCHEMA_VERSION, frame_records, normalize_rows, open_rows_file

__all__ = ["ResumeState", "load_resume", "resume_options", "provenance_key", "check_provenance"]

_KEY = ("op", "case", "dtype", "backend")


@dataclass
class ResumeState:
    path: Path
    meta: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)
    done: dict[tuple[str, ...], dict[str, Any]] = field(default_factory=dict)
    cut: int | None = None  # where a half-written last line of results.csv starts
    rows_file: Any = None  # results.csv, opened and locked for this process (results.open_rows_file)

    def heal(self) -> None:
        """Cut the half-written last line (its row is measured again)."""
        if self.cut is not None:
            with (self.path / CSV_NAME).open("r+b") as f:
                f.truncate(self.cut)
            self.cut = None

    def lookup(self, row: Mapping[str, Any]) -> dict[str, Any] | None:
        """The row already measured for ``row``'s (op, case, dtype, backend), or None."""
        return self.done.get(tuple(str(row[k]) for k in _KEY))

    def count_skipped(self, plan: Any) -> int:
        names = [b.name for b in plan.backends]
        return sum((spec.name, case.name, dtype, name) in self.done
                   for spec, case, dtype in plan.jobs() for name in names)


def load_resume(path: Path) -> ResumeState:
    """Read the run to continue; UsageError (one line) when ``path`` is not a resumable run folder.

    Writes nothing: a half-written last line (a run killed in the middle of a write) is left out of the
    rows and cut from the file by :meth:`ResumeState.heal` once the provenance check has passed.
    """
    if not path.is_dir():
        raise UsageError(f"--resume {str(path)!r} is not a run folder")
    run_json = path / RUN_JSON
    try:
        meta = json.loads(run_json.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--resume {str(path)!r} is not a run folder: cannot read {RUN_JSON} ({exc})") from None
    if not isinstance(meta, dict):
        raise UsageError(f"--resume {str(path)!r} is not a run folder: {RUN_JSON} is not a JSON object")
    if meta.get("merged"):
        raise UsageError(f"--resume {str(path)!r} is a merged run (oprt-bench merge), which has no sweep of its own "
                         "to continue: resume the runs it merged, then merge them again")
    csv_path = path / CSV_NAME
    if not csv_path.is_file():
        raise UsageError(f"--resume {str(path)!r} has no {CSV_NAME} (a run without the csv format cannot be resumed)")
    rows_file = open_rows_file(csv_path)  # RunBusy while another process writes the run
    try:
        state = _read_rows(path, meta, csv_path)
    except BaseException:
        rows_file.close()
        raise
    state.rows_file = rows_file
    return state


def _read_rows(path: Path, meta: dict[str, Any], csv_path: Path) -> ResumeState:
    data = csv_path.read_bytes()
    cut = data.rfind(b"\n") + 1
    try:
        text = data[:cut].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--resume {str(path)!r}: {CSV_NAME} is not UTF-8 text ({exc})") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    records = list(reader)
    header = tuple(reader.fieldnames or ())
    if header and header != COLUMNS:
        # appending this version's rows under another header would make a file no reader can split
        version = {str(r["schema_version"]) for r in records if r.get("schema_version")}
        written = f"schema version {', '.join(sorted(version))}" if version else "another schema"
        raise UsageError(f"--resume {str(path)!r}: its {CSV_NAME} was written with {written} (its columns differ "
                         f"from this oprt-bench's schema version {SCHEMA_VERSION}); resume it with the oprt-bench "
                         "that started it, or start a new run")
    rows: list[dict[str, Any]] = []
    if records:
        table = normalize_rows(records)
        rows = frame_records(table)
    done = {tuple(str(r[k]) for k in _KEY): r for r in rows}
    return ResumeState(path, meta, rows, done, cut if cut < len(data) else None)


def resume_options(opts: Any, meta: dict[str, Any], explicit: set[str]) -> Any:
    """``opts`` with every option the user did not give taken from the resumed run's ``options``."""
    old = meta.get("options") or {}
    fields = {f.name for f in dataclasses.fields(opts)}
    changes = {}
    for name, value in old.items():
        if name in fields and name not in explicit:
            changes[name] = tuple(value) if name == "shapes" else value
    return dataclasses.replace(opts, **changes)


def _plugin_versions(meta: dict[str, Any]) -> dict[str, str | None]:
    return {p.get("name"): p.get("version") for p in meta.get("plugins") or []}


def _backend_plugin(meta: dict[str, Any], backend: str) -> str | None:
    for p in meta.get("plugins") or []:
        if backend in (p.get("backends") or []):
            return p.get("name")
    return None


def provenance_key(meta: dict[str, Any]) -> dict[str, Any]:
    """What must match between a run and its continuation (see the module docstring)."""
    versions = meta.get("versions") or {}
    plan = meta.get("plan") or {}
    git = meta.get("git") or {}
    key: dict[str, Any] = {
        "oprt-core version": versions.get("oprt-core"),
        "oprt-bench version": versions.get("oprt-bench"),
        "git commit": git.get("commit"),
        "seed": meta.get("seed"),
        "mode": plan.get("mode"),
    }
    timing = dict(plan.get("timing") or {})
    timing.setdefault("flush", "dirty")  # runs from before --flush had the dirty flush
    timing.setdefault("timer", "events")  # runs from before --timing were timed with events
    for k in sorted(timing):
        key[f"timing {k}"] = timing[k]
    plugin_versions = _plugin_versions(meta)
    for name, b in sorted((meta.get("backends") or {}).items()):
        info = b.get("device_info") or {}
        for k in ("name", "flavour", "driver_version", "toolkit"):
            key[f"backend {name} {'device' if k == 'name' else k}"] = info.get(k)
        plugin = _backend_plugin(meta, name)
        key[f"backend {name} plugin version"] = plugin_versions.get(plugin) if plugin else None
    return key


def check_provenance(old: dict[str, Any], new: dict[str, Any], plan: Any) -> None:
    """UsageError naming the first difference between the resumed run and this one."""
    a, b = provenance_key(old), provenance_key(new)
    path = (old.get("options") or {}).get("out", "the run")
    for name in b:
        if name.startswith("backend ") and name not in a:
            continue  # a backend the old run did not sweep: nothing to compare its rows with
        if name == "git commit" and (a.get(name) is None or b.get(name) is None):
            continue
        if a.get(name) != b.get(name):
            raise UsageError(f"--resume {path!r}: {name} was {a.get(name)!r}, is now {b.get(name)!r}; rows of "
                             "different provenance are not mixed in one run; start a new run instead")
