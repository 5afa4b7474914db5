"""Row flags (launch-bound, fits-in-l2, above-peak) on synthetic timings, in the CSV and in the HTML report."""

from __future__ import annotations

import csv
import re

import pytest
from bench_helpers import make_registry

from oprt_bench.calibrate import TimerCheck
from oprt_bench.flags import ABOVE_PEAK_TOLERANCE, FLAGS, LAUNCH_BOUND_FACTOR, row_flags, split_flags
from oprt_bench.peaks import Peak
from oprt_bench.report import render_report
from oprt_bench.results import COLUMNS, SCHEMA_VERSION, RowWriter, Run, load_run, normalize_rows
from oprt_bench.sweep import SweepOptions, make_plan, run_sweep
from oprt_core import DeviceInfo
from oprt_core.numpy_backend import NumpyBackend

MiB = 1 << 20


def flags(median_ms=1.0, nbytes=1000, gbps=1.0, *, floor_ms=None, l2_bytes=None, peak=None, cold=True):
    row = {"median_ms": median_ms, "bytes": nbytes, "gbps": gbps}
    return row_flags(row, floor_ms=floor_ms, l2_bytes=l2_bytes, measured_peak_gbps=peak, cold=cold)


def test_constants():
    assert LAUNCH_BOUND_FACTOR == 10 and ABOVE_PEAK_TOLERANCE == 0.05
    assert list(FLAGS) == ["launch-bound", "fits-in-l2", "above-peak"]


def test_launch_bound_threshold_is_exactly_10x_the_floor():
    assert flags(median_ms=5.0, floor_ms=0.5) == []  # exactly 10x: not launch-bound
    assert flags(median_ms=4.999, floor_ms=0.5) == ["launch-bound"]
    assert flags(median_ms=0.01, floor_ms=0.001) == []
    assert flags(median_ms=0.0099, floor_ms=0.001) == ["launch-bound"]
    assert flags(median_ms=0.001, floor_ms=None) == []  # no floor known (no calibration): never flagged


def test_fits_in_l2_only_in_warm_mode():
    assert flags(nbytes=MiB, l2_bytes=MiB, cold=False) == ["fits-in-l2"]  # fits exactly
    assert flags(nbytes=MiB + 1, l2_bytes=MiB, cold=False) == []
    assert flags(nbytes=MiB, l2_bytes=MiB, cold=True) == []  # cold: the cache was flushed
    assert flags(nbytes=MiB, l2_bytes=None, cold=False) == []
    assert flags(nbytes=0, l2_bytes=MiB, cold=False) == []  # nothing moved: nothing to cache


def test_above_peak_beyond_5_percent():
    assert flags(gbps=105.0, peak=100.0) == []  # exactly 5% above: tolerated
    assert flags(gbps=105.01, peak=100.0) == ["above-peak"]
    assert flags(gbps=99.0, peak=100.0) == []
    assert flags(gbps=500.0, peak=None) == []  # no measured peak: never flagged


def test_all_flags_in_order_and_untimed_rows():
    assert flags(median_ms=0.001, nbytes=10, gbps=1000.0, floor_ms=0.001, l2_bytes=MiB, peak=1.0, cold=False) == [
        "launch-bound", "fits-in-l2", "above-peak"]
    assert row_flags({"median_ms": None, "bytes": 10, "gbps": None}, floor_ms=1, l2_bytes=MiB,
                     measured_peak_gbps=1, cold=False) == []
    assert row_flags({"median_ms": float("nan")}, floor_ms=1, l2_bytes=None, measured_peak_gbps=None,
                     cold=True) == []
    assert split_flags("launch-bound;fits-in-l2") == ["launch-bound", "fits-in-l2"]
    assert split_flags("") == [] and split_flags(float("nan")) == [] and split_flags(None) == []


# -- through the sweep, on synthetic timings ----------------------------------------------------------------------

