"""``oprt-bench merge``: runs made separately become one run folder (results.csv, results.json, run.json and
report.html), e.g. the nvidia half of a comparison swept on an H200 host and the metax half on a MetaX host.

Rows are kept as measured: each keeps its own device, timing and ``speedup`` (against the baseline of the run it
came from; a merged run does not re-time anything). A row is identified by (op, case, dtype, backend); two
sources with the same row are refused unless ``on_duplicate`` says which to keep, or ``rename`` tells them apart
by suffixing the backend with its source's host name (``torch@h200-a``). run.json says where every row came
from: ``sources`` lists each run folder with its host, commit, versions, status and row count; each backend
entry names its ``source``; ``plan`` is the union of the sources' ops, dtypes and backends, with their mode and
timing where they agree (``compare`` judges a merged run as any other).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import UsageError
from .peaks import measured_compute_peaks
from .results import (
    CSV_NAME,
    REPORT_HTML,
    RESULTS_JSON,
    RUN_JSON,
    RowWriter,
    Run,
    check_out_dir,
    create_run_dir,
    frame_records,
    load_run,
    normalize_rows,
    provenance,
    utc_now,
    write_json,
)

__all__ = ["merge_runs", "ON_DUPLICATE", "KEY"]

KEY = ("op", "case", "dtype", "backend")
ON_DUPLICATE = ("error", "first", "last", "rename")


def _source_name(run: Run) -> str:
    return str((run.meta.get("host") or {}).get("hostname") or run.path.name)


def _common(values: list[Any]) -> Any:
    """The value every source agrees on, else None."""
    return values[0] if values and all(v == values[0] for v in values) else None


def merge_runs(paths: Sequence[Path], out: Path, on_duplicate: str = "error", argv: Sequence[str] = (),
               title: str = "oprt-bench report") -> tuple[Path, dict[str, int]]:
    """Merge the run folders ``paths`` into the new folder ``out``; returns (out, row counts by status).
    UsageError (nothing written) when a source cannot be read, ``out`` is not new, or rows collide."""
    if len(paths) < 2:
        raise UsageError("merge needs two or more run folders")
    if on_duplicate not in ON_DUPLICATE:
        raise UsageError(f"--on-duplicate must be one of {', '.join(ON_DUPLICATE)}, got {on_duplicate!r}")
    resolved = [Path(p).resolve() for p in paths]
    repeated = [str(p) for p, n in Counter(resolved).items() if n > 1]
    if repeated:
        raise UsageError(f"run folder given twice: {repeated[0]}")
    check_out_dir(out)
    runs = [load_run(p) for p in paths]
    names = [_source_name(r) for r in runs]
    if on_duplicate == "rename" and len(set(names)) < len(names):  # two runs of one host: tell them by folder
        names = [f"{n}/{r.path.name}" for n, r in zip(names, runs)]

    rows_of = [frame_records(r.rows) for r in runs]
    owns = [(r.meta.get("backends") or {}) if isinstance(r.meta.get("backends"), dict) else {} for r in runs]
    # backends more than one source has: renamed in every source (``rename``)
    seen = Counter(b for rows, own in zip(rows_of, owns) for b in {str(r["backend"]) for r in rows} | set(own))
    clashing = {b for b, n in seen.items() if n > 1}
    kept: dict[tuple[str, ...], dict[str, Any]] = {}
    origin: dict[tuple[str, ...], int] = {}
    backends: dict[str, Any] = {}
    for i, (run, rows, own) in enumerate(zip(runs, rows_of, owns)):
        for row in rows:
            backend = str(row["backend"])
            if on_duplicate == "rename" and backend in clashing:
                row["backend"] = f"{backend}@{names[i]}"
            key = tuple(str(row[k]) for k in KEY)
            if key in kept and origin[key] != i:
                if on_duplicate == "error":
                    raise UsageError(
                        f"row {'/'.join(key)} is in {runs[origin[key]].path} and in {run.path}; choose with "
                        "--on-duplicate first|last, or rename to keep both (backend@host)")
                if on_duplicate == "first":
                    continue
            kept[key], origin[key] = row, i
        for b, entry in own.items():
            name = f"{b}@{names[i]}" if on_duplicate == "rename" and b in clashing else b
            if name not in backends or on_duplicate == "last":
                backends[name] = (entry if isinstance(entry, dict) else {}) | {"source": str(run.path)}

    rows = list(kept.values())
    counts = dict(Counter(str(r.get("status")) for r in rows))
    plans: list[dict[str, Any]] = [r.meta["plan"] if isinstance(r.meta.get("plan"), dict) else {} for r in runs]
    statuses = [str(r.meta.get("status") or "unknown (no run.json)") for r in runs]
    unfinished = [f"{r.path}: {s}" for r, s in zip(runs, statuses) if s != "complete"]
    meta = provenance(argv, _common([r.meta.get("seed") for r in runs]), {"merge": [str(p) for p in paths],
                                                                          "on_duplicate": on_duplicate})
    meta.update(
        merged=True,
        sources=[{"path": str(r.path), "name": n, "host": r.meta.get("host"), "git": r.meta.get("git"),
                  "versions": r.meta.get("versions"), "argv": r.meta.get("argv"), "status": s,
                  "started_utc": r.meta.get("started_utc"), "finished_utc": r.meta.get("finished_utc"),
                  "rows": int(sum(origin[k] == i for k in kept))}
                 for i, (r, n, s) in enumerate(zip(runs, names, statuses))],
        plan={"ops": sorted({str(r["op"]) for r in rows}), "dtypes": sorted({str(r["dtype"]) for r in rows}),
              "backends": sorted({str(r["backend"]) for r in rows}),
              "mode": _common([p.get("mode") for p in plans]), "timing": _common([p.get("timing") for p in plans])},
        backends=backends,
        status="complete" if not unfinished else "incomplete (a source did not finish: " + "; ".join(unfinished) + ")",
        counts=counts, finished_utc=utc_now().isoformat(), exit_code=0,
        compute_calibration=measured_compute_peaks(rows))
    from .report import write_report  # matplotlib: only when a report is written

    create_run_dir(out)
    writer = RowWriter(out / CSV_NAME)
    try:
        for row in rows:
            writer.write(row)
    finally:
        writer.close()
    write_json(out / RUN_JSON, meta)
    write_json(out / RESULTS_JSON, {"run": meta, "rows": writer.rows})
    write_report([Run(out, normalize_rows(rows), meta)], out / REPORT_HTML, title)
    return out, counts
