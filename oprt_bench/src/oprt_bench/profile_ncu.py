"""``--profile ncu[:N]``: the run's weakest rows re-run under Nsight Compute after the sweep.

The rows: the N (default 2) timed rows of NVIDIA devices with the lowest ``pct_of_peak`` (``pct_of_spec``
where the run was not calibrated), or the rows ``--profile-rows`` names (``op/case[/dtype[/backend]]``).
Each runs in a subprocess under ``ncu`` (:mod:`oprt_bench.profile_case`: one launch of one case of one
backend); the report is kept as ``profiles/<op>-<case>-<dtype>-<backend>.ncu-rep`` in the run folder, and
its DRAM bytes, DRAM throughput (% of peak) and kernel time go into the row's ``ncu_*`` columns of
results.csv and results.json; run.json gets ``profile``, and the report is rebuilt. A missing ncu, or one
not permitted to read the counters (ERR_NVGPUCTRPERM), is one line; the sweep's results stay as they are.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import UsageError
from .results import COLUMNS, CSV_NAME, REPORT_HTML, RESULTS_JSON, RUN_JSON, write_json

__all__ = ["METRICS", "DEFAULT_COUNT", "PERMISSION_HINT", "parse_profile", "parse_row_names", "select_rows",
           "report_name", "ncu_command", "import_command", "parse_raw_csv", "ProfileResult", "profile_run"]

METRICS = ("dram__bytes.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__time_duration.sum")
DEFAULT_COUNT = 2
TIMEOUT_S = 600.0
PERMISSION_HINT = ("ncu is not permitted to read the GPU's performance counters (ERR_NVGPUCTRPERM): run as root, "
                   "or load the driver with NVreg_RestrictProfilingToAdminUsers=0 "
                   "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)")
_KEY = ("op", "case", "dtype", "backend")
# the unit names ncu prints (long ones with --print-units base; the short ones are what ncu 2025+ prints for times)
_UNITS = {"byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
          "b": 1.0, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
          "nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3,
          "ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3, "%": 1.0, "": 1.0}


def parse_profile(text: str) -> int:
    """``ncu`` -> 2, ``ncu:N`` -> N (N >= 1); UsageError otherwise."""
    tool, _, count = text.partition(":")
    if tool != "ncu" or (count and not count.isdigit()) or (count and int(count) < 1):
        raise UsageError(f"--profile takes ncu or ncu:N with N >= 1 (rows to profile), got {text!r}")
    return int(count) if count else DEFAULT_COUNT


def parse_row_names(text: str) -> list[tuple[str, ...]]:
    """``"softmax/4096x4096/f16/nvidia,copy/1m"`` -> [(op, case, dtype, backend), (op, case)]."""
    names = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        parts = tuple(item.split("/"))
        if len(parts) < 2 or len(parts) > 4 or not all(parts):
            raise UsageError(f"--profile-rows: {item!r} is not op/case[/dtype[/backend]]")
        names.append(parts)
    if not names:
        raise UsageError("--profile-rows names no row (op/case[/dtype[/backend]], comma-separated)")
    return names


def _float(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if v == v else None


def _nvidia(meta: Mapping[str, Any], backend: str) -> bool:
    info = ((meta.get("backends") or {}).get(backend) or {}).get("device_info") or {}
    return "nvidia" in str(info.get("vendor") or "").lower() and bool(info.get("memory_bytes"))


def select_rows(rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any], count: int,
                names: Sequence[tuple[str, ...]] = ()) -> list[Mapping[str, Any]]:
    """The rows to profile: timed (ok, with a median) rows of NVIDIA devices; those ``names`` match, else the
    ``count`` with the lowest % of the measured peak (of the spec peak where none was measured)."""
    timed = [r for r in rows if r.get("status") == "ok" and _float(r.get("median_ms")) and
             _nvidia(meta, str(r.get("backend")))]
    if names:
        return [r for r in timed if any(tuple(str(r[k]) for k in _KEY[:len(n)]) == n for n in names)]
    column = "pct_of_peak" if any(_float(r.get("pct_of_peak")) for r in timed) else "pct_of_spec"
    ranked = [r for r in timed if _float(r.get(column)) is not None]
    ranked.sort(key=lambda r: _float(r.get(column)) or 0.0)
    return ranked[:count]


def report_name(row: Mapping[str, Any]) -> str:
    """``profiles/<op>-<case>-<dtype>-<backend>.ncu-rep`` (characters a file name should not hold as ``_``)."""
    stem = "-".join(str(row[k]) for k in _KEY)
    return "profiles/" + re.sub(r"[^A-Za-z0-9._+-]", "_", stem) + ".ncu-rep"


def ncu_command(ncu: str, run_dir: Path, row: Mapping[str, Any], python: str = sys.executable) -> list[str]:
    """The ncu command line that profiles ``row``'s one launch into the run folder."""
    out = run_dir / report_name(row)
    return [ncu, "--clock-control", "none", "--set", "basic", "--metrics", ",".join(METRICS),
            "--profile-from-start", "off", "--target-processes", "all", "--force-overwrite",
            "--export", str(out.with_suffix("")), python, "-m", "oprt_bench.profile_case", str(run_dir),
            *(str(row[k]) for k in _KEY)]


