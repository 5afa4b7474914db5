"""The ``kernel`` column (results schema 3): which of a backend's kernels each row ran, from the backend's
``last_launch()`` (oprt_core.backend.KernelNames), through the CSV, the report, ``--resume`` and perf_table.py."""

from __future__ import annotations

import csv
import importlib.util
import json
import shutil
import sys
from pathlib import Path

from bench_helpers import make_registry, run_script

from oprt_bench.report import render_report
from oprt_bench.results import COLUMNS, SCHEMA_VERSION, RowWriter, Run, load_run, normalize_rows
from oprt_bench.sweep import SweepOptions, make_plan, run_sweep
from oprt_core.backend import KernelNames
from oprt_core.compiled import CompiledBackend
from oprt_core.numpy_backend import NumpyBackend

ROOT = Path(__file__).resolve().parents[2]


class NamedKernels(NumpyBackend):
    """numpy's kernels, naming each launch after its op and the reduced axis (as a GPU backend names its paths)."""

    name = "named"

    def __init__(self) -> None:
        super().__init__()
        self.last = "none"

    def prepare(self, op, inputs, output, params):
        inner = super().prepare(op, inputs, output, params)
        name = f"{op}_axis{params['axis']}" if "axis" in params else f"{op}_kernel"
        backend = self

        class Named:
            def __call__(self) -> None:
                inner()
                backend.last = name

            def run(self, inputs, output) -> None:
                inner.run(inputs, output)
                backend.last = name

        return Named()

    def last_launch(self) -> str:
        return self.last


class BrokenNames(NumpyBackend):
    """Right numbers; asking which kernel ran fails."""

    name = "broken"

    def last_launch(self) -> str:
        raise RuntimeError("names unavailable: test double")


def sweep(backend, ops="copy,reduce_sum", mode="test"):
    plan = make_plan(make_registry(backend), SweepOptions(backends=f"numpy,{backend.name}", baseline="none", ops=ops,
                                                          dtypes="f32", cases="smoke", mode=mode,
                                                          time_budget_s=0.01, calibrate=False, isolation="none"))
    rows: list[dict] = []
    run_sweep(plan, rows.append)
    return rows


def _write(path, rows):
    """rows into path/results.csv as oprt-bench writes them (RowWriter: this schema's columns)."""
    w = RowWriter(path / "results.csv")
    for r in rows:
        w.write(r)
    w.close()


