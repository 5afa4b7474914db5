"""The compute roof: the datasheet's dense TFLOP/s per dtype (oprt_bench.peaks.COMPUTE_PEAKS), the ridge point,
run.json's ``compute_peak``, the report's roofline drawing a compute roof only where run.json records one, the
terminal table's TFLOP/s for rows that compute (matmul) and not for memory-bound ones; and a row its backend refuses
costs no reference."""

from __future__ import annotations

import re

import pytest
from bench_helpers import make_registry

from oprt_bench.calibrate import TimerCheck
from oprt_bench.model import BackendEntry, Row
from oprt_bench.peaks import COMPUTE_PEAKS, Peak, compute_peak, ridge_point, roof_dtype
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
    assert "compute roof (" not in svg and "<!-- compute roof: not known (no peak FLOP/s recorded) -->" in svg
    assert "No compute roof is drawn: run.json records no peak FLOP/s." in html


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
