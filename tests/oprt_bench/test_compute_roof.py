"""The compute roof: the datasheet's dense TFLOP/s per dtype (oprt_bench.peaks.COMPUTE_PEAKS), the ridge point,
run.json's ``compute_peak``, the report's roofline drawing a spec compute roof only where run.json records one, the
measured compute roof (the fastest row), each row's % of the compute peak, the terminal table's TFLOP/s for rows that
compute (matmul) and not for memory-bound ones; and a row its backend refuses costs no reference."""

from __future__ import annotations

import re

import pytest
from bench_helpers import make_registry

from oprt_bench.calibrate import TimerCheck
from oprt_bench.model import BackendEntry, Row
from oprt_bench.peaks import (
    COMPUTE_PEAKS,
    Peak,
    compute_peak,
    measured_compute_peaks,
    pct_of_compute,
    ridge_point,
    roof_dtype,
)
from oprt_bench.report import backend_compute_peaks, render_report
from oprt_bench.results import Run, normalize_rows
from oprt_bench.sweep import SweepOptions, make_plan, run_sweep
from oprt_bench.table import COMPUTE_INTENSITY, build_table, render
from oprt_core import DeviceInfo
from oprt_core.numpy_backend import NumpyBackend


def test_spec_table_and_lookup():
    h200 = compute_peak({"name": "NVIDIA  H200"})  # matched as the bandwidth table is: case and spaces folded
    assert {d: v["tflops"] for d, v in h200.items()} == {"f32": 66.9, "tf32": 494.7, "f16": 989.4, "bf16": 989.4,
                                                        "fp8": 1978.9}
    assert {v["source"] for v in h200.values()} == {"spec"}
    assert compute_peak({"name": "NVIDIA H100 80GB HBM3"}) == h200
    assert compute_peak({"name": "AMD EPYC 7763"}) == {} and compute_peak(None) == {}
    assert set(COMPUTE_PEAKS) <= {"nvidia h200", "nvidia h100 80gb hbm3"} | set(COMPUTE_PEAKS)


def test_ridge_point_is_peak_flops_over_peak_bandwidth():
    assert ridge_point(989.4, 4800.0) == pytest.approx(989.4e12 / 4.8e12)  # ~206 flop/B: bf16 on the H200
    assert ridge_point(66.9, 4800.0) == pytest.approx(13.9375)
    # at the ridge point the two roofs meet: memory roof x intensity == compute roof
    x = ridge_point(494.7, 3350.0)
    assert 3350.0e9 * x == pytest.approx(494.7e12)
    for bad in ((0.0, 4800.0), (989.4, 0.0), (-1.0, 1.0)):
        with pytest.raises(ValueError, match="positive peaks"):
            ridge_point(*bad)


def test_roof_dtype():
    assert roof_dtype("f32") == "f32" and roof_dtype("f32", {"allow_tf32": False}) == "f32"
    assert roof_dtype("f32", {"allow_tf32": True}) == "tf32"
    assert roof_dtype("bf16", {"allow_tf32": True}) == "bf16"  # TF32 concerns f32 inputs only


def test_run_json_records_the_compute_peak_of_a_known_device():
    known = BackendEntry("nvidia", None, "NVIDIA H200", {"name": "NVIDIA H200"}, Peak(None, "none")).to_dict()
    assert known["compute_peak"]["bf16"] == {"tflops": 989.4, "source": "spec"}
    unknown = BackendEntry("numpy", None, "cpu", {"name": "Some CPU"}, Peak(None, "none")).to_dict()
    assert unknown["compute_peak"] == {}


# -- the report and the table, on a sweep of synthetic timings ---------------------------------------------------

class FixedTime(NumpyBackend):
    """Computes on numpy; every timed sample lasts 0.5 ms; reports itself as ``device``."""

    name = "fixed"

    def __init__(self, device: str = "NVIDIA H200") -> None:
        super().__init__()
        self.device = device

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(name=self.device, memory_bytes=1 << 30, l2_bytes=1 << 20, spec_peak_gbps=4800.0)

    def flush_cache(self, clean: bool = False) -> None:
        pass

    def event(self):
        class Ev:
            def record(self):
                pass

            def elapsed_ms(self, end):
                return 0.5

        return Ev()


def _run(tmp_path, device: str, ops: str = "matmul,relu") -> Run:
    plan = make_plan(make_registry(FixedTime(device)), SweepOptions(
        backends="fixed", baseline="none", ops=ops, dtypes="f32,bf16", cases="smoke", mode="bench",
        time_budget_s=0.01, calibrate=False, isolation="none"))
    entry = plan.backends[0]
    entry.timer = TimerCheck(None, None, "test", None, "none")
    rows: list[dict] = []
    run_sweep(plan, rows.append)
    return Run(tmp_path, normalize_rows(rows), {"backends": {"fixed": entry.to_dict()}})