class FixedTime(NumpyBackend):
    """Computes on numpy; every timed sample lasts exactly ``ms`` (synthetic events); L2 of ``l2`` bytes."""

    name = "fixed"

    def __init__(self, ms: float, l2: int | None = 64 * MiB) -> None:
        super().__init__()
        self.ms = ms
        self.l2 = l2

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(name="Fixed GPU", memory_bytes=1 << 30, l2_bytes=self.l2, spec_peak_gbps=100.0)

    def flush_cache(self) -> None:
        pass

    def event(self):
        backend = self

        class Ev:
            def record(self):
                pass

            def elapsed_ms(self, end):
                return backend.ms

        return Ev()


def sweep(backend, *, floor_ms=None, peak=None, cold=True, ops="copy"):
    plan = make_plan(make_registry(backend), SweepOptions(backends=backend.name, baseline="none", ops=ops,
                                                          dtypes="f32", cases="smoke", mode="bench", cold=cold,
                                                          time_budget_s=0.01, calibrate=False))
    entry = plan.backends[0]
    entry.timer = TimerCheck(floor_ms, floor_ms, "test", None, "none")
    entry.peak = Peak(peak, "measured" if peak else "none")
    rows: list[dict] = []
    run_sweep(plan, rows.append)
    return rows


def test_sweep_flags_launch_bound_rows_against_the_floor():
    rows = sweep(FixedTime(5.0), floor_ms=0.5)
    assert rows and all(r["median_ms"] == 5.0 and r["flags"] == "" for r in rows)  # exactly 10x
    rows = sweep(FixedTime(4.0), floor_ms=0.5)
    assert all(r["flags"] == "launch-bound" for r in rows)


def test_sweep_flags_fits_in_l2_only_when_warm():
    warm = sweep(FixedTime(1.0), cold=False)
    assert warm and all(r["bytes"] <= 64 * MiB and r["flags"] == "fits-in-l2" for r in warm)
    assert all(r["flags"] == "" for r in sweep(FixedTime(1.0), cold=True))
    assert all(r["flags"] == "" for r in sweep(FixedTime(1.0, l2=100), cold=False))  # bigger than a tiny L2


def test_sweep_flags_above_peak_and_pct_columns():
    rows = sweep(FixedTime(1.0), peak=1e-3)
    gbps = rows[0]["gbps"]
    assert gbps == pytest.approx(rows[0]["bytes"] / 1e6)  # bytes / 1 ms
    rows = sweep(FixedTime(1.0), peak=gbps / 1.06)
    r = rows[0]
    assert r["flags"] == "above-peak"
    assert r["pct_of_peak"] == pytest.approx(106.0)
    assert r["pct_of_spec"] == pytest.approx(100 * gbps / 100.0)
    rows = sweep(FixedTime(1.0), peak=gbps / 1.04)
    assert rows[0]["flags"] == "" and rows[0]["pct_of_peak"] == pytest.approx(104.0)


def test_flags_and_pct_of_spec_round_trip_through_the_csv(tmp_path):
    rows = sweep(FixedTime(4.0), floor_ms=0.5, peak=1e-6, cold=False)
    w = RowWriter(tmp_path / "results.csv")
    for r in rows:
        w.write(r)
    w.close()
    text = list(csv.DictReader((tmp_path / "results.csv").open()))
    assert tuple(text[0]) == COLUMNS and SCHEMA_VERSION == 4
    assert COLUMNS.index("pct_of_spec") == COLUMNS.index("pct_of_peak") + 1
    assert {t["flags"] for t in text} == {"launch-bound;fits-in-l2;above-peak"}
    run = load_run(tmp_path)
    assert set(run.rows["flags"]) == {"launch-bound;fits-in-l2;above-peak"}
    assert run.rows["pct_of_spec"].dtype == float and (run.rows["pct_of_spec"] > 0).all()


# -- the HTML report -----------------------------------------------------------------------------------------------

def _meta(measured=50.0, spec=100.0):
    return {"backends": {"fixed": {
        "device": "Fixed GPU", "device_info": {"name": "Fixed GPU", "l2_bytes": 64 * MiB},
        "peak": {"gbps": measured, "source": "measured"}, "spec_peak": {"gbps": spec, "source": "driver"},
        "calibration": {"measured_peak_gbps": measured, "spec_peak_gbps": spec, "method": "copy_probe",
                        "buffer_bytes": 512 * MiB, "samples": 20},
        "timer": {"floor_ms": 0.004, "empty_launch_ms": 0.004, "resolution_ms": 0.0005,
                  "resolution_source": "documented"}}}}


