"""report.html opened in headless Chromium: tables and SVG plots render, no console message, nothing fetched; its
script sorts and filters the tables."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from bench_helpers import WrongBackend, builtin_ops, make_registry
from click.testing import CliRunner

from oprt_bench.cli import cli

_CANDIDATES = (os.environ.get("CHROMIUM", ""), "/usr/bin/chromium", shutil.which("chromium") or "",
               shutil.which("chromium-browser") or "")
CHROMIUM = next((p for p in _CANDIDATES if p and Path(p).exists()), None)

H200 = Path(__file__).resolve().parents[2] / "results" / "h200" / "default"

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")


def _chromium(tmp_path: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
            "--disable-default-apps", "--mute-audio", f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr", "--v=0", "--window-size=1400,3000", *extra, url]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def _open(tmp_path: Path, report: Path) -> str:
    proc = _chromium(tmp_path, report.resolve().as_uri(), "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console
    return proc.stdout


def _check_rendered(tmp_path: Path, report: Path) -> None:
    shot = tmp_path / "shot.png"
    proc = _chromium(tmp_path, report.resolve().as_uri(), f"--screenshot={shot}")
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    from PIL import Image

    img = Image.open(shot).convert("L")
    dark = sum(img.histogram()[:128])
    assert dark > 5000  # text, table rules and plot lines drawn, not a blank page


def test_smoke_report_renders(smoke_run, tmp_path):
    dom = _open(tmp_path, smoke_run / "report.html")
    assert len(re.findall(r"<table class=\"op sortable\"", dom)) == len(builtin_ops())  # one per built-in op
    svgs = re.findall(r"<svg\b.*?</svg>", dom, flags=re.S)
    assert len(svgs) == len(builtin_ops()) + 1 and all("<path" in s for s in svgs)  # each op's GB/s, the roofline
    assert re.search(r"<th data-col=\"3\" [^>]*class=\"sort\"[^>]*>median ms</th>", dom)  # the script ran
    assert 'id="summary"' in dom and "Environment" in dom and 'id="roofline-chart"' in dom
    _check_rendered(tmp_path, smoke_run / "report.html")


# Run after the report's own script: sort the copy table by torch's median (a click on its header, twice),
# filter it, and write what the page shows into <pre id="probe"> for --dump-dom to carry out.
_PROBE = """<script>
(function(){
const t=document.querySelector('table[data-op="copy"]');
const rows=()=>Array.from(t.tBodies[0].rows).filter(r=>!r.hidden);
const first=()=>rows()[0].cells[0].textContent+' '+rows()[0].cells[2].textContent;
const medians=()=>rows().map(r=>r.cells[3].dataset.v);
const out={before:first(),all:t.tBodies[0].rows.length};
const th=t.tHead.querySelector('th[data-col="3"]');
th.click();out.asc=first();out.asc_keys=medians();out.asc_dir=th.dataset.dir;
th.click();out.desc=first();out.desc_keys=medians();out.desc_dir=th.dataset.dir;
const box=t.previousElementSibling;box.value='Transposed  BF16';box.dispatchEvent(new Event('input'));
out.filtered=rows().map(r=>r.cells[0].textContent+' '+r.cells[2].textContent);
box.value='';box.dispatchEvent(new Event('input'));out.cleared=rows().length;
const pre=document.createElement('pre');pre.id='probe';pre.textContent=JSON.stringify(out);
document.body.appendChild(pre);
})();
</script>"""


def test_h200_report_sorts_filters_and_titles_points(tmp_path):
    """The committed H200 run's report in Chromium: a header click sorts the copy table (ascending, then
    descending), the filter box hides the rows that do not match, and the plots' points carry hover titles."""
    import json

    report = tmp_path / "h200.html"
    r = CliRunner().invoke(cli, ["report", str(H200), "--out", str(report)])
    assert r.exit_code == 0, r.output
    page = report.read_text()
    assert page.count("</body>") == 1
    (tmp_path / "probe.html").write_text(page.replace("</body>", _PROBE + "</body>"))
    dom = _open(tmp_path, tmp_path / "probe.html")
    probe = json.loads(html.unescape(re.search(r'<pre id="probe">(.*?)</pre>', dom, flags=re.S).group(1)))
    assert probe["before"] == "1048576 f32" and probe["all"] == 12
    # torch's copy medians: 1048576 f16 is the fastest row, 4096x4096-transposed f32 the slowest
    assert probe["asc"] == "1048576 f16" and probe["asc_dir"] == "asc"
    assert probe["desc"] == "4096x4096-transposed f32" and probe["desc_dir"] == "desc"
    asc = [float(v) for v in probe["asc_keys"]]
    assert len(asc) == 12 and asc == sorted(asc) and [float(v) for v in probe["desc_keys"]] == asc[::-1]
    assert probe["filtered"] == ["4096x4096-transposed bf16"] and probe["cleared"] == 12
    titles = re.findall(r"<title>([^<]*)</title>", dom)
    assert "copy 4096x4096-transposed (4096x4096) f32 on torch: median 0.1244 ms, 1079 GB/s, 134217728 bytes" in titles
    # GB/s plot and roofline: 18 rows x 3 backends; the speedup plot: the 18 rows of the 2 backends beside torch
    assert sum(t.startswith("softmax ") for t in titles) == 2 * 18 * 3 + 18 * 2
    assert sum(t.startswith("softmax ") and t.endswith(" against torch") for t in titles) == 18 * 2


def test_failures_report_renders(tmp_path):
    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["--no-calibrate", "--ops", "copy,relu", "--backends", "wrong", "--dtypes", "f32",
                                 "--cases", "smoke", "--time-budget", "0.01", "--out", str(out), "-q"],
                           obj={"registry": make_registry(WrongBackend(wrong="relu", broken="copy"))})
    assert r.exit_code == 1
    dom = _open(tmp_path, out / "report.html")
    assert 'id="failures-table"' in dom and "kernel launch failed: test double" in dom
    assert "<svg" in dom


def test_telemetry_report_renders(tmp_path):
    """A run with telemetry and an ncu profile: the GPU section, the clock-drop marker and the ncu line render."""
    import csv

    from oprt_bench.results import COLUMNS

    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["--no-calibrate", "--ops", "copy", "--backends", "numpy", "--dtypes", "f32",
                                 "--cases", "smoke", "--time-budget", "0.01", "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    rows[0].update(sm_mhz_start="1980", sm_mhz_end="1500", sm_mhz_min="1500", mem_mhz_start="3201", power_w="500.0",
                   clock_drop="1", ncu_dram_bytes="8000000", ncu_dram_pct="70.0", ncu_time_ms="0.01",
                   ncu_report="profiles/x.ncu-rep")
    with open(out / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    r = CliRunner().invoke(cli, ["report", str(out)])
    assert r.exit_code == 0, r.output
    dom = _open(tmp_path, out / "report.html")
    assert 'id="gpu"' in dom and 'id="profiles-table"' in dom and "flag-clock-drop" in dom and "ncu 8.0 MB" in dom
    _check_rendered(tmp_path, out / "report.html")