def import_command(ncu: str, report: Path) -> list[str]:
    """The command that prints ``report``'s metrics as CSV, in base units (byte, nsecond)."""
    return [ncu, "--import", str(report), "--csv", "--page", "raw", "--print-units", "base",
            "--metrics", ",".join(METRICS)]


def _number(text: str) -> float | None:
    return _float(text.replace(",", "").strip()) if text.strip() not in ("", "n/a") else None


def parse_raw_csv(text: str) -> dict[str, Any]:
    """``ncu --csv --page raw`` output (a header, a units line, one line per kernel) -> the row's
    ``ncu_time_ms`` (kernels' sum), ``ncu_dram_bytes`` (sum) and ``ncu_dram_pct`` (time-weighted mean).
    ValueError where the text holds no kernel with those metrics."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]  # ncu's own "==PROF==" lines are not CSV
    table = list(csv.reader(io.StringIO("\n".join(lines))))
    if len(table) < 3 or not all(m in table[0] for m in METRICS):
        raise ValueError("ncu printed no kernel with " + ", ".join(METRICS))
    header, units = table[0], table[1]
    col = {m: header.index(m) for m in METRICS}
    time_ms = dram = weighted = 0.0
    for line in table[2:]:
        if len(line) < len(header):
            continue
        values = {}
        for m, i in col.items():
            scale = _UNITS.get(units[i].strip().lower())
            v = _number(line[i])
            if scale is None:
                raise ValueError(f"ncu printed {m} in an unknown unit {units[i]!r}")
            values[m] = None if v is None else v * scale
        t = values["gpu__time_duration.sum"] or 0.0
        time_ms += t
        dram += values["dram__bytes.sum"] or 0.0
        weighted += (values["dram__throughput.avg.pct_of_peak_sustained_elapsed"] or 0.0) * t
    if time_ms <= 0:
        raise ValueError("ncu printed no kernel time (no kernel was profiled)")
    return {"ncu_time_ms": time_ms, "ncu_dram_bytes": round(dram), "ncu_dram_pct": weighted / time_ms}


@dataclass
class ProfileResult:
    """What profiling did: a line per row (or the one reason nothing was profiled) and the rows' new figures."""

    lines: list[str] = field(default_factory=list)
    figures: dict[tuple[str, ...], dict[str, Any]] = field(default_factory=dict)


def _problem(proc: subprocess.CompletedProcess[str]) -> str:
    text = (proc.stdout or "") + (proc.stderr or "")
    if "ERR_NVGPUCTRPERM" in text:
        return PERMISSION_HINT
    last = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return f"exit {proc.returncode}: {last[-1] if last else 'no output'}"


def _label(row: Mapping[str, Any]) -> str:
    return " ".join(str(row[k]) for k in _KEY)


Runner = Callable[..., "subprocess.CompletedProcess[str]"]