def test_report_has_a_bandwidth_plot_per_op_a_roofline_markers_and_a_legend(tmp_path):
    rows = sweep(FixedTime(4.0), floor_ms=0.5, peak=1e-6, cold=False, ops="copy,relu")
    html = render_report([Run(tmp_path, normalize_rows(rows), _meta())])
    for op in ("copy", "relu"):
        m = re.search(rf"<div class='plot bandwidth' id='bandwidth-{op}'>(.*?)</div>", html, flags=re.S)
        assert m and m.group(1).lstrip().startswith("<svg") and "<path" in m.group(1)
    assert html.count("class='plot bandwidth'") == 2
    assert html.count("class='plot roofline'") == 1  # one chart: relu computes, copy (0 flops) is left out of it
    assert "Left out (0 flops: they only move data): copy." in html
    assert "<h2 id='flags'>Row flags</h2>" in html
    for flag in FLAGS:
        assert f"<span class='flag flag-{flag}' title='{flag}: " in html  # a marker on the flagged rows
        assert f"<code>{flag}</code>" in html  # and its legend entry
    assert "data-flags='launch-bound;fits-in-l2;above-peak'" in html
    assert ">% peak</th>" in html and ">% spec</th>" in html
    assert "measured peak GB/s" in html and "spec peak GB/s" in html and "timer floor us" in html
    assert html.count("<script") == 1 and "<script>" in html  # the inline sort/filter script, nothing loaded


def test_roofline_draws_the_peak_lines(tmp_path, monkeypatch):
    """The measured peak as a solid horizontal line, the spec peak dashed, in the backend's colour."""
    from matplotlib.axes import Axes

    drawn: list[tuple[float, object, object]] = []
    original = Axes.axhline

    def spy(self, y=0, *args, **kwargs):
        drawn.append((y, kwargs.get("linestyle"), kwargs.get("color")))
        return original(self, y, *args, **kwargs)

    monkeypatch.setattr(Axes, "axhline", spy)
    rows = normalize_rows(sweep(FixedTime(4.0), ops="copy"))
    html = render_report([Run(tmp_path, rows, _meta(measured=50.0, spec=100.0))])
    assert [(y, ls) for y, ls, _ in drawn] == [(50.0, "-"), (100.0, (0, (5, 3)))]  # one dtype: one panel
    assert drawn[0][2] == drawn[1][2]  # one colour per backend
    assert "stroke-dasharray" in html.split("id='bandwidth-copy'")[1]
    drawn.clear()
    render_report([Run(tmp_path, rows, {})])  # no calibration recorded: no peak lines
    assert drawn == []


def test_unflagged_report_still_explains_the_markers(tmp_path):
    rows = normalize_rows(sweep(FixedTime(4.0), ops="copy"))
    html = render_report([Run(tmp_path, rows, {})])
    assert "Row flags" in html and "(0 rows)" in html and "class='flag flag-launch-bound' title=" not in html


def test_schema_1_runs_still_load_report_and_compare(tmp_path):
    from oprt_bench.compare import compare_runs

    rows = sweep(FixedTime(4.0), ops="copy")
    new = tmp_path / "new"
    new.mkdir()
    w = RowWriter(new / "results.csv")
    for r in rows:
        w.write(r)
    w.close()
    old = tmp_path / "old"
    old.mkdir()
    lines = list(csv.DictReader((new / "results.csv").open()))
    v1 = [c for c in COLUMNS if c != "pct_of_spec"]
    with (old / "results.csv").open("w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=v1, extrasaction="ignore")
        out.writeheader()
        for line in lines:
            out.writerow(dict(line, schema_version="1", flags=""))
    run = load_run(old)
    assert run.rows["pct_of_spec"].isna().all() and set(run.rows["schema_version"]) == {1.0}
    assert "bandwidth-copy" in render_report([run, load_run(new)])
    table = compare_runs(run, load_run(new), 0.05)
    assert set(table["verdict"]) == {"same"}
