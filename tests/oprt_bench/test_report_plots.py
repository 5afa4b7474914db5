"""The HTML report's plots and tables, parsed without a browser, on the committed H200 run (results/h200/default):
GB/s plots whose lines never join two case shapes, hover titles on every point, the roofline chart with the
measured and spec roofs, error and noise columns, sortable and filterable tables."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

from oprt_bench.report import (
    bandwidth_series,
    case_family,
    joinable,
    label_rows,
    render_report,
    roofline_points,
    speedup_points,
)
from oprt_bench.results import Run, load_run, normalize_rows

H200 = Path(__file__).resolve().parents[2] / "results" / "h200" / "default"
SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def h200() -> Run:
    return load_run(H200)


@pytest.fixture(scope="module")
def h200_html(h200) -> str:
    return render_report([h200])


def _svgs(html: str) -> dict[str, ET.Element]:
    """Each plot's div id -> its parsed SVG (which must be well-formed after the titles went in)."""
    found = re.findall(r"<div class='plot \w+' id='([\w-]+)'>(<svg\b.*?</svg>)", html, flags=re.S)
    return {div: ET.fromstring(svg) for div, svg in found}


def _point_titles(svg: ET.Element, prefix: str) -> dict[str, str]:
    return {g.get("id", ""): (g.find(f"{SVG_NS}title").text or "") for g in svg.iter(f"{SVG_NS}g")
            if g.get("id", "").startswith(prefix)}


@pytest.mark.parametrize(("case", "shape", "family"), [
    ("4096x4096", "4096x4096", "NxN"),
    ("4096x4096-transposed", "4096x4096", "NxN-transposed"),
    ("16777216", "16777216", "N"),
    ("1048576", "1048576,1048576", "N"),
    ("4096x4096+4096", "4096x4096,4096", "NxN+N"),
    ("4096x4096-axis-1", "4096x4096", "NxN-axis-1"),
    ("4096x4096-axis0", "4096x4096", "NxN-axis0"),
    ("64x4096x64-axis1", "64x4096x64", "NxNxN-axis1"),
    ("16777216-leaky", "16777216", "N-leaky"),
    ("4x31-broadcast0+4x31-reversed", "4x31,4x31", "NxN-broadcast0+NxN-reversed"),
    ("scalar", "scalar", "S"),
    ("tiny", "8x8", "tiny"),  # a name that does not spell its shape stays as it is
])
def test_case_family_writes_extents_as_n(case, shape, family):
    assert case_family(case, shape) == family


def test_joinable_needs_distinct_sizes():
    assert joinable([1e6, 4e6, 16e6])
    assert not joinable([67_125_248, 67_174_400])  # 4096x4096 and 16384x1024 reduced: two shapes of one size
    assert not joinable([8e6, 8e6])
    assert not joinable([8e6])
    assert joinable([1.05e6, 1e6])  # exactly the threshold apart, in any order


def test_no_line_joins_two_shapes_on_the_h200_run(h200):
    """copy 4096x4096 and 4096x4096-transposed move the same bytes at very different GB/s: they must not share a
    line. Every series holds one case family; a series is joined only along distinct sizes."""
    from oprt_bench.report import label_rows

    rows = label_rows([h200])
    for op, part in rows.groupby("op"):
        series = bandwidth_series(part)
        ok = part[part["status"] == "ok"]
        assert sum(len(s.xs) for s in series) == len(ok), op  # every timed row plotted once
        for s in series:
            assert list(s.xs) == sorted(s.xs)
            if s.joined:
                assert all(b >= a * 1.05 for a, b in zip(s.xs, s.xs[1:])), (op, s)
            families = {case_family(*re.match(r"\w+ (\S+) \((\S+)\)", t).groups()) for t in s.titles}
            assert families == {s.family}, (op, s)
    copy = bandwidth_series(rows[rows["op"] == "copy"])
    by_family = {s.family for s in copy if s.label == "torch" and s.dtype == "f32"}
    assert by_family == {"N", "NxN", "NxN-transposed"}
    joined = [s for s in copy if s.joined]
    assert joined and all(s.family == "N" for s in joined)  # 1048576 -> 16777216 only
    softmax = [s for s in bandwidth_series(rows[rows["op"] == "softmax"]) if s.family == "NxN-axis-1"]
    assert softmax and all(len(s.xs) == 5 and not s.joined for s in softmax)  # five shapes of 32 MiB: markers only


