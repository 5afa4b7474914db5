#!/usr/bin/env python3
"""Markdown table of a run's nvidia rows against the performance targets.

    python scripts/perf_table.py results/<run>/results.csv [--backend nvidia] [--peak GBPS] [--all] [--kernel]
    python scripts/perf_table.py --below results/<models run>/results.csv   # only the rows below their target
    python scripts/perf_table.py RUN_A/results.csv RUN_B/results.csv ...   # several sweeps of the same cases
    python scripts/perf_table.py --union OPS_A/results.csv OPS_B/results.csv  # one sweep split by op group
    python scripts/perf_table.py --format markdown --op OP DEFAULT/results.csv LARGE/results.csv  # docs tables
    python scripts/perf_table.py --variants OUTDIR   # scripts/env_variants.sh's runs side by side, a column a variant

Reads oprt-bench's results.csv (columns op, case, shape, dtype, params, backend, status, median_ms, bytes, gbps,
pct_of_peak, baseline, speedup, tflops; pct_of_peak may be empty) and prints, for every row of the backend,
op | case | dtype | GB/s | % of peak | speedup over the baseline (3 decimals: a 0.998 that misses
>= 1.00 shows as such; 4 where 3 would round a miss up to its target, 0.9996) | [speedup vs others] | target | met.

% of peak: the CSV's pct_of_peak (oprt-bench's: against the run's calibrated device-to-device copy; empty where a
backend was not calibrated), or 100 * gbps / --peak when --peak is given (e.g. --peak 4190 on the H200). Targets
(tensor size = the first input's bytes in the row's dtype, "tensors of 256 MiB and more"; with --size-rule f32 its
elements x 4 bytes, so that a shape that qualifies in f32 carries the same target in f16 and bf16). The built-in ops
are told apart by what their specs declare (oprt_core.operators: group, inputs, params, roles; KINDS):
- the streaming ops (core ops without an axis whose output has their inputs' shape), contiguous, >= 256 MiB: >= 95%
  of peak;
- a core op that reduces over an axis, over axis -1 or axis 0 of a 2-D contiguous tensor, >= 256 MiB: >= 95%;
- a core op over an axis that keeps the shape, over the last axis, widths 128..16384, >= 256 MiB: >= 90%; width
  65536: >= 80%; over axis 0 of a 2-D tensor: >= 80%;
- the bandwidth probe (the op of role bandwidth-probe) of a transposed 2-D view, >= 64 MiB: >= 80%;
- every core op: speedup over the baseline >= 1.00 on every `large` case and >= 0.95 on every `default` case.

The targets of real model shapes and of the compute-bound ops (RULES, each with its reason; bytes moved: the CSV's
`bytes`, else GB/s x median_ms):
- every `models` row of a memory-bound op (any op but the compute group's): speedup >= 0.90 against torch (the floor;
  smaller cases have no other target);
- `models`, memory-bound, >= 32 MiB moved: >= 1.00 against torch;
- `models` rows of a core op over an axis that keeps the shape, over the last axis, rows >= 32768 wide, >= 32 MiB
  moved: >= 85% of peak, every dtype;
- `models` rows of a model op, >= 32 MiB moved: >= 90% of peak, >= 85% for one with an index input (a gather); both
  >= 1.00 against torch and against each of torch-compile and liger where the run has their rows;
- a compute-bound op in f16 and bf16, `large` squares and `models` GEMMs with M >= 2048 (M: the first input's
  second-to-last extent in the `shape` column): >= 0.95 against torch and >= 70% of the device's dense compute peak;
- a compute-bound op in e4m3, the same cases: >= 0.90 against torch (torch._scaled_mm) where the run has torch's row
  ok (it refuses layouts and sizes it cannot take: no target there).
Tie rule of the >= 1.00 targets: a speedup within 1% under it (>= 0.99) counts as met where the row and the
baseline's row are both at >= 95% of peak. These speedups are the baseline's median_ms / the row's, from the
baseline's row of the same (op, case, dtype, params) in the same CSV (the CSV's `speedup` column is against the run's
first backend only); a run without torch's row misses the targets against torch, a baseline row that is not ok
(unsupported: liger refuses some shapes) is no target. The table's "speedup vs others" column lists them (those
against the speedup column's baseline aside); over several CSVs each is the median over the runs.

% of peak of a compute-bound op is of the dense compute peak of the row's dtype, marked "(compute)" in the
cell: the CSV's pct_of_compute where it has one, else 100 x tflops / run.json's
backends[BACKEND].compute_peak[DTYPE].tflops beside the CSV (tf32 for f32 rows with "allow_tf32": true, fp8 for
e4m3); without either the cell says "no compute peak" and the row misses its target.

A row's case sets and its op's kinds come from oprt_core's registry when oprt_core imports (case sets of every op:
the built-in ones and plugins'; kinds of the built-in ops); else, said on stderr, `large` for tensors of >= 2^26
elements, 256 MiB as f32, no other speedup or `models` target and no op's own target. Rows without a target show
"-" under "met". Without --all only rows with a target are listed; --below lists only the rows below their target
(the summary line counts them either way). --kernel adds the row's `kernel` cell (which of the backend's kernels
ran, results schema 3 on). --op keeps the rows of the named ops (comma-separated).
Exit status 0 either way (a report, not a gate).

--variants OUTDIR: the runs of scripts/env_variants.sh (OUTDIR/variants.txt names them, OUTDIR/vN/results.csv each
one's rows) in one table, a row per (op, case, dtype) and a column per variant: % of peak, the speedup over the
baseline and whether the row meets its target (with --kernel, the kernel that ran): the designs of one kernel
compared by the bench's own measurements, as docs/kernels.md's records of them want.

Several CSVs (sweeps of the same cases, e.g. of one commit on several machines): one row per (op, case, dtype), each
number the median over the runs that timed it with its range in parentheses, the targets judged on the medians; a row
is ok only where every run has it ok: a way to read rows whose run-to-run spread is wider than their margin, beside
each sweep's own table. --union: the CSVs sweep different cases (one op group each, or a cut sweep and the rest): a
row is judged on the runs that have it.

--format markdown (the tables of docs/kernels.md): every row of the backend, targeted or not, one table per CSV in
the order given (each CSV its own run, typically one per case set; nothing is combined), each under its run's line
(below), with the kernel each row ran and the target in short ("95%, 1.00x", "90%, 1.00x torch/torch-compile*/liger*");
an op column only where the rows hold more than one op, "speedup vs others" only where a row has such targets.

When the run's run.json lies beside the CSV (every oprt-bench run folder), a line above the table says where
the figures come from: device, date, commit, case sets, flush, and the calibrated peak the % column is against.
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import math
import re
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MIB = 1 << 20
# a case in several sets counts as the first of these for the core speedup targets (smoke before edge before ...)
CASE_SET_ORDER = ("smoke", "edge", "default", "large", "models")


@functools.cache  # once a process: several CSVs share it (and its stderr note)
def _case_sets() -> dict[tuple[str, str], tuple[str, ...]]:
    """(op, case name) -> the case sets that hold it (in CASE_SET_ORDER), for every op of oprt_core's registry
    (core, model ops, matmul, plugins' ops) when oprt_core is importable."""
    try:
        from oprt_core import operators
    except Exception as exc:  # noqa: BLE001 - any import failure: fall back to sizes
        # said on stderr: without the case sets every `default` row loses its speedup target, and a default run
        # would read as judged when it is not
        print(f"perf_table: oprt_core does not import ({exc}); case sets guessed from sizes: `large` for >= 2^26 "
              "elements (256 MiB as f32), no `default` speedup targets, no `models` targets", file=sys.stderr)
        return {}
    try:
        from oprt_core.plugins import get_registry

        specs = list(get_registry().ops.values())
    except Exception as exc:  # noqa: BLE001 - a broken plugin set: oprt_core's own ops still judge
        print(f"perf_table: oprt_core's registry does not build ({exc}); case sets of oprt_core's own ops only",
              file=sys.stderr)
        specs = list(operators.specs())
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    for spec in specs:
        names = getattr(spec, "case_sets", {}) or {}
        for case_set in sorted(names, key=lambda n: (CASE_SET_ORDER + (n,)).index(n)):
            try:
                cases = spec.cases(case_set)
            except Exception:  # noqa: BLE001
                continue
            for case in cases:
                key = (spec.name, case.name)
                if case_set not in found.get(key, ()):
                    found[key] = found.get(key, ()) + (case_set,)
    return found


@functools.cache
def _kinds() -> dict[str, frozenset[str]]:
    """Built-in op -> its kinds, from what its spec declares: "core", "model", "compute" (its group); "streaming" (a
    core op without an axis param whose output has its inputs' shape), "rows" (a core op over an axis that keeps the
    shape), "reducing" (a core op over an axis that reduces it), "probe" (the op of role bandwidth-probe),
    "indexed" (an index input). Empty where oprt_core does not import."""
    try:
        from oprt_core import operators
    except Exception:  # noqa: BLE001 - said by _case_sets
        return {}
    probe = operators.with_role("bandwidth-probe")[0].name
    kinds: dict[str, frozenset[str]] = {}
    for spec in operators.specs():
        group = operators.group(spec.name)
        found = {group}
        if group == "core":
            axis = any(p.name == "axis" for p in spec.params)
            keeps = spec.output_shape([(4, 5)] * spec.min_inputs, spec.validate_params({})) == (4, 5)
            found.add("rows" if axis and keeps else "reducing" if axis else "streaming" if keeps else "")
        if spec.name == probe:
            found.add("probe")
        if spec.index_inputs:
            found.add("indexed")
        kinds[spec.name] = frozenset(found - {""})
    return kinds


def _is(op: str, kind: str) -> bool:
    return kind in _kinds().get(op, ())


def _first_shape(shape: str) -> tuple[int, ...]:
    first = (shape or "").split(",")[0].strip()
    if first in ("", "scalar"):
        return ()
    try:
        return tuple(int(v) for v in first.split("x"))
    except ValueError:
        return ()


def _float(text: str | None) -> float | None:
    try:
        v = float(text) if text not in (None, "") else None
    except ValueError:
        return None
    return v if v is None or math.isfinite(v) else None


ITEMSIZE = {"f32": 4, "f16": 2, "bf16": 2}


def pct_target(op: str, case: str, shape: tuple[int, ...], itemsize: int = 4) -> tuple[float | None, str]:
    """(minimum % of peak, why) for a row whose first input has ``shape`` elements of ``itemsize`` bytes, or
    (None, '') where no target applies."""
    nbytes = math.prod(shape) * itemsize if shape else 0
    axis_m = re.search(r"-axis(-?\d+|all)", case)
    axis = axis_m.group(1) if axis_m else None
    suffix = re.fullmatch(r"[\dx]+(?:-(\w+))?", case)  # contiguous: no layout suffix (a param's may be there)
    plain = suffix is not None and suffix.group(1) not in LAYOUT_SUFFIXES
    if _is(op, "streaming") and plain and nbytes >= 256 * MIB:
        return 95.0, "streaming >= 256 MiB"
    if _is(op, "probe") and "transposed" in case and len(shape) == 2 and nbytes >= 64 * MIB:
        return 80.0, f"transposed {op} >= 64 MiB"
    if (
        _is(op, "reducing")
        and len(shape) == 2
        and axis in ("-1", "1", "0")
        and "transposed" not in case
        and re.fullmatch(r"[\dx]+-axis-?\d+", case)
        and nbytes >= 256 * MIB
    ):
        return 95.0, f"{op} 2-D >= 256 MiB"
    if _is(op, "rows") and re.fullmatch(r"[\dx]+-axis-?\d+", case):
        last = axis is not None and (axis == "-1" or (shape and int(axis) == len(shape) - 1))
        if last and shape and nbytes >= 256 * MIB:
            width = shape[-1]
            if width == 65536:
                return 80.0, f"{op} width 65536"
            if 128 <= width <= 16384:
                return 90.0, f"{op} widths 128..16384"
        if axis == "0" and len(shape) == 2 and nbytes >= 256 * MIB:
            return 80.0, f"{op} axis 0"
    return None, ""


def speedup_target(op: str, case_set: str | None) -> float | None:
    if not _is(op, "core"):
        return None
    return {"large": 1.00, "default": 0.95}.get(case_set or "")


# --- the targets of the model-shape and compute work, in one place ------------------------------------------------

# a case name's layout suffixes (oprt_core.spec.LAYOUTS but contiguous), which make it no plain case
LAYOUT_SUFFIXES = ("transposed", "step2", "offset1", "reversed", "broadcast0")
TIE = 0.01  # a speedup within 1% under its target counts as met where the row and the baseline's row are both ...
TIE_PCT = 95.0  # ... at >= 95% of the measured peak


@dataclass(frozen=True)
class Facts:
    """What a rule may look at: the row's op, the case sets of its case, dtype, first input's shape, bytes moved
    (the CSV's ``bytes``), params (the CSV's JSON)."""

    op: str
    case_sets: tuple[str, ...]
    dtype: str
    shape: tuple[int, ...]
    moved: float | None
    params: dict

    @property
    def models(self) -> bool:
        return "models" in self.case_sets

    @property
    def memory_bound(self) -> bool:  # every op but the compute group's: judged on bandwidth, % of the copy peak
        return not _is(self.op, "compute")

    @property
    def big(self) -> bool:  # ">= 32 MiB moved"
        return self.moved is not None and self.moved >= 32 * MIB

    @property
    def last_axis_width(self) -> int | None:
        """The extent reduced over by an op with an ``axis`` param (default -1) when that axis is the last."""
        axis = self.params.get("axis", -1)
        if not self.shape or not isinstance(axis, int) or axis not in (-1, len(self.shape) - 1):
            return None
        return self.shape[-1]

    @property
    def m(self) -> int | None:  # a GEMM's M: the first input's second-to-last extent
        return self.shape[-2] if len(self.shape) >= 2 else None


@dataclass(frozen=True)
class Rule:
    """A target: the rows it holds (``applies``), what it asks and why (``{op}`` in it: the row's op). ``pct``: minimum
    % of peak (of the compute
    peak for a compute-bound op). ``speedup``: minimum speedup against each baseline of ``against`` (a run without
    that baseline's row for the case misses it) and of ``where_run`` (judged only where the run has the baseline's
    row); a baseline row that is not ok (unsupported: e.g. liger refuses the shape) is no target. ``tie``: a
    speedup within TIE under the target counts as met where both rows reach TIE_PCT % of peak."""

    applies: Callable[[Facts], bool]
    why: str
    pct: float | None = None
    speedup: float | None = None
    against: tuple[str, ...] = ()
    where_run: tuple[str, ...] = ()
    tie: bool = False


PEER_BASELINES = ("torch-compile", "liger")
RULES: tuple[Rule, ...] = (
    Rule(lambda f: f.models and f.memory_bound, "models: no case below 0.90x torch", speedup=0.90,
         against=("torch",)),
    Rule(lambda f: f.models and f.memory_bound and f.big, "models, >= 32 MiB moved", speedup=1.00, against=("torch",),
         tie=True),
    Rule(lambda f: f.models and _is(f.op, "rows") and f.big and (f.last_axis_width or 0) >= 32768,
         "models {op}, width >= 32K, >= 32 MiB", pct=85.0),
    Rule(lambda f: f.models and _is(f.op, "model") and not _is(f.op, "indexed") and f.big, "models {op}, >= 32 MiB",
         pct=90.0, speedup=1.00, against=("torch",), where_run=PEER_BASELINES, tie=True),
    Rule(lambda f: f.models and _is(f.op, "model") and _is(f.op, "indexed") and f.big,
         "models {op} (an index input), >= 32 MiB", pct=85.0, speedup=1.00, against=("torch",),
         where_run=PEER_BASELINES, tie=True),
    Rule(lambda f: _is(f.op, "compute") and f.dtype in ("f16", "bf16")
         and ("large" in f.case_sets or (f.models and (f.m or 0) >= 2048)),
         "{op} 16-bit, large squares and models with M >= 2048", pct=70.0, speedup=0.95, against=("torch",)),
    Rule(lambda f: _is(f.op, "compute") and f.dtype == "e4m3"
         and ("large" in f.case_sets or (f.models and (f.m or 0) >= 2048)),
         "{op} e4m3 against torch._scaled_mm where it runs", speedup=0.90, where_run=("torch",)),
)


def model_targets(facts: Facts) -> dict:
    """The RULES that hold a row, merged: ``{"pct": (min %, why) or None, "speedup": {baseline: {"min", "tie",
    "required", "why"}}}``, each baseline held to the strictest rule that names it (of equal ones, the later: RULES
    go from the general to the specific)."""
    pct: tuple[float, str] | None = None
    speed: dict[str, dict] = {}
    for rule in RULES:
        if not rule.applies(facts):
            continue
        why = rule.why.format(op=facts.op)
        if rule.pct is not None and (pct is None or rule.pct >= pct[0]):
            pct = (rule.pct, why)
        if rule.speedup is None:
            continue
        for b in (*rule.against, *rule.where_run):
            have = speed.get(b)
            if have is not None and rule.speedup < have["min"]:
                have["required"] = have["required"] or b in rule.against
                continue
            tie = rule.tie or bool(have and rule.speedup == have["min"] and have["tie"])
            required = b in rule.against or bool(have and have["required"])
            speed[b] = {"min": rule.speedup, "tie": tie, "required": required, "why": why}
    return {"pct": pct, "speedup": speed}


def _params(text: str | None) -> dict:
    try:
        v = json.loads(text) if text else {}
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def _compute_peaks(csv_path: str, backend: str) -> dict[str, float]:
    """{dtype: dense peak TFLOP/s} from the run.json beside ``csv_path`` (oprt-bench's ``compute_peak``)."""
    try:
        run = json.loads((Path(csv_path).parent / "run.json").read_text())
        peaks = run["backends"][backend]["compute_peak"]
        return {str(d): float(v["tflops"]) for d, v in peaks.items()
                if isinstance(v, dict) and _float(str(v.get("tflops"))) is not None}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _roof_dtype(dtype: str, params: dict) -> str:
    """The compute peak a row is held to (oprt_bench.peaks.roof_dtype): tf32 for f32 with allow_tf32, fp8 for e4m3,
    else its dtype."""
    if dtype == "e4m3":
        return "fp8"
    return "tf32" if dtype == "f32" and params.get("allow_tf32") is True else dtype


def _moved(r: dict) -> float | None:
    """Bytes moved: the CSV's ``bytes``, else GB/s x median ms."""
    nbytes = _float(r.get("bytes"))
    if nbytes is None:
        gbps, ms = _float(r.get("gbps")), _float(r.get("median_ms"))
        nbytes = gbps * ms * 1e6 if gbps is not None and ms is not None else None
    return nbytes


def build_rows(path: str, backend: str, peak: float | None, show_all: bool, size_rule: str = "bytes") -> list[dict]:
    sets = _case_sets()
    with open(path, newline="") as fh:
        table = list(csv.DictReader(fh))
    # (op, case, dtype, params) -> backend -> row: the baselines' rows of a case, for the speedups against each
    same: dict[tuple, dict[str, dict]] = {}
    for r in table:
        same.setdefault(_case_key(r), {}).setdefault(r.get("backend", ""), r)
    compute_peaks = _compute_peaks(path, backend) if any(_is(r.get("op", ""), "compute") for r in table) else {}
    rows = []
    for r in table:
        if r.get("backend") != backend:
            continue
        op, case, dtype = r.get("op", ""), r.get("case", ""), r.get("dtype", "")
        shape = _first_shape(r.get("shape", ""))
        gbps = _float(r.get("gbps"))
        params = _params(r.get("params"))
        pct = _pct(r, peak, compute_peaks, params)
        speedup = _float(r.get("speedup"))
        in_sets = sets.get((op, case), ())
        case_set = in_sets[0] if in_sets else None
        if case_set is None and not sets:
            nbytes = math.prod(shape) * 4 if shape else 0
            case_set = "large" if nbytes >= 256 * MIB else None
            in_sets = (case_set,) if case_set else ()
        itemsize = 4 if size_rule == "f32" else ITEMSIZE.get(dtype, 4)
        tp, why = pct_target(op, case, shape, itemsize)
        ts = speedup_target(op, case_set)
        model = model_targets(Facts(op, in_sets, dtype, shape, _moved(r), params))
        if tp is None and ts is None and not (model["pct"] or model["speedup"]) and not show_all:
            continue
        vs = {b: _against(r, same.get(_case_key(r), {}).get(b), b, peak, compute_peaks) for b in model["speedup"]}
        ok = r.get("status", "") == "ok"
        target = "; ".join(
            t
            for t in (
                f">= {tp:.0f}% ({why})" if tp is not None else "",
                f"speedup >= {ts:.2f} ({case_set})" if ts is not None else "",
                *_model_target_text(model, _is(op, "compute")),
            )
            if t
        )
        rows.append(
            {
                "op": op,
                "case": case,
                "dtype": dtype,
                "status": r.get("status", ""),
                "gbps": gbps,
                "pct": pct,
                "pct_kind": "compute" if _is(op, "compute") else "",
                "speedup": speedup,
                "baseline": r.get("baseline", ""),
                "target": target or "-",
                "met": _judge(ok, pct, speedup, tp, ts, model, vs),
                "kernel": r.get("kernel") or "",  # schema 3 on; older runs have no such column
                "tp": tp,
                "ts": ts,
                "model": model,
                "vs": vs,
            }
        )
    return rows


def _case_key(r: dict) -> tuple:
    return (r.get("op", ""), r.get("case", ""), r.get("dtype", ""), (r.get("params") or "").strip())


def _pct(r: dict, peak: float | None, compute_peaks: dict[str, float], params: dict) -> float | None:
    """% of peak: of the copy peak (the CSV's pct_of_peak, or 100 x GB/s / --peak) for a memory-bound op; of the dense
    compute peak of the row's dtype for a compute-bound one (the CSV's pct_of_compute where it has one, else
    100 x TFLOP/s / run.json's compute_peak)."""
    if _is(r.get("op", ""), "compute"):
        pct = _float(r.get("pct_of_compute"))
        if pct is None:
            tflops, roof = _float(r.get("tflops")), compute_peaks.get(_roof_dtype(r.get("dtype", ""), params))
            pct = 100.0 * tflops / roof if tflops is not None and roof else None
        return pct
    gbps = _float(r.get("gbps"))
    return 100.0 * gbps / peak if (peak and gbps is not None) else _float(r.get("pct_of_peak"))


def _against(r: dict, base: dict | None, name: str, peak: float | None, compute_peaks: dict[str, float]) -> dict:
    """The row against one baseline: {"status", "speedup" (the baseline's median / the row's), "pct" (the baseline
    row's % of peak)}; status "no row" where the run has none for the case."""
    if base is None:
        if r.get("baseline") == name and _float(r.get("speedup")) is not None:  # the CSV's own speedup column
            return {"status": "ok", "speedup": _float(r.get("speedup")), "pct": None}
        return {"status": "no row", "speedup": None, "pct": None}
    mine, theirs = _float(r.get("median_ms")), _float(base.get("median_ms"))
    speedup = theirs / mine if mine and theirs is not None else None
    if speedup is None and r.get("baseline") == name:
        speedup = _float(r.get("speedup"))
    return {"status": base.get("status", ""), "speedup": speedup,
            "pct": _pct(base, peak, compute_peaks, _params(base.get("params")))}


def _model_target_text(model: dict, compute: bool) -> list[str]:
    """The long form of a row's RULES targets: ">= 90%, speedup >= 1.00 vs torch, liger*, tie rule (why)"; * marks a
    baseline judged only where the run has its row."""
    parts, whys = [], []
    if model["pct"]:
        parts.append(f">= {model['pct'][0]:.0f}%" + (" of compute peak" if compute else ""))
        whys.append(model["pct"][1])
    for (lo, tie), names in _speed_groups(model).items():
        starred = [b + ("" if model["speedup"][b]["required"] else "*") for b in names]
        parts.append(f"speedup >= {lo:.2f} vs {', '.join(starred)}" + (", tie rule" if tie else ""))
        whys.extend(model["speedup"][b]["why"] for b in names)
    if not parts:
        return []
    return [", ".join(parts) + f" ({'; '.join(dict.fromkeys(whys))})"]


def _speed_groups(model: dict) -> dict[tuple, list[str]]:
    """Baselines held to the same (minimum, tie rule), in the order the rules name them."""
    groups: dict[tuple, list[str]] = {}
    for b, t in model["speedup"].items():
        groups.setdefault((t["min"], t["tie"]), []).append(b)
    return groups


def _judge(ok: bool, pct: float | None, speedup: float | None, tp: float | None, ts: float | None,
           model: dict | None = None, vs: dict | None = None) -> str:
    checks = []
    if tp is not None:
        checks.append(ok and pct is not None and pct >= tp)
    if ts is not None:
        checks.append(ok and speedup is not None and speedup >= ts)
    if model and model["pct"]:
        checks.append(ok and pct is not None and pct >= model["pct"][0])
    for b, t in (model or {}).get("speedup", {}).items():
        got = (vs or {}).get(b) or {"status": "no row"}
        if got["status"] == "no row":
            if t["required"]:
                checks.append(False)
            continue
        if got["status"] != "ok":  # the baseline refused the case (unsupported) or failed: no target
            continue
        s = got["speedup"]
        tied = (t["tie"] and s is not None and s >= t["min"] * (1 - TIE) and pct is not None and pct >= TIE_PCT
                and got["pct"] is not None and got["pct"] >= TIE_PCT)
        checks.append(ok and s is not None and (s >= t["min"] or tied))
    return ("yes" if all(checks) else "no") if checks else "-"


def combine(runs: list[list[dict]], union: bool = False) -> list[dict]:
    """The rows of several runs of the same cases, one per (op, case, dtype) in first-seen order: GB/s, % of peak and
    speedup as the median over the runs that timed the row (with their range), the target judged on those medians;
    status ok only where every run has the row ok (else the first other status, or "in k of n runs"). union: the runs
    are sweeps of different cases (e.g. one op group each), so a row is ok where every run that has it has it ok."""
    n = len(runs)
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for rows in runs:
        for r in rows:
            groups.setdefault((r["op"], r["case"], r["dtype"]), []).append(r)
    out = []
    for rs in groups.values():
        first = rs[0]
        bad = [r["status"] for r in rs if r["status"] != "ok"]
        status = bad[0] if bad else ("ok" if len(rs) == n or union else f"in {len(rs)} of {n} runs")
        vals = {}
        for key in ("gbps", "pct", "speedup"):
            xs = sorted(r[key] for r in rs if r[key] is not None)
            vals[key] = statistics.median(xs) if xs else None
            vals[key + "_range"] = (xs[0], xs[-1]) if len(xs) > 1 else None
        kernels = list(dict.fromkeys(r["kernel"] for r in rs if r["kernel"]))
        vs = _combine_vs([r["vs"] for r in rs])
        out.append({
            **{k: first[k] for k in ("op", "case", "dtype", "baseline", "target", "tp", "ts", "model", "pct_kind")},
            "status": status, **vals, "runs": len(rs), "kernel": " / ".join(kernels), "vs": vs,
            "met": _judge(status == "ok", vals["pct"], vals["speedup"], first["tp"], first["ts"], first["model"], vs),
        })
    return out


def _combine_vs(per_run: list[dict]) -> dict:
    """A row's speedups against each baseline over several runs: the medians over the runs whose baseline row is ok;
    where none is, the first run's status (a baseline refuses a shape in every run alike)."""
    out = {}
    for b in dict.fromkeys(b for vs in per_run for b in vs):
        got = [vs[b] for vs in per_run if b in vs]
        oks = [g for g in got if g["status"] == "ok"]
        if not oks:
            out[b] = got[0]
            continue
        med = {}
        for key in ("speedup", "pct"):
            xs = [g[key] for g in oks if g[key] is not None]
            med[key] = statistics.median(xs) if xs else None
        out[b] = {"status": "ok", **med}
    return out


def _fmt(v: float | None, spec: str) -> str:
    return "" if v is None else format(v, spec)


def _fmt_speedup(v: float | None) -> str:
    """Three decimals, or four where three would round a miss of a speedup target (0.90, 0.95, 1.00; the tie's 0.99)
    up to it."""
    if v is None:
        return ""
    if any(v < t <= round(v, 3) for t in (0.90, 0.95, 0.99, 1.0)):
        return format(v, ".4f")
    return format(v, ".3f")


def _others(r: dict) -> str:
    """The row's speedups against the baselines of its targets, but the one of the speedup column: "torch-compile
    1.031, liger: unsupported" (a baseline row that is not ok: no target; "torch: no row": the run has none of a
    baseline the target needs)."""
    cells = []
    for b, g in r.get("vs", {}).items():
        if g["status"] == "no row" and not r["model"]["speedup"][b]["required"]:
            continue  # a baseline judged only where the run has it: nothing to say
        if g["status"] != "ok":
            cells.append(f"{b}: {g['status']}")
        elif b != r["baseline"]:
            cells.append(f"{b} {_fmt_speedup(g['speedup']) or '-'}")
    return ", ".join(cells)


def _pct_cell(r: dict, text: str) -> str:
    """A compute-bound row's % is of the dense compute peak: said in the cell."""
    if r.get("pct_kind") != "compute":
        return text
    if not text:  # an ok row without a %: its compute peak is unknown (a failed row has no figures at all)
        return "no compute peak" if r["status"] == "ok" else ""
    return f"{text} (compute)"


def _notes(rows: list[dict]) -> list[str]:
    notes = []
    if any(r.get("pct_kind") == "compute" for r in rows):
        notes.append("(compute): % of the dense compute peak of the row's dtype (the CSV's pct_of_compute, else "
                     "100 x TFLOP/s / run.json's compute_peak; tf32 for f32 with allow_tf32), not of the copy peak.")
    if any(r.get("vs") for r in rows):
        notes.append("speedup vs others: the baseline's median / the row's, from the same CSV. A baseline row that is "
                     "not ok (unsupported: it refuses the shape) is no target; \"no row\": the run has none, which "
                     "misses the target, but for a baseline marked * (judged where the run has its row). tie rule: "
                     f"a speedup within {TIE:.0%} under its target counts as met where the row and the baseline's row "
                     f"are both at >= {TIE_PCT:.0f}% of peak.")
    return notes


def render(rows: list[dict], kernel: bool = False, nruns: int = 1, below: bool = False) -> str:
    """The judged table; ``below``: only the rows below their target (the summary still counts every row)."""
    baselines = sorted({r["baseline"] for r in rows if r["baseline"]})
    base = "/".join(baselines) or "baseline"
    shown = [r for r in rows if r["met"] == "no"] if below else rows
    others = any(_others(r) for r in shown)
    out = [
        f"| op | case | dtype | GB/s | % of peak | speedup vs {base} |" + (" speedup vs others |" if others else "")
        + " target | met |" + (" kernel |" if kernel else ""),
        "| --- | --- | --- | ---: | ---: | ---: |" + (" --- |" if others else "") + " --- | --- |"
        + (" --- |" if kernel else ""),
    ]
    runs = nruns  # the CSVs given
    # --union: rows judged on fewer runs (without it such rows are not ok: "in k of n runs")
    upto = "up to " if any(r["status"] == "ok" and r.get("runs", 1) < runs for r in rows) else ""

    def spread(r: dict, key: str, fmt) -> str:  # a combined row: "median (min-max)"
        lohi = r.get(key + "_range")
        return fmt(r[key]) + (f" ({fmt(lohi[0])}-{fmt(lohi[1])})" if lohi else "")

    for r in shown:
        status = "" if r["status"] == "ok" else f" ({r['status']})"
        out.append(
            f"| {r['op']} | {r['case']}{status} | {r['dtype']} | {_fmt(r['gbps'], '.0f')} | "
            f"{_pct_cell(r, spread(r, 'pct', lambda v: _fmt(v, '.1f')))} | {spread(r, 'speedup', _fmt_speedup)} | "
            + (f"{_others(r)} | " if others else "") + f"{r['target']} | "
            f"{r['met']} |" + (f" {r['kernel'].replace('|', '/')} |" if kernel else "")
        )
    judged = [r for r in rows if r["met"] != "-"]
    met = sum(r["met"] == "yes" for r in judged)
    out.append("")
    out.extend(_notes(shown))  # the summary last: a log's tail
    out.append(f"{met} of {len(judged)} rows with a target meet it"
               + (f" (judged on the medians of {upto}{runs} runs; ranges in parentheses)." if runs > 1 else ".")
               + f" {len(judged) - met} below target" + (" (listed)." if below else "."))
    return "\n".join(out)


def _short_target(tp: float | None, ts: float | None, model: dict | None = None, compute: bool = False) -> str:
    """A row's targets in short: "95%, 1.00x", "0.95x", "90%, 1.00x torch/torch-compile*/liger*", or "-"."""
    parts = ([f"{tp:.0f}%"] if tp is not None else []) + ([f"{ts:.2f}x"] if ts is not None else [])
    model = model or {"pct": None, "speedup": {}}
    if model["pct"]:
        parts.append(f"{model['pct'][0]:.0f}%" + (" compute" if compute else ""))
    for (lo, _tie), names in _speed_groups(model).items():
        parts.append(f"{lo:.2f}x " + "/".join(b + ("" if model["speedup"][b]["required"] else "*") for b in names))
    return ", ".join(parts) or "-"


def render_markdown(rows: list[dict]) -> str:
    """One run's rows as docs/kernels.md shows them: kernel, GB/s, % of peak, speedup over the baseline, the target
    in short and whether it is met; an op column only where the rows hold more than one op, a column of the speedups
    against the other baselines only where a row has such targets."""
    many = len({r["op"] for r in rows}) > 1
    others = any(_others(r) for r in rows)
    baselines = sorted({r["baseline"] for r in rows if r["baseline"]})
    base = "/".join(baselines) or "baseline"
    head = (["op"] * many + ["case", "dtype", "kernel", "GB/s", "% of peak", f"speedup vs {base}"]
            + ["speedup vs others"] * others + ["target", "met"])
    align = ["---"] * many + ["---", "---", "---", "---:", "---:", "---:"] + ["---"] * others + ["---", "---"]
    out = ["| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |"]
    for r in rows:
        status = "" if r["status"] == "ok" else f" ({r['status']})"
        cells = [r["op"]] * many + [
            f"{r['case']}{status}",
            r["dtype"],
            r["kernel"].replace("|", "/") or "-",
            _fmt(r["gbps"], ".0f"),
            _pct_cell(r, _fmt(r["pct"], ".1f")),
            _fmt_speedup(r["speedup"]),
            *([_others(r)] if others else []),
            _short_target(r["tp"], r["ts"], r.get("model"), r.get("pct_kind") == "compute"),
            r["met"],
        ]
        out.append("| " + " | ".join(cells) + " |")
    judged = [r for r in rows if r["met"] != "-"]
    out.append("")
    out.extend(_notes(rows))
    out.append(f"{sum(r['met'] == 'yes' for r in judged)} of {len(judged)} rows with a target meet it.")
    return "\n".join(out)


def read_variants(outdir: str) -> list[tuple[str, str, str]]:
    """(name, assignments, results.csv) of each run of an env_variants.sh folder, in variants.txt's order."""
    listing = Path(outdir) / "variants.txt"
    out = []
    for line in listing.read_text().splitlines():
        name, _, assigns = line.partition(": ")
        if name.strip():
            out.append((name.strip(), assigns.strip(), str(Path(outdir) / name.strip() / "results.csv")))
    return out


def render_variants(variants: list[tuple[str, str]], per_variant: list[list[dict]], kernel: bool = False) -> str:
    """One table of several variants' rows: a row per (op, case, dtype) in first-seen order, a cell per variant with
    its % of peak, speedup over the baseline and whether it meets the row's target ("missing": the variant's run has
    no such row)."""
    keys: list[tuple] = []
    cells: list[dict[tuple, dict]] = []
    for rows in per_variant:
        by_key = {}
        for r in rows:
            key = (r["op"], r["case"], r["dtype"])
            by_key[key] = r
            if key not in keys:
                keys.append(key)
        cells.append(by_key)
    head = ["op", "case", "dtype"] + [f"{name}: {assigns or '-'}" for name, assigns in variants]
    out = ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] * 3 + ["---:"] * len(variants)) + " |"]
    for key in keys:
        row = list(key)
        for by_key in cells:
            r = by_key.get(key)
            if r is None:
                row.append("missing")
                continue
            text = r["status"] if r["status"] != "ok" else (
                f"{_pct_cell(r, _fmt(r['pct'], '.1f'))}% {_fmt_speedup(r['speedup'])}x {r['met']}")
            if kernel and r["kernel"]:
                text += f" `{r['kernel'].replace('|', '/')}`"
            row.append(text)
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    for (name, _), rows in zip(variants, per_variant):
        judged = [r for r in rows if r["met"] != "-"]
        out.append(f"{name}: {sum(r['met'] == 'yes' for r in judged)} of {len(judged)} rows with a target meet it.")
    return "\n".join(out)