def _roofline_svg(html: str) -> str:
    return html.split("id='roofline-chart'>")[1].split("</svg>")[0]


def test_report_draws_the_compute_roofs_of_a_known_device(tmp_path):
    run = _run(tmp_path, "NVIDIA H200")
    assert backend_compute_peaks([run])["fixed"]["f32"] == 66.9
    svg = _roofline_svg(render_report([run]))
    roofs = re.findall(r"<title>(fixed compute roof [^<]*)</title>", svg)
    # one per dtype of the backend's points (the smoke cases: f32 and bf16), none for dtypes it did not run
    assert sorted(roofs) == ["fixed compute roof (bf16, spec dense peak): 989.4 TFLOP/s",
                             "fixed compute roof (f32, spec dense peak): 66.9 TFLOP/s"]
    assert "<!-- compute roof: spec dense peak per dtype -->" in svg and "compute roof: not known" not in svg


def test_report_has_no_compute_roof_for_an_unknown_device(tmp_path):
    run = _run(tmp_path, "Fixed GPU")
    assert backend_compute_peaks([run]) == {}
    html = render_report([run])
    svg = _roofline_svg(html)
    assert "spec dense peak" not in svg and "<!-- compute roof: not known (no peak FLOP/s recorded) -->" in svg
    assert "No spec compute roof is drawn: run.json records no peak FLOP/s." in html


def test_table_shows_tflops_for_rows_that_compute(tmp_path):
    rows = _run(tmp_path, "Fixed GPU").rows.to_dict("records")
    table = build_table(rows)
    text = render(table, "markdown")
    assert "fixed TFLOP/s" in text and "TFLOP/s (10^12 flop/s) where a row does >= 4 flop per byte" in text
    tflops = {(r["op"], r["case"], r["dtype"]): r for r in rows}
    for line in table.ops["matmul"]:
        r = tflops[("matmul", line.case, line.dtype)]
        shown = re.search(rf"\| {re.escape(line.case)} \| {line.dtype} \|([^\n]*)", text).group(1)
        if r["flops"] / r["bytes"] >= COMPUTE_INTENSITY:
            assert f"{r['tflops']:.3g}" in shown  # 2 M N K / 0.5 ms
            assert r["tflops"] == pytest.approx(r["flops"] / 0.5e9)
    assert any(r["flops"] / r["bytes"] >= COMPUTE_INTENSITY for r in rows if r["op"] == "matmul")
    relu = render(build_table([r for r in rows if r["op"] == "relu"]), "markdown")
    assert "TFLOP/s" not in relu  # memory-bound rows (0.125 flop/B) show GB/s, not TFLOP/s


def test_rows_that_compute_carry_their_pct_of_the_compute_peak(tmp_path):
    rows = _run(tmp_path, "NVIDIA H200").rows.to_dict("records")
    matmul = [r for r in rows if r["op"] == "matmul" and r["flops"] / r["bytes"] >= COMPUTE_INTENSITY]
    assert matmul
    for r in matmul:
        peak = {"f32": 66.9, "bf16": 989.4}[r["dtype"]]
        assert r["pct_of_compute"] == pytest.approx(100.0 * r["tflops"] / peak)
    # memory-bound rows, and matmul rows below the intensity threshold, are held to the memory roof only
    for r in rows:
        if r not in matmul:
            assert r["pct_of_compute"] != r["pct_of_compute"]  # NaN: empty in results.csv
    # the table's % column of a computing row is its compute %, not its memory %
    text = render(build_table(rows), "markdown")
    r = matmul[0]
    shown = re.search(rf"\| {re.escape(r['case'])} \| {r['dtype']} \|([^\n]*)", text).group(1)
    assert f"| {r['pct_of_compute']:.1f} |" in shown + "|"
    assert "of the spec dense peak of the row's dtype where it shows TFLOP/s" in text
    # an unknown device has no compute peak: no compute % either
    assert all(r["pct_of_compute"] != r["pct_of_compute"] for r in _run(tmp_path, "Fixed GPU").rows.to_dict("records"))


def test_pct_of_compute_uses_the_tf32_peak_where_asked():
    h200 = compute_peak({"name": "NVIDIA H200"})
    assert pct_of_compute(49.47, 1e9, 1e6, "f32", '{"allow_tf32": true}', h200) == pytest.approx(10.0)
    assert pct_of_compute(6.69, 1e9, 1e6, "f32", {"allow_tf32": False}, h200) == pytest.approx(10.0)
    assert pct_of_compute(6.69, 1e6, 1e6, "f32", "", h200) is None  # 1 flop per byte: memory-bound
    assert pct_of_compute(None, 1e9, 1e6, "f32", "", h200) is None
    assert pct_of_compute(6.69, 1e9, 1e6, "f8", "", h200) is None  # no peak for the dtype


