"""Run folders: the versioned CSV schema, the incremental row writer, run.json provenance, reading runs back.

A run folder holds ``results.csv`` (one row per (op, case, dtype, backend), appended and flushed
as each is measured), ``run.json`` (provenance, rewritten at the start and the end of the run),
``results.json`` (rows and provenance in one document, at the end) and ``report.html``.
Columns are documented in docs/results-schema.md.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import platform
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # pandas is imported where rows are built: `oprt-bench --help` stays quick
    import pandas as pd

from .errors import UsageError

__all__ = [
    "SCHEMA_VERSION", "COLUMNS", "KEY_COLUMNS", "STATUSES", "CSV_NAME", "RUN_JSON", "RESULTS_JSON", "REPORT_HTML",
    "RowWriter", "RunBusy", "open_rows_file", "write_text_atomic", "utc_now", "default_run_dir", "check_out_dir",
    "create_run_dir", "provenance",
    "write_json", "json_safe", "load_run", "normalize_rows", "Run",
]

SCHEMA_VERSION = 4
CSV_NAME = "results.csv"
RUN_JSON = "run.json"
RESULTS_JSON = "results.json"
REPORT_HTML = "report.html"
STATUSES = ("ok", "unsupported", "skipped", "failed", "error")
KEY_COLUMNS = ("op", "case", "dtype", "backend", "status")  # what a file must have to be read back as a run

COLUMNS = (
    "op", "case", "shape", "dtype", "params", "backend", "status", "message",
    "max_abs_err", "max_rel_err", "median_ms", "p10_ms", "p90_ms", "min_ms", "samples",
    "bytes", "gbps", "pct_of_peak", "pct_of_spec", "baseline", "speedup",
    "flops", "tflops", "mode", "timing", "stopped_by", "ci_rel", "seed", "device", "flavour", "flags",
    "schema_version", "kernel", "compile_s",
    "sm_mhz_start", "sm_mhz_end", "sm_mhz_min", "mem_mhz_start", "mem_mhz_end", "throttle_reasons", "power_w",
    "energy_j", "energy_source", "clock_drop", "ncu_time_ms", "ncu_dram_bytes", "ncu_dram_pct", "ncu_report",
    "timer", "timer_note", "event_median_ms",
    "host", "pct_of_compute",
)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    return value


class RunBusy(UsageError):
    """Another process is writing the run (it holds its results.csv's lock)."""


def open_rows_file(path: Path) -> Any:
    """``path`` (a run's results.csv) opened for appending and locked for this process (``flock``, exclusive): the
    lock lasts as long as the file is open, and the system drops it when the process ends, however it ends (a
    killed run stays resumable). Raises :class:`RunBusy` when another process holds it. No lock where the platform
    has no ``fcntl`` (Windows)."""
    f = open(path, "a", newline="", encoding="utf-8")  # noqa: SIM115 - the caller keeps it as long as the run
    try:
        import fcntl
    except ImportError:
        return f
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        raise RunBusy(f"{str(path.parent)!r} is being written by another oprt-bench process (its {path.name} is "
                      "locked): wait for that run to end, or stop it, before resuming it") from None
    return f


class RowWriter:
    """Appends rows to results.csv, flushing and fsync-ing each so a killed run keeps every finished row; the file
    is locked for this process while it is open (:func:`open_rows_file`). ``file``: results.csv already opened and
    locked by :func:`open_rows_file` (a resumed run's)."""

    def __init__(self, path: Path | None, file: Any = None):
        self.path = path
        self.rows: list[dict[str, Any]] = []
        self._file = None
        self._csv = None
        if path is not None:
            self._file = file if file is not None else open_rows_file(path)
            self._csv = csv.DictWriter(self._file, fieldnames=COLUMNS, extrasaction="ignore")
            if self._file.tell() == 0:
                self._csv.writeheader()
                self._flush()

    def _flush(self) -> None:
        assert self._file is not None
        self._file.flush()
        os.fsync(self._file.fileno())

    def write(self, row: Mapping[str, Any]) -> None:
        full = {c: row.get(c) for c in COLUMNS}
        full["schema_version"] = SCHEMA_VERSION
        self.rows.append(full)
        if self._csv is not None:
            self._csv.writerow({c: _cell(v) for c, v in full.items()})
            self._flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


# -- run folders --------------------------------------------------------------------------

def default_run_dir(root: Path = Path("results"), now: datetime | None = None) -> Path:
    """``results/<UTC timestamp>-<host>``, with ``-2``, ``-3``... if that folder exists already."""
    now = now or utc_now()
    host = "".join(c if c.isalnum() or c in "-_." else "-" for c in socket.gethostname()) or "host"
    base = root / f"{now.strftime('%Y%m%dT%H%M%SZ')}-{host}"
    path, i = base, 1
    while path.exists():
        i += 1
        path = base.with_name(f"{base.name}-{i}")
    return path


def check_out_dir(path: Path) -> None:
    """Raise UsageError unless ``path`` can become a fresh run folder; creates nothing that remains."""
    if path.exists():
        if not path.is_dir():
            raise UsageError(f"--out {str(path)!r} exists and is not a folder; choose a new folder")
        if any(path.iterdir()):
            raise UsageError(f"--out {str(path)!r} is not empty (runs are never overwritten); choose a new folder")
    ancestor = path.absolute()
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UsageError(f"--out {str(path)!r} is not writable: {str(ancestor)!r} is a file, not a folder")
    try:  # os.access says yes to root everywhere; a real probe does not lie (read-only mounts, /proc)
        probe = tempfile.mkdtemp(prefix=".oprt-probe-", dir=ancestor)
        os.rmdir(probe)
    except OSError as exc:
        raise UsageError(f"--out {str(path)!r} is not writable: {exc.strerror or exc} in {str(ancestor)!r}") from None


def create_run_dir(path: Path) -> Path:
    """Create the run folder; UsageError when it appeared with files since check_out_dir (never overwrite)."""
    try:
        path.mkdir(parents=True)
    except FileExistsError:
        if not path.is_dir() or any(path.iterdir()):
            raise UsageError(f"--out {str(path)!r} is not empty (runs are never overwritten); "
                             "choose a new folder") from None
    return path


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``path`` through a temporary file renamed over it (a reader never sees half a file); a failed write
    (a full disk) leaves the old file as it was and no temporary behind."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (a reader never sees half a file)."""
    write_text_atomic(path, json.dumps(json_safe(data), indent=2, default=str, allow_nan=False) + "\n")


# -- provenance ------------------------------------------------------------------------

def _git_commit() -> dict[str, Any] | None:
    if os.environ.get("OPRT_GIT_COMMIT"):  # set where the tree travels without .git (the GPU host)
        return {"commit": os.environ["OPRT_GIT_COMMIT"], "dirty": None, "path": "OPRT_GIT_COMMIT"}
    here = Path(__file__).resolve().parent
    for cwd in (here, Path.cwd()):
        try:
            commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True,
                                    timeout=5, check=True).stdout.strip()
            dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                                   capture_output=True, text=True, timeout=5).stdout.strip() != ""
            return {"commit": commit, "dirty": dirty, "path": str(cwd)}
        except (OSError, subprocess.SubprocessError):
            continue
    return None


