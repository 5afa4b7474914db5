"""oprt-bench merge: runs made separately become one run folder with each source's provenance."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from oprt_bench.cli import cli
from oprt_bench.compare import judge
from oprt_bench.results import load_run


def _variant(src: Path, dst: Path, backend: str, host: str, scale: float = 1.0, status: str = "complete") -> Path:
    """A copy of the run ``src`` whose rows belong to ``backend`` on ``host`` (times scaled by ``scale``)."""
    dst.mkdir(parents=True)
    rows = pd.read_csv(src / "results.csv", keep_default_na=False, dtype=str)
    rows["backend"] = backend
    for col in ("median_ms", "p10_ms", "p90_ms", "min_ms"):
        rows[col] = [f"{float(v) * scale:.9g}" if v else v for v in rows[col]]
    rows.to_csv(dst / "results.csv", index=False)
    meta = json.loads((src / "run.json").read_text())
    meta["host"]["hostname"] = host
    meta["status"] = status
    meta["backends"] = {backend: meta["backends"]["numpy"]}
    (dst / "run.json").write_text(json.dumps(meta))
    return dst


def _merge(*args: str):
    return CliRunner().invoke(cli, ["merge", *args])


def test_two_hosts_become_one_run(smoke_run, tmp_path):
    a = _variant(smoke_run, tmp_path / "a", "nvidia", "h200-host")
    b = _variant(smoke_run, tmp_path / "b", "metax", "metax-host", scale=1.5)
    out = tmp_path / "merged"
    n = len(load_run(smoke_run).rows)
    r = _merge(str(a), str(b), "--out", str(out))
    assert r.exit_code == 0, r.output
    assert f"{2 * n} rows ({2 * n} ok) from 2 runs" in r.output
    merged = load_run(out)
    assert len(merged.rows) == 2 * n and set(merged.rows["backend"]) == {"nvidia", "metax"}
    meta = merged.meta
    assert meta["merged"] is True and meta["status"] == "complete"
    assert [s["name"] for s in meta["sources"]] == ["h200-host", "metax-host"]
    assert [s["rows"] for s in meta["sources"]] == [n, n]
    assert meta["backends"]["nvidia"]["source"] == str(a) and meta["backends"]["metax"]["source"] == str(b)
    assert meta["plan"]["backends"] == ["metax", "nvidia"] and meta["plan"]["dtypes"] == ["bf16", "f16", "f32"]
    assert meta["plan"]["mode"] == "all" and meta["plan"]["timing"]["cold"] is True
    # every row as measured: metax's times are its run's
    metax = merged.rows[merged.rows["backend"] == "metax"].set_index(["op", "case", "dtype"])["median_ms"]
    source = load_run(b).rows.set_index(["op", "case", "dtype"])["median_ms"]
    assert metax.sort_index().equals(source.sort_index())
    assert (out / "report.html").is_file() and (out / "results.json").is_file()
    # the measured compute roof over both sources: the fastest matmul rows are nvidia's (metax's took 1.5x as long)
    calibration = meta["compute_calibration"]
    assert calibration and {m["backend"] for per in calibration.values() for m in per.values()} == {"nvidia"}
    # compare reads the merged run as any run: against one source, its rows are unchanged (same, or too noisy to
    # judge at 5%: the ratio of each pair is 1), the others added
    result = judge(load_run(a), merged, 0.05, {"noisy"})
    verdicts = result.table.groupby("backend")["verdict"].agg(set).to_dict()
    assert verdicts["nvidia"] <= {"same", "noisy"} and verdicts["metax"] == {"added"}
    assert (result.table[result.table["backend"] == "nvidia"]["ratio"] == 1.0).all()
    assert result.regressions == 0 and not result.blocking


def test_a_row_in_two_runs_is_refused_unless_told_which(smoke_run, tmp_path):
    a = _variant(smoke_run, tmp_path / "a", "torch", "host-a")
    b = _variant(smoke_run, tmp_path / "b", "torch", "host-b", scale=2.0)
    n = len(load_run(smoke_run).rows)
    r = _merge(str(a), str(b), "--out", str(tmp_path / "m"))
    assert r.exit_code == 2 and "is in" in r.output and "--on-duplicate" in r.output
    assert not (tmp_path / "m").exists()
    times = {}
    for choice in ("first", "last"):
        out = tmp_path / choice
        assert _merge(str(a), str(b), "--out", str(out), "--on-duplicate", choice).exit_code == 0
        rows = load_run(out).rows
        assert len(rows) == n
        times[choice] = rows["median_ms"].sum()
    assert times["last"] == pytest.approx(2 * times["first"], rel=1e-6)
    out = tmp_path / "renamed"
    assert _merge(str(a), str(b), "--out", str(out), "--on-duplicate", "rename").exit_code == 0
    merged = load_run(out)
    assert set(merged.rows["backend"]) == {"torch@host-a", "torch@host-b"} and len(merged.rows) == 2 * n
    assert set(merged.meta["backends"]) == {"torch@host-a", "torch@host-b"}


def test_an_unfinished_source_makes_the_merged_run_incomplete(smoke_run, tmp_path):
    a = _variant(smoke_run, tmp_path / "a", "nvidia", "h")
    b = _variant(smoke_run, tmp_path / "b", "metax", "h", status="interrupted (SIGINT)")
    out = tmp_path / "m"
    assert _merge(str(a), str(b), "--out", str(out)).exit_code == 0
    status = json.loads((out / "run.json").read_text())["status"]
    assert status.startswith("incomplete") and "interrupted (SIGINT)" in status


def test_bad_calls_are_one_line_errors(smoke_run, tmp_path):
    a = _variant(smoke_run, tmp_path / "a", "nvidia", "h")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("keep me")
    (tmp_path / "empty").mkdir()
    cases = [
        ([str(a), "--out", str(tmp_path / "m")], "two or more run folders"),
        ([str(a), str(a), "--out", str(tmp_path / "m")], "given twice"),
        ([str(a), str(tmp_path / "empty"), "--out", str(tmp_path / "m")], "empty"),
        ([str(a), str(smoke_run), "--out", str(tmp_path / "full")], "not empty"),
    ]
    for args, words in cases:
        r = _merge(*args)
        assert r.exit_code == 2, (args, r.output)
        assert words in r.output, (args, r.output)
        assert len(r.output.strip().splitlines()) == 1, r.output
    assert (tmp_path / "full" / "x").read_text() == "keep me"
    assert not (tmp_path / "m").exists()
    shutil.rmtree(tmp_path / "empty")