def test_plotted_lines_are_only_the_joined_series(h200, monkeypatch):
    """What reaches matplotlib: a line of several points only where the sizes are distinct, every point an
    artist of its own with a gid (the hook of its hover title)."""
    from matplotlib.axes import Axes

    from oprt_bench.report import label_rows

    calls: list[tuple[list[float], dict]] = []
    original = Axes.plot

    def spy(self, *args, **kwargs):
        if len(args) >= 2:
            calls.append((list(args[0]), kwargs))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Axes, "plot", spy)
    render_report([h200])
    lines = [(xs, kw) for xs, kw in calls
             if len(xs) > 1 and not str(kw.get("gid", "")).startswith(("oprt-roof-", "oprt-spmed-"))]
    points = [(xs, kw) for xs, kw in calls if len(xs) == 1]
    assert lines and all(joinable(xs) for xs, _ in lines)
    ok = label_rows([h200]).query("status == 'ok'")
    flop_rows = len(ok[ok["op"] != "copy"])
    sped = len(speedup_points(ok))
    # a point per row per bandwidth plot, per row on the roofline, per non-baseline row on the speedup plots
    assert sped and len(points) == len(ok) + flop_rows + sped
    assert all(str(kw.get("gid", "")).startswith(("oprt-pt-", "oprt-roofpt-", "oprt-sp-")) for _, kw in points)


def test_every_point_has_a_hover_title_naming_its_case(h200, h200_html):
    svgs = _svgs(h200_html)
    ops = set(h200.rows["op"])  # the recorded run's ops: a bandwidth and a speedup plot each
    assert len(ops) > 1
    assert set(svgs) == {"roofline-chart"} | {f"bandwidth-{op}" for op in ops} | {f"speedup-{op}" for op in ops}
    titles: dict[str, str] = {}
    for div, svg in svgs.items():
        if div.startswith("bandwidth-"):
            titles.update(_point_titles(svg, "oprt-pt-"))
    ok = h200.rows[h200.rows["status"] == "ok"]
    assert len(titles) == len(ok) == 225
    for r in ok.itertuples():
        want = f"{r.op} {r.case} ({r.shape}) {r.dtype} on {r.backend}: median "
        assert sum(t.startswith(want) for t in titles.values()) == 1, want
    assert ("copy 4096x4096-transposed (4096x4096) f32 on torch: median 0.1244 ms, 1079 GB/s, 134217728 bytes"
            in titles.values())
    assert any("flags launch-bound" in t for t in titles.values())


def test_bandwidth_plots_name_their_axes(h200_html):
    for op in ("copy", "softmax"):
        svg = h200_html.split(f"id='bandwidth-{op}'>")[1].split("</svg>")[0]
        # matplotlib writes each text drawn as paths with its string in a comment
        for text in ("bytes moved per call (B)", "achieved bandwidth (GB/s, 10^9 B/s)", "f32", "f16", "bf16",
                     f"{op}: achieved GB/s against bytes moved per call", "measured peak", "spec peak"):
            assert f"<!-- {text}" in svg, (op, text)
    copy = h200_html.split("id='bandwidth-copy'>")[1].split("</svg>")[0]
    assert "<!-- case NxN-transposed -->" in copy and "<!-- 64 MiB -->" in copy