def provenance(csv_path: str, backend: str, peak: float | None) -> str | None:
    """One line from the run.json beside ``csv_path`` (None when there is none or it does not parse)."""
    try:
        run = json.loads((Path(csv_path).parent / "run.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(run, dict):
        return None

    def obj(v: object) -> dict:  # a JSON object, or {} for anything else (a hand-edited or foreign run.json)
        return v if isinstance(v, dict) else {}

    be = obj(obj(run.get("backends")).get(backend))
    device = be.get("device") or obj(be.get("device_info")).get("name") or "unknown device"
    commit = str(obj(run.get("git")).get("commit") or "unknown")[:7]
    when = str(run.get("started_utc") or "")[:16].replace("T", " ") or "unknown date"
    opts = obj(run.get("options"))
    measured = obj(be.get("peak"))
    gbps = measured.get("gbps")
    if peak:
        against = f"% of {peak:.0f} GB/s (--peak)"
    elif isinstance(gbps, (int, float)):
        against = f"% of the calibrated copy peak, {gbps:.0f} GB/s ({measured.get('source', '')})"
    else:
        against = "% of peak as in the CSV"
    return (f"{device}, {when} UTC, commit {commit}, cases {opts.get('cases', '?')}, flush {opts.get('flush', '?')}; "
            f"{against}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="*", help="a run's results.csv; several: one row per case, the median over the runs")
    ap.add_argument("--variants", metavar="OUTDIR", default=None,
                    help="an env_variants.sh folder: its runs side by side, a column a variant")
    ap.add_argument("--backend", default="nvidia")
    ap.add_argument(
        "--peak",
        type=float,
        default=None,
        help="peak in GB/s for %% of peak (e.g. the calibrated D2D copy, 4190); default: the CSV's column",
    )
    ap.add_argument("--all", action="store_true", help="also list rows without a target")
    ap.add_argument(
        "--size-rule",
        choices=("bytes", "f32"),
        default="bytes",
        help="a tensor's size for the size-bound targets: its bytes in the row's dtype (default), or its elements x 4 "
        "(a 16-bit tensor held to the target of the f32 tensor of its shape)",
    )
    ap.add_argument(
        "--kernel",
        action="store_true",
        help="add the kernel column: which of the backend's kernels each row ran (results schema 3 on; empty before)",
    )
    ap.add_argument(
        "--union",
        action="store_true",
        help="several CSVs that sweep different cases (a sweep split by op group): a row is judged on the runs that "
        "have it instead of counting as missing from the others",
    )
    ap.add_argument("--op", default="", help="only the rows of these ops (comma-separated op names)")
    ap.add_argument("--below", action="store_true",
                    help="list only the rows below their target (the summary line still counts every row)")
    ap.add_argument(
        "--format",
        choices=("table", "markdown"),
        default="table",
        help="table: the judged table (default); markdown: docs/kernels.md's tables, every row, one table per CSV",
    )
    args = ap.parse_args(argv)
    ops = {o.strip() for o in args.op.split(",") if o.strip()}
    if args.variants is not None:
        if args.csv:
            ap.error("--variants reads the folder's runs: give no CSV beside it")
        if not (Path(args.variants) / "variants.txt").is_file():
            ap.error(f"no variants.txt in {args.variants} (scripts/env_variants.sh writes it)")
        runs = read_variants(args.variants)
        missing = [csv_path for _, _, csv_path in runs if not Path(csv_path).is_file()]
        if missing:
            ap.error(f"no such file: {missing[0]} (that variant's run wrote no results)")
        per_variant = [[r for r in build_rows(c, args.backend, args.peak, True, args.size_rule)
                        if not ops or r["op"] in ops] for _, _, c in runs]
        first = provenance(runs[0][2], args.backend, args.peak) if runs else None
        if first:
            print(first + "\n")
        print(render_variants([(n, a) for n, a, _ in runs], per_variant, args.kernel))
        return 0
    if not args.csv:
        ap.error("give a results.csv (or --variants OUTDIR)")
    for path in args.csv:
        if not Path(path).is_file():
            ap.error(f"no such file: {path}")
    if args.format == "markdown" and args.union:
        ap.error("--union combines sweeps; --format markdown prints one table per CSV")
    if args.format == "markdown" and args.below:
        ap.error("--below lists the judged table's rows below target; --format markdown prints every row")
    show_all = args.all or args.format == "markdown"
    per_run = [
        [r for r in build_rows(p, args.backend, args.peak, show_all, args.size_rule) if not ops or r["op"] in ops]
        for p in args.csv
    ]
    if args.format == "markdown":
        blocks = []
        for p, rows in zip(args.csv, per_run):
            line = provenance(p, args.backend, args.peak) or p
            blocks.append(line + "\n\n" + (render_markdown(rows) if rows else f"no rows of backend {args.backend!r}"))
        print("\n\n".join(blocks))
        return 0
    rows = per_run[0] if len(per_run) == 1 else combine(per_run, args.union)
    if not rows:
        what = "" if show_all else " with a target (--all lists the others)"
        print(f"no rows of backend {args.backend!r}{what} in {', '.join(args.csv)}", file=sys.stderr)
        return 0
    lines = [provenance(p, args.backend, args.peak) for p in args.csv]
    if len(args.csv) == 1:
        if lines[0]:
            print(lines[0] + "\n")
    else:
        for i, (p, line) in enumerate(zip(args.csv, lines), 1):
            print(f"run {i}: {line or p}")
        print()
    print(render(rows, args.kernel, len(args.csv), args.below))
    return 0


if __name__ == "__main__":
    sys.exit(main())