def _versions() -> dict[str, str]:
    names = ["oprt-core", "oprt-bench", "numpy", "ml_dtypes", "pluggy", "click", "pandas", "matplotlib", "rich",
             "cffi", "torch", "triton", "liger-kernel", "cupy", "cupy-cuda12x", "cupy-cuda13x"]
    out = {"python": platform.python_version()}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def provenance(argv: Iterable[str], seed: int, options: Mapping[str, Any]) -> dict[str, Any]:
    """The run.json skeleton: who, where, what and with which versions."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": "oprt-bench",
        "argv": list(argv),
        "seed": seed,
        "options": dict(options),
        "host": {
            "hostname": socket.gethostname(),
            "platform": platform.platform(),
            "machine": platform.machine(),
            "cpu_count": os.cpu_count(),
            "python": sys.version.split()[0],
        },
        "versions": _versions(),
        "git": _git_commit(),
        "started_utc": utc_now().isoformat(),
        "finished_utc": None,
        "status": "running",
    }


# -- reading runs back -----------------------------------------------------------------

class Run:
    """One run read back: its rows (a DataFrame with COLUMNS) and its run.json (may be empty)."""

    def __init__(self, path: Path, rows: pd.DataFrame, meta: dict[str, Any]):
        self.path = path
        self.rows = rows
        self.meta = meta

    @property
    def label(self) -> str:
        host = (self.meta.get("host") or {}).get("hostname")
        return host or self.path.name


_NUMERIC = ("max_abs_err", "max_rel_err", "median_ms", "p10_ms", "p90_ms", "min_ms", "samples", "bytes", "gbps",
            "pct_of_peak", "pct_of_spec", "speedup", "flops", "tflops", "ci_rel", "seed", "schema_version",
            "sm_mhz_start", "sm_mhz_end", "sm_mhz_min", "mem_mhz_start", "mem_mhz_end", "power_w", "energy_j",
            "clock_drop", "ncu_time_ms", "ncu_dram_bytes", "ncu_dram_pct", "compile_s",
            "event_median_ms", "pct_of_compute")


def load_run(path: Path | str) -> Run:
    """Read a run folder (or a results.csv / results.json file); UsageError when it is not one."""
    import pandas as pd

    path = Path(path)
    folder = path if path.is_dir() else path.parent
    if path.is_dir():
        csv_path, json_path = path / CSV_NAME, path / RESULTS_JSON
    elif path.suffix == ".json":
        csv_path, json_path = folder / CSV_NAME, path
    else:
        csv_path, json_path = path, folder / RESULTS_JSON
    meta: dict[str, Any] = {}
    try:
        if (folder / RUN_JSON).is_file():
            meta = json.loads((folder / RUN_JSON).read_text(encoding="utf-8"))
            if not isinstance(meta, dict):
                raise UsageError(f"cannot read run {str(path)!r}: {RUN_JSON} is not a JSON object")
        if csv_path.is_file():
            options: dict[str, Any] = dict(
                dtype={"case": str, "shape": str, "params": str, "message": str, "flags": str, "baseline": str,
                       "device": str, "flavour": str, "kernel": str, "throttle_reasons": str, "energy_source": str,
                       "ncu_report": str},
                keep_default_na=False, na_values={c: [""] for c in _NUMERIC})
            try:
                rows = pd.read_csv(csv_path, **options)
            except pd.errors.ParserError:
                # a write cut inside a quoted cell: the whole lines are read, the cut one left out (csv_damage in
                # compare names it)
                text = csv_path.read_text(encoding="utf-8", errors="replace")
                if text.endswith("\n") or "\n" not in text:
                    raise
                rows = pd.read_csv(io.StringIO(text[:text.rfind("\n") + 1]), **options)
        elif json_path.is_file():
            doc = json.loads(json_path.read_text(encoding="utf-8"))
            if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list) or not all(
                    isinstance(r, dict) for r in doc["rows"]):
                raise UsageError(f"cannot read run {str(path)!r}: {json_path.name} is not an object with a "
                                 "'rows' list of row objects")
            run_meta = doc.get("run")
            meta = meta or (run_meta if isinstance(run_meta, dict) else {})
            rows = pd.DataFrame(doc["rows"], columns=None if doc["rows"] else list(COLUMNS))
        else:
            raise UsageError(f"{str(path)!r} is not a run: no {CSV_NAME} or {RESULTS_JSON} found")
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise UsageError(f"cannot read run {str(path)!r}: {exc}") from None
    missing = [c for c in KEY_COLUMNS if c not in rows.columns]
    if missing:
        raise UsageError(f"{str(path)!r} is not a run: its rows lack the column(s) {', '.join(missing)} "
                         f"(a run has {', '.join(KEY_COLUMNS)})")
    return Run(folder, normalize_rows(rows), meta)


def frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The frame's rows as dicts, empty cells (NaN) as None."""
    return cast(list[dict[str, Any]], frame.astype(object).where(frame.notna(), None).to_dict("records"))


def normalize_rows(rows: pd.DataFrame | Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Every column of the schema present; numbers as floats (NaN when empty), text as str."""
    import pandas as pd

    frame = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    for col in COLUMNS:
        if col not in frame.columns:
            frame[col] = None
    for col in _NUMERIC:
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype(float)
    for col in set(COLUMNS) - set(_NUMERIC):
        frame[col] = frame[col].map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
    return frame


def json_safe(value: Any) -> Any:
    """NaN -> null and +-inf -> "inf"/"-inf", recursively: strict JSON that pandas reads back."""
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
