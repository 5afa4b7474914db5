"""report.html opened in headless Chromium: tables and SVG plots render, no console message, nothing fetched."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from bench_helpers import WrongBackend, make_registry
from click.testing import CliRunner

from oprt_bench.cli import cli

_CANDIDATES = ("/usr/bin/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or "")
CHROMIUM = next((p for p in _CANDIDATES if p and Path(p).exists()), None)

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
    assert len(re.findall(r"<table class=\"op\"", dom)) == 5
    svgs = re.findall(r"<svg\b.*?</svg>", dom, flags=re.S)
    assert len(svgs) == 5 and all("<path" in s for s in svgs)
    assert "<th>median ms</th>" in dom and "bandwidth against size" not in dom.split("<svg")[0]
    assert 'id="summary"' in dom and "Environment" in dom
    _check_rendered(tmp_path, smoke_run / "report.html")


def test_failures_report_renders(tmp_path):
    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["--no-calibrate", "--ops", "copy,relu", "--backends", "wrong", "--dtypes", "f32",
                                 "--cases", "smoke", "--time-budget", "0.01", "--out", str(out), "-q"],
                           obj={"registry": make_registry(WrongBackend())})
    assert r.exit_code == 1
    dom = _open(tmp_path, out / "report.html")
    assert 'id="failures-table"' in dom and "kernel launch failed: test double" in dom
    assert "<svg" in dom