def test_roofline_chart_has_the_measured_and_spec_roofs(h200, h200_html):
    svg = _svgs(h200_html)["roofline-chart"]
    text = h200_html.split("id='roofline-chart'>")[1].split("</svg>")[0]
    for label in ("arithmetic intensity (flop per byte moved)", "achieved GFLOP/s (10^9 flop/s)",
                  "memory roof: measured peak", "memory roof: spec peak", "compute roof: not known"):
        assert f"<!-- {label}" in text, label
    roofs = _point_titles(svg, "oprt-roof-")
    backends = h200.meta["backends"]
    for name, b in backends.items():
        measured = b["calibration"]["measured_peak_gbps"]
        spec = b["calibration"]["spec_peak_gbps"]
        assert f"{name} memory roof from its measured peak: {measured:.4g} GB/s x flop/B" in roofs.values()
        assert f"{name} memory roof from its spec peak: {spec:.4g} GB/s x flop/B" in roofs.values()
    points = _point_titles(svg, "oprt-roofpt-")
    ok = h200.rows[(h200.rows["status"] == "ok") & (h200.rows["op"] != "copy")]
    assert len(points) == len(ok)
    assert any(t.startswith("relu 16777216 (16777216) f32 on nvidia:") and ", 0.125 flop/B, " in t
               for t in points.values())
    assert "Left out (0 flops: they only move data): copy." in h200_html


def test_roofline_points_intensity_and_throughput(h200):
    from oprt_bench.report import label_rows

    pts = roofline_points(label_rows([h200]))
    assert set(pts["op"]) == {"vector_add", "relu", "reduce_sum", "softmax"}
    relu = pts[(pts["op"] == "relu") & (pts["case"] == "16777216") & (pts["dtype"] == "f32")]
    assert list(relu["intensity"]) == [0.125] * 3  # 1 flop per element, 4 B read + 4 B written
    r = relu.iloc[0]
    assert r["gflops"] == pytest.approx(r["flops"] / (r["median_ms"] * 1e-3) / 1e9)
    assert r["gflops"] == pytest.approx(r["gbps"] * r["intensity"])  # on its op's memory roof line family


def test_roofline_takes_flops_from_the_spec_when_the_csv_has_none(h200):
    """A results.csv without the flops column (or with it empty) still gets its roofline: the flops of each case
    come from its op's spec, the same numbers the sweep wrote."""
    from oprt_bench.report import label_rows

    rows = label_rows([h200])
    stripped = normalize_rows(rows.drop(columns=["flops"]))  # keeps the label column
    assert stripped["flops"].isna().all()
    want = roofline_points(rows)
    got = roofline_points(stripped)
    assert len(got) == len(want) > 0
    pd.testing.assert_series_equal(got["flops"], want["flops"])
    html = render_report([Run(H200, normalize_rows(h200.rows.drop(columns=["flops"])), h200.meta)])
    assert "id='roofline-chart'" in html


def test_roofline_leaves_out_unknown_ops_and_says_when_nothing_computes(tmp_path):
    rows = normalize_rows([{"op": "copy", "case": "1000", "shape": "1000", "dtype": "f32", "backend": "b",
                            "status": "ok", "median_ms": 0.01, "bytes": 8000, "gbps": 0.8, "flops": 0},
                           {"op": "no_such_op", "case": "7", "shape": "7", "dtype": "f32", "backend": "b",
                            "status": "ok", "median_ms": 0.01, "bytes": 56, "gbps": 0.0056}])
    html = render_report([Run(tmp_path, rows, {})])
    assert "id='roofline-chart'" not in html  # an op this install cannot count gets no flops, so no point
    assert "Left out (0 flops: they only move data): copy, no_such_op." in html
    assert roofline_points(rows.assign(label="b")).empty


def test_op_tables_carry_error_and_noise_and_sort_keys(h200, h200_html):
    table = h200_html.split("data-op='copy'>")[1].split("</table>")[0]
    head = table.split("</thead>")[0]
    for col in ("median ms", "GB/s", "% peak", "% spec", "speedup", "CI ±%", "n", "max abs err"):
        assert head.count(f">{col}</th>") == 3, col  # under each of the three backends
    cols = [int(c) for c in re.findall(r"data-col='(\d+)'", head)]
    assert cols == list(range(3 + 3 * 8))  # every column sortable, numbered as the body's cells
    r = h200.rows[(h200.rows["op"] == "copy") & (h200.rows["case"] == "4096x4096-transposed")
                  & (h200.rows["dtype"] == "f32") & (h200.rows["backend"] == "torch")].iloc[0]
    row = next(tr for tr in table.split("<tr>") if tr.startswith("<td class='l'>4096x4096-transposed</td>")
               and "<td class='l'>f32</td>" in tr)
    assert f"data-v='{float(r.median_ms)!r}'" in row
    assert f"data-v='{float(r.samples)!r}'>{int(r.samples)}</td>" in row
    ci = float(r.ci_rel) * 100
    assert f"data-v='{ci!r}' title='stopped by {r.stopped_by}'>{ci:.2g}</td>" in row
    vec = h200_html.split("data-op='vector_add'>")[1].split("</table>")[0]
    assert "title='max rel err " in vec and ">6e-08</td>" in vec  # f32 adds: one rounding, shown