def _write_schema_2(path, rows):
    """rows into path/results.csv with schema 2's columns (no kernel, compile_s or host) and version."""
    old = [c for c in COLUMNS if c not in ("kernel", "compile_s", "host")]
    with (path / "results.csv").open("w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=old, extrasaction="ignore")
        out.writeheader()
        for r in rows:
            out.writerow(dict(r, schema_version="2"))


def test_the_kernel_column_follows_schema_version():
    assert SCHEMA_VERSION >= 3 and COLUMNS.index("kernel") == COLUMNS.index("schema_version") + 1


def test_rows_name_the_kernel_the_backend_says_it_ran():
    rows = sweep(NamedKernels())
    named = [r for r in rows if r["backend"] == "named"]
    assert named and all(r["status"] == "ok" for r in named)
    for r in named:
        want = f"reduce_sum_axis{json.loads(r['params'])['axis']}" if r["op"] == "reduce_sum" else "copy_kernel"
        assert r["kernel"] == want, r
    assert {r["kernel"] for r in named if r["op"] == "reduce_sum"} >= {"reduce_sum_axis-1", "reduce_sum_axis0"}
    # numpy cannot say: the cell stays empty
    assert all(r["kernel"] is None for r in rows if r["backend"] == "numpy")
    assert isinstance(NamedKernels(), KernelNames) and not isinstance(NumpyBackend(), KernelNames)


def test_a_failure_to_name_the_kernel_leaves_the_row_ok():
    rows = [r for r in sweep(BrokenNames(), ops="copy", mode="all") if r["backend"] == "broken"]
    assert rows and all(r["status"] == "ok" and r["median_ms"] > 0 for r in rows)
    assert {r["kernel"] for r in rows} == {"unknown (RuntimeError: names unavailable: test double)"}


def test_unsupported_rows_have_no_kernel():
    class NoReduce(NamedKernels):
        name = "noreduce"

        def supports(self, op, dtype, case=None):
            from oprt_core import Support

            return Support(False, "no reduce here") if op == "reduce_sum" else super().supports(op, dtype, case)

    rows = [r for r in sweep(NoReduce()) if r["backend"] == "noreduce"]
    assert {r["status"] for r in rows if r["op"] == "reduce_sum"} == {"unsupported"}
    assert all(r.get("kernel") is None for r in rows if r["op"] == "reduce_sum")
    assert {r["kernel"] for r in rows if r["op"] == "copy"} == {"copy_kernel"}


def test_the_kernel_round_trips_through_csv_and_report(tmp_path):
    rows = sweep(NamedKernels(), mode="all")
    _write(tmp_path, rows)
    text = list(csv.DictReader((tmp_path / "results.csv").open()))
    assert tuple(text[0]) == COLUMNS
    assert {t["kernel"] for t in text if t["backend"] == "named"} >= {"copy_kernel", "reduce_sum_axis0"}
    run = load_run(tmp_path)
    assert set(run.rows.loc[run.rows["backend"] == "numpy", "kernel"]) == {""}
    html = render_report([run])
    assert "data-kernel='reduce_sum_axis0'" in html and "kernel reduce_sum_axis0" in html
    assert "<small class='kernel'>reduce_sum_axis0</small>" in html  # shown in the cell, not only in its title
    assert html.count("<small class='kernel'>") == len(run.rows[run.rows["kernel"] != ""])  # numpy's cells: none


def test_failed_and_untimed_rows_show_their_kernel_in_the_report():
    class WrongNamed(NamedKernels):
        name = "wrongnamed"

        def add_op(self, spec, impl) -> None:
            if spec.name == "copy":
                good = impl

                def impl(inputs, out, params) -> None:
                    good(inputs, out, params)
                    out[...] = out + 1

            super().add_op(spec, impl)

    rows = [r for r in sweep(WrongNamed(), ops="copy") if r["backend"] == "wrongnamed"]
    assert {r["status"] for r in rows} == {"failed"} and {r["kernel"] for r in rows} == {"copy_kernel"}
    html = render_report([Run(Path("."), normalize_rows(rows), {})])
    assert "<small class='kernel'>copy_kernel</small>" in html and "; kernel copy_kernel" in html


def test_schema_2_runs_load_with_an_empty_kernel(tmp_path):
    _write_schema_2(tmp_path, sweep(NamedKernels()))
    run = load_run(tmp_path)
    assert set(run.rows["kernel"]) == {""} and set(run.rows["schema_version"]) == {2.0}
    assert "data-op='copy'" in render_report([run])


def test_resume_refuses_a_csv_of_another_schema(smoke_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(smoke_run, run)
    lines = list(csv.DictReader((run / "results.csv").open()))
    _write_schema_2(run, lines[: len(lines) // 2])
    before = (run / "results.csv").read_bytes()
    proc = run_script("--resume", str(run))
    assert proc.returncode != 0
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and "schema version 2" in err[0] and "Traceback" not in proc.stderr, proc.stderr
    assert (run / "results.csv").read_bytes() == before  # nothing appended or cut


def test_compiled_backend_names_kernels_only_when_built_to():
    assert CompiledBackend("x", loader=lambda: None, last_launch=lambda: "k1+k2").last_launch() == "k1+k2"
    assert CompiledBackend("x", loader=lambda: None).last_launch() is None


def _perf_table():
    spec = importlib.util.spec_from_file_location("perf_table_k", ROOT / "scripts" / "perf_table.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["perf_table_k"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_perf_table_kernel_column(tmp_path, capsys):
    rows = sweep(NamedKernels(), mode="all")
    _write(tmp_path, rows)
    pt = _perf_table()
    assert pt.main([str(tmp_path / "results.csv"), "--backend", "named", "--all", "--kernel", "--peak", "1"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("| op |"))
    assert header.endswith(" kernel |")
    assert any(line.endswith(" reduce_sum_axis0 |") for line in out.splitlines())
    assert pt.main([str(tmp_path / "results.csv"), "--backend", "named", "--all", "--peak", "1"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| op |"))
    assert header.endswith(" met |")  # without --kernel the table is as before


def test_a_launch_that_raises_keeps_the_kernels_it_tried():
    class Raising(NamedKernels):
        name = "raising"

        def prepare(self, op, inputs, output, params):
            backend = self

            def launch() -> None:
                backend.last = f"{op}_tried"
                raise RuntimeError("launch failed: test double")

            return launch

    rows = [r for r in sweep(Raising(), ops="copy") if r["backend"] == "raising"]
    assert rows and {r["status"] for r in rows} == {"error"}
    assert {r["kernel"] for r in rows} == {"copy_tried"}
    assert all("launch failed: test double" in r["message"] for r in rows)