def profile_rows(run_dir: Path, rows: Sequence[Mapping[str, Any]], ncu: str,
                 runner: Runner = subprocess.run, timeout_s: float = TIMEOUT_S) -> ProfileResult:
    """Profile each row under ncu, stopping at the first ERR_NVGPUCTRPERM (every row would say the same)."""
    result = ProfileResult()
    (run_dir / "profiles").mkdir(exist_ok=True)
    for row in rows:
        report = run_dir / report_name(row)
        try:
            proc = runner(ncu_command(ncu, run_dir, row), capture_output=True, text=True, timeout=timeout_s)
            if proc.returncode != 0 or not report.is_file():
                problem = _problem(proc)
                result.lines.append(f"profile: {_label(row)}: ncu failed: {problem}")
                if problem == PERMISSION_HINT:
                    break
                continue
            shown = runner(import_command(ncu, report), capture_output=True, text=True, timeout=timeout_s)
            figures = parse_raw_csv(shown.stdout or "")
        except subprocess.TimeoutExpired:
            result.lines.append(f"profile: {_label(row)}: ncu took more than {timeout_s:g} s; stopped")
            continue
        except (OSError, ValueError) as exc:
            result.lines.append(f"profile: {_label(row)}: {exc}")
            continue
        figures["ncu_report"] = report_name(row)
        result.figures[tuple(str(row[k]) for k in _KEY)] = figures
        result.lines.append(f"profile: {_label(row)}: DRAM {figures['ncu_dram_bytes'] / 1e6:.1f} MB at "
                            f"{figures['ncu_dram_pct']:.1f}% of peak throughput, {figures['ncu_time_ms']:.4f} ms "
                            f"-> {report}")
    return result


def _update_csv(path: Path, figures: Mapping[tuple[str, ...], Mapping[str, Any]]) -> None:
    """The profiled rows' ncu cells set in results.csv; every other cell kept as written."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        header = list(reader.fieldnames or [])
        lines = list(reader)
    header += [c for c in COLUMNS if c not in header]
    for line in lines:
        new = figures.get(tuple(str(line.get(k, "")) for k in _KEY))
        if new:
            line.update({k: repr(v) if isinstance(v, float) else str(v) for k, v in new.items()})
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(lines)
    os.replace(tmp, path)


def profile_run(run_dir: Path, count: int, names: Sequence[tuple[str, ...]] = (),
                which: Callable[[str], str | None] = shutil.which, runner: Runner = subprocess.run,
                timeout_s: float = TIMEOUT_S) -> ProfileResult:
    """Profile a finished run's rows (see the module docstring) and write the figures back into the run folder."""
    from .results import frame_records, load_run
    from .run import rebuild_report

    ncu = which("ncu")
    if ncu is None:
        return ProfileResult(["profile: ncu not found on PATH (Nsight Compute); nothing profiled, the sweep's "
                              "results are kept"])
    run = load_run(run_dir)
    rows = select_rows(frame_records(run.rows), run.meta, count, names)
    if not rows:
        what = "no timed row of an NVIDIA device matches --profile-rows" if names else \
            "no timed row of an NVIDIA device with a % of peak"
        return ProfileResult([f"profile: {what}; nothing profiled"])
    result = profile_rows(run_dir, rows, ncu, runner, timeout_s)
    meta = dict(run.meta)
    meta["profile"] = {"tool": "ncu", "metrics": list(METRICS), "lines": result.lines,
                       "rows": [{"row": "/".join(str(r[k]) for k in _KEY), "command": ncu_command(ncu, run_dir, r),
                                 "report": result.figures.get(tuple(str(r[k]) for k in _KEY), {}).get("ncu_report")}
                                for r in rows]}
    write_json(run_dir / RUN_JSON, meta)
    if result.figures:
        if (run_dir / CSV_NAME).is_file():
            _update_csv(run_dir / CSV_NAME, result.figures)
        if (run_dir / RESULTS_JSON).is_file():
            doc = json.loads((run_dir / RESULTS_JSON).read_text(encoding="utf-8"))
            for row in doc.get("rows") or []:
                row.update(result.figures.get(tuple(str(row.get(k)) for k in _KEY), {}))
            doc["run"] = meta
            write_json(run_dir / RESULTS_JSON, doc)
    if (run_dir / REPORT_HTML).is_file():
        rebuild_report([run_dir])
    return result