def test_every_table_is_sortable_and_filterable(h200_html):
    tables = re.findall(r"<table\b[^>]*>", h200_html)
    assert len(tables) == 1 + 1 + 5  # backends, summary, five ops (no failures on this run)
    assert all("sortable" in t for t in tables)
    # each table follows its filter box, as the script expects (box.nextElementSibling)
    assert len(re.findall(r"<input type='search' class='filter'[^>]*>\s*<table\b", h200_html)) == len(tables)
    assert h200_html.count("<thead>") == len(tables) and h200_html.count("<tbody>") == len(tables)
    assert h200_html.count("<script>") == 1 and "addEventListener('click', go)" in h200_html
    assert not re.search(r"<script[^>]*\bsrc=", h200_html)


def _gpu_rows(tmp_path: Path) -> Run:
    """Two backends' copy rows with telemetry (one row's clocks dropped) and one row profiled under ncu."""
    base = {"op": "copy", "shape": "1048576", "dtype": "f32", "status": "ok", "bytes": 8388608, "p10_ms": 0.01,
            "p90_ms": 0.012, "samples": 50, "mem_mhz_start": 3201, "mem_mhz_end": 3201, "power_w": 480.0,
            "energy_j": 0.5, "energy_source": "counter"}
    rows = [base | {"case": "1m", "backend": "nvidia", "median_ms": 0.011, "sm_mhz_start": 1980, "sm_mhz_end": 1755,
                    "sm_mhz_min": 1410, "throttle_reasons": "sw_power_cap", "clock_drop": 1,
                    "ncu_time_ms": 0.0102, "ncu_dram_bytes": 8401920, "ncu_dram_pct": 71.25,
                    "ncu_report": "profiles/copy-1m-f32-nvidia.ncu-rep"},
            base | {"case": "4m", "backend": "nvidia", "median_ms": 0.03, "sm_mhz_start": 1980, "sm_mhz_end": 1980,
                    "sm_mhz_min": 1980, "throttle_reasons": "", "clock_drop": 0},
            {"op": "copy", "case": "1m", "shape": "1048576", "dtype": "f32", "status": "ok", "backend": "numpy",
             "median_ms": 0.5, "bytes": 8388608}]
    return Run(tmp_path, normalize_rows(rows), {})


def test_telemetry_and_ncu_figures_in_the_report(tmp_path):
    page = render_report([_gpu_rows(tmp_path)])
    summary = page.split("id='summary'")[1].split("</table>")[0]
    assert ">clock drops</th>" in summary
    assert "<td class='l'>nvidia</td><td class='ok'>2</td>" in summary
    assert summary.count("<td class='slower'>1</td>") == 1
    table = page.split("data-op='copy'>")[1].split("</table>")[0]
    dropped = next(tr for tr in table.split("<tr>") if tr.startswith("<td class='l'>1m</td>"))
    assert "class='flag flag-clock-drop'" in dropped and "SM 1980-1755 MHz (min 1410), mem 3201 MHz, 480 W, 0.5 J, " \
        "throttle sw_power_cap" in dropped
    assert "<small class='ncu' title='Nsight Compute: profiles/copy-1m-f32-nvidia.ncu-rep, kernels 0.0102 ms'>" \
           "ncu 8.4 MB, 71.2% DRAM peak</small>" in dropped
    steady = next(tr for tr in table.split("<tr>") if tr.startswith("<td class='l'>4m</td>"))
    assert "flag-clock-drop'>" not in steady and "SM 1980-1980 MHz, " in steady and "ncu " not in steady
    gpu = page.split("<h2 id='gpu'>")[1].split("<h2")[0]
    tel = gpu.split("id='telemetry'")[1].split("</table>")[0]
    assert "<td class='l'>nvidia</td><td>2</td><td class='slower'>1</td><td>1410</td><td>1980</td><td>480</td>" \
           "<td class='l'>sw_power_cap</td>" in tel and "numpy" not in tel
    prof = gpu.split("id='profiles-table'")[1].split("</table>")[0]
    assert "<td>8.4</td><td>71.2</td>" in prof and "profiles/copy-1m-f32-nvidia.ncu-rep" in prof
    tables = re.findall(r"<table\b[^>]*>", page)
    assert all("sortable" in t for t in tables)
    assert len(re.findall(r"<input type='search' class='filter'[^>]*>\s*<table\b", page)) == len(tables)