def test_the_measured_compute_roof_is_the_fastest_row_per_device_and_dtype():
    def row(backend, case, dtype, tflops, status="ok", flops=1e12, nbytes=1e9, params="", device="NVIDIA H200"):
        return {"backend": backend, "op": "matmul", "case": case, "dtype": dtype, "tflops": tflops, "status": status,
                "flops": flops, "bytes": nbytes, "params": params, "device": device}

    rows = [row("nvidia", "a", "bf16", 500.0), row("torch", "a", "bf16", 700.0), row("torch", "b", "bf16", 650.0),
            row("nvidia", "c", "bf16", 900.0, status="failed"),  # a wrong result sets no roof
            row("copy", "d", "bf16", 950.0, flops=1e9, nbytes=1e9),  # memory-bound: no compute roof
            row("torch", "e", "f32", 40.0), row("torch", "f", "f32", 300.0, params='{"allow_tf32": true}'),
            row("torch", "a", "bf16", 400.0, device="NVIDIA H100 80GB HBM3")]
    got = measured_compute_peaks(rows)
    assert got["NVIDIA H200"]["bf16"] == {"tflops": 700.0, "backend": "torch", "op": "matmul", "case": "a",
                                          "source": "fastest row"}
    assert got["NVIDIA H200"]["f32"]["tflops"] == 40.0 and got["NVIDIA H200"]["tf32"]["case"] == "f"
    assert got["NVIDIA H100 80GB HBM3"]["bf16"]["tflops"] == 400.0
    assert measured_compute_peaks([row("nvidia", "a", "bf16", 1.0, flops=0)]) == {}


def test_report_draws_the_measured_compute_roof(tmp_path):
    run = _run(tmp_path, "NVIDIA H200")
    best = measured_compute_peaks(run.rows.to_dict("records"))
    (device, per), = best.items()
    svg = _roofline_svg(render_report([run]))
    for dtype, m in per.items():
        assert (f"compute roof ({dtype}, measured: the fastest row, fixed matmul {m['case']}"
                in svg) and f"{m['tflops']:.4g} TFLOP/s" in svg
    assert "<!-- compute roof: measured (fastest row) per dtype -->" in svg


def test_run_json_records_the_measured_compute_roof(tmp_path):
    import json

    from click.testing import CliRunner

    from oprt_bench.cli import cli

    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["--no-calibrate", "--ops", "matmul,relu", "--backends", "fixed", "--baseline", "none",
                                 "--dtypes", "f32",
                                 "--cases", "smoke", "--time-budget", "0.01", "--out", str(out), "-q"],
                           obj={"registry": make_registry(FixedTime("NVIDIA H200"))})
    assert r.exit_code == 0, r.output
    meta = json.loads((out / "run.json").read_text())
    (device, per), = meta["compute_calibration"].items()
    assert set(per) == {"f32"} and per["f32"]["backend"] == "fixed" and per["f32"]["op"] == "matmul"
    rows = [x for x in json.loads((out / "results.json").read_text())["rows"] if x["op"] == "matmul"]
    assert per["f32"]["tflops"] == pytest.approx(max(x["tflops"] for x in rows if x["pct_of_compute"] is not None))


# -- a row the backend refuses draws no case ---------------------------------------------------------------------

class NoMatmul(NumpyBackend):
    name = "nomatmul"

    def supports(self, op, dtype, case=None):
        from oprt_core.backend import Support

        return Support(False, "no matmul here") if op == "matmul" else super().supports(op, dtype, case)


def test_a_refused_row_draws_no_inputs_and_no_reference(monkeypatch):
    """The large matmul cases' float64 references take a minute each: a backend that refuses the case (one without a
    matmul, such as torch-compile) gets its unsupported row without one being computed, in process and in a worker
    (run_row_here)."""
    import oprt_bench.execute as execute

    drawn: list[str] = []
    real = execute.prepare_case
    monkeypatch.setattr(execute, "prepare_case", lambda spec, *a: drawn.append(spec.name) or real(spec, *a))
    plan = make_plan(make_registry(NoMatmul()), SweepOptions(
        backends="nomatmul", baseline="none", ops="matmul,relu", dtypes="f32", cases="smoke", mode="test",
        calibrate=False, isolation="none"))
    rows: list[dict] = []
    run_sweep(plan, rows.append)
    matmul = [r for r in rows if r["op"] == "matmul"]
    assert matmul and all(r["status"] == "unsupported" and r["message"] == "no matmul here" for r in matmul)
    assert all(r["status"] == "ok" for r in rows if r["op"] == "relu")
    assert drawn and set(drawn) == {"relu"}
    drawn.clear()
    entry = plan.backends[0]
    spec = plan.specs[[s.name for s in plan.specs].index("matmul")]
    row = Row(op="matmul", case="64x48x32", shape="64x32,32x48", dtype="f32")
    row = execute.run_row_here(entry, spec, spec.cases("smoke")[0], "f32", row, "test", plan.timing)
    assert row.status == "unsupported" and drawn == []
