"""scripts/gpu-suite.sh on the host, its phases that need no GPU: an unknown phase is refused, and the variants phase
runs scripts/env_variants.sh once per entry of OPRT_SUITE_VARIANTS (here over the numpy backend), each variant into
its own run folder, a malformed entry named in the summary; scripts/perf_table.py --variants then lays the runs side
by side."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "scripts" / "gpu-suite.sh"


def _suite(tmp_path, *phases, **env):
    if shutil.which("oprt-bench", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("oprt-bench is not installed beside this Python")
    full = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", **env}
    return subprocess.run(["bash", str(SUITE), str(tmp_path / "out"), *phases], capture_output=True, text=True,
                          env=full, timeout=300)


def test_unknown_phase_is_refused(tmp_path):
    run = _suite(tmp_path, "variants", "benchh")
    assert run.returncode == 2
    assert "unknown phase 'benchh'" in run.stderr


def test_variants_phase_runs_each_variant_into_its_own_folder(tmp_path):
    bench = "--ops copy --backends numpy --shape 1000 --dtypes f32 --baseline none --isolation none"
    run = _suite(tmp_path, "variants", OPRT_SUITE_VARIANTS=f"cp@-;OPRT_TEST_SWITCH=1 OPRT_TEST_OTHER=2@{bench}|bad@x")
    assert run.returncode == 0, run.stdout + run.stderr
    out = tmp_path / "out"
    assert (out / "variants-cp" / "variants.txt").read_text().splitlines() == [
        "v1: -", "v2: OPRT_TEST_SWITCH=1 OPRT_TEST_OTHER=2"]
    for v in ("v1", "v2"):
        rows = list(csv.DictReader((out / "variants-cp" / v / "results.csv").open()))
        assert [(r["op"], r["backend"], r["status"]) for r in rows] == [("copy", "numpy", "ok")]
    summary = (out / "summary.txt").read_text()
    assert "variants-cp: exit 0" in summary
    assert "variants: 'bad@x' is not NAME@VARIANT;...@OPRT-BENCH-ARGS" in summary

    # the variants side by side (scripts/perf_table.py --variants): a column each, its cell the CSV's % of peak
    table = subprocess.run([sys.executable, str(ROOT / "scripts" / "perf_table.py"), "--variants",
                            str(out / "variants-cp"), "--backend", "numpy"], capture_output=True, text=True, timeout=60)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert "| op | case | dtype | v1: - | v2: OPRT_TEST_SWITCH=1 OPRT_TEST_OTHER=2 |" in lines
    cells = next(line for line in lines if line.startswith("| copy | 1000 | f32 |")).strip("|").split("|")
    for v, cell in zip(("v1", "v2"), cells[3:]):
        row = next(csv.DictReader((out / "variants-cp" / v / "results.csv").open()))
        assert cell.strip().startswith(f"{float(row['pct_of_peak']):.1f}% "), (v, cell)


def test_verify_phase_shards_the_tests_sweeps_and_tabulates(tmp_path):
    """The verify phase on the host: the collected tests dealt over the shards (every test run once), the ops given
    swept (numpy, smoke cases) and one table; a failing test makes the table say FAILED."""
    tests = ROOT / "tests" / "oprt_bench" / "test_touched.py"
    env = dict(OPRT_SUITE_PACKAGES="none", OPRT_VERIFY_TESTS=str(tests), OPRT_VERIFY_SHARDS="3",
               OPRT_VERIFY_OPS="copy", OPRT_VERIFY_BACKENDS="numpy", OPRT_VERIFY_CASES="smoke",
               OPRT_DISABLE_PLUGIN_AUTOLOAD="1", OPRT_PLUGINS="numpy")
    run = _suite(tmp_path, "verify", **env)
    assert run.returncode == 0, run.stdout + run.stderr
    out = tmp_path / "out"
    shards = sorted(out.glob("verify-shard-*.args"))
    ids = [line for f in shards for line in f.read_text().splitlines()]
    assert len(shards) == 3 and len(ids) == len(set(ids)) >= 5  # each collected test in exactly one shard
    table = (out / "verify-summary.log").read_text()
    assert f"| all | {len(ids)} | {len(ids)} | 0 | 0 | 0 |" in table, table
    assert "| copy | numpy |" in table and table.rstrip().endswith("verify: passed"), table

    bad = tmp_path / "bad"
    bad.mkdir()
    failing = ROOT / "tests" / "oprt_bench" / "verify_probe_failing.py"
    failing.write_text("def test_fails():\n    assert 1 == 2\n\n\ndef test_passes():\n    assert True\n")
    try:
        run = _suite(bad, "verify", **{**env, "OPRT_VERIFY_TESTS": str(failing), "OPRT_VERIFY_OPS": "none"})
    finally:
        failing.unlink()
    table = (bad / "out" / "verify-summary.log").read_text()
    assert "| all | 2 | 1 | 1 | 0 | 0 |" in table and table.rstrip().endswith("verify: FAILED"), table