def test_no_telemetry_no_gpu_section_or_column(h200_html):
    assert "id='gpu'" not in h200_html and ">clock drops</th>" not in h200_html
    assert "flag-clock-drop'>" not in h200_html and "class='ncu'" not in h200_html
def test_every_op_with_speedups_has_a_speedup_distribution(h200, h200_html):
    svgs = _svgs(h200_html)
    labelled = label_rows([h200])
    for op in set(h200.rows["op"]):
        pts = speedup_points(labelled[labelled["op"] == op])
        if pts.empty:
            assert f"speedup-{op}" not in svgs
            continue
        titles = _point_titles(svgs[f"speedup-{op}"], "oprt-sp-")
        assert len(titles) == len(pts), op  # a point per non-baseline timed row, each titled
        baseline = str(pts["baseline"].iloc[0])
        assert all(f"against {baseline}" in t and t.startswith(f"{op} ") for t in titles.values())
        assert baseline not in set(pts["backend"])


def _timed_rows(**extra):
    base = {"op": "relu", "case": "1000", "shape": "1000", "dtype": "f32", "status": "ok", "bytes": 8000,
            "gbps": 0.8, "baseline": "numpy"}
    return normalize_rows([
        base | {"backend": "numpy", "median_ms": 0.01, "speedup": 1.0, "timer": "events"},
        base | {"backend": "gpu", "median_ms": 0.004, "speedup": 2.5, "timer": "graph",
                "timer_note": "graph replay, 17 buffer sets x 0.0076 MiB > 2x L2 (0.0625 MiB)",
                "event_median_ms": 0.009, "flags": ""},
        base | {"case": "2000", "shape": "2000", "backend": "gpu", "median_ms": 0.02, "speedup": 0.5,
                "timer": "events", "timer_note": "events: graph capture failed: RuntimeError: no"},
        base | {"case": "2000", "shape": "2000", "backend": "numpy", "median_ms": 0.01, "speedup": 1.0,
                "timer": "events"},
    ] + [extra] * bool(extra))


def test_graph_timed_rows_are_marked_with_their_rotation_and_events_figure(tmp_path):
    html = render_report([Run(tmp_path, _timed_rows(), {})])
    assert html.count("<span class='flag timer-graph' title='graph replay, 17 buffer sets x 0.0076 MiB &gt; 2x L2 "
                      "(0.0625 MiB); events median 0.009 ms'>G</span>") == 1
    assert html.count("<span class='flag timer-events' title='events: graph capture failed: RuntimeError: no'>E"
                      "</span>") == 1
    assert "<code>timer=graph</code> (1 rows)" in html and "<code>timer=events</code> (1 rows)" in html
    titles = _point_titles(_svgs(html)["speedup-relu"], "oprt-sp-")
    assert sorted(titles.values()) == [
        "relu 1000 (1000) f32 on gpu: speedup 2.5 against numpy (graph-timed)",
        "relu 2000 (2000) f32 on gpu: speedup 0.5 against numpy"]


def test_an_events_run_has_no_timer_markers(tmp_path):
    rows = _timed_rows().assign(timer="events", timer_note="")
    html = render_report([Run(tmp_path, rows, {})])
    assert "timer-graph'>" not in html.split("</style>")[1] and "timer=graph" not in html


def _legend_texts(html: str, div: str) -> set[str]:
    """The texts matplotlib drew in one plot (each as a comment before its paths)."""
    svg = html.split(f"id='{div}'>")[1].split("</svg>")[0]
    return set(re.findall(r"<!-- (.*?) -->", svg))


def test_the_legends_list_only_the_peak_lines_drawn(tmp_path):
    """A backend with a measured peak and no spec peak (a CPU, a device the driver says nothing of): its charts draw
    the measured line only, and their legends name no spec line."""
    meta = {"backends": {"numpy": {"calibration": {"measured_peak_gbps": 50.0}, "spec_peak": {"gbps": None}},
                         "gpu": {"calibration": {"measured_peak_gbps": 900.0}, "spec_peak": {"gbps": None}}}}
    html = render_report([Run(tmp_path, _timed_rows(), meta)])
    bandwidth = _legend_texts(html, "bandwidth-relu")
    assert "measured peak (backend colour)" in bandwidth
    assert not any("spec" in t for t in bandwidth), bandwidth
    roofline = _legend_texts(html, "roofline-chart")
    assert "memory roof: measured peak" in roofline and "memory roof: spec peak" not in roofline
    # no peak at all: neither line is drawn nor listed
    bare = _legend_texts(render_report([Run(tmp_path, _timed_rows(), {})]), "bandwidth-relu")
    assert not any("peak" in t for t in bare), bare


def test_matmul_plots_tflops_against_flops(tmp_path):
    """matmul is compute-bound: its chart is achieved TFLOP/s against flops per call (the rows' flops and tflops),
    each backend's spec dense peak of the panel's dtype dashed; the memory-bound ops keep GB/s against bytes."""
    base = {"op": "matmul", "dtype": "bf16", "status": "ok", "baseline": "torch"}
    rows = normalize_rows([
        base | {"case": f"{n}x{n}x{n}", "shape": f"{n}x{n},{n}x{n}", "backend": b, "median_ms": ms,
                "bytes": 3 * n * n * 2, "flops": 2 * n**3, "gbps": 3 * n * n * 2 / (ms * 1e6),
                "tflops": 2 * n**3 / (ms * 1e9)}
        for n, ms in ((1024, 0.01), (4096, 0.2)) for b, ms in (("torch", ms), ("nvidia", ms * 0.9))
    ] + [{"op": "relu", "case": "1000", "shape": "1000", "dtype": "bf16", "status": "ok", "backend": "torch",
          "median_ms": 0.01, "bytes": 4000, "gbps": 0.4, "flops": 1000, "tflops": 1e-4}])
    meta = {"backends": {b: {"calibration": {"measured_peak_gbps": 3000.0}, "spec_peak": {"gbps": 4800.0},
                             "compute_peak": {"bf16": {"tflops": 989.4, "source": "spec"}}}
                         for b in ("torch", "nvidia")}}
    html = render_report([Run(tmp_path, rows, meta)])
    assert "id='bandwidth-matmul'" not in html and "id='bandwidth-relu'" in html
    texts = _legend_texts(html, "compute-matmul")
    for text in ("flops per call", "achieved TFLOP/s (10^12 flop/s)", "spec dense peak (backend colour)",
                 "matmul: achieved TFLOP/s against flops per call (a panel per dtype; hover a point)"):
        assert text in texts, text
    assert not any("GB/s" in t or "bytes" in t or "measured peak" in t for t in texts), texts
    titles = _point_titles(_svgs(html)["compute-matmul"], "oprt-pt-")
    assert len(titles) == 4 and all(" TFLOP/s, " in t and t.endswith(" flops") for t in titles.values())
    series = bandwidth_series(label_rows([Run(tmp_path, rows, meta)]).query("op == 'matmul'"), compute=True)
    for label, scale in (("torch", 1.0), ("nvidia", 0.9)):
        points = sorted((x, y) for s in series if s.label == label for x, y in zip(s.xs, s.ys))
        assert [x for x, _ in points] == [2 * 1024**3, 2 * 4096**3]
        assert [y for _, y in points] == pytest.approx([2 * 1024**3 / (0.01 * scale * 1e9),
                                                        2 * 4096**3 / (0.2 * scale * 1e9)])
