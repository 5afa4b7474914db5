"""Files that are not runs (wrong path, wrong JSON shape, not UTF-8) are one-line usage errors, never a green gate."""

from __future__ import annotations

import shutil

import pytest
from test_cli import invoke, one_error_line

from oprt_bench.cli import cli


def _run_cli(*args):
    from click.testing import CliRunner

    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def not_a_run(tmp_path):
    p = tmp_path / "hostname"
    p.write_text("myhost\n")
    return p


def test_compare_refuses_a_file_that_is_not_a_run(not_a_run):
    r = _run_cli("compare", str(not_a_run), str(not_a_run), "--fail-on-regression")
    assert r.exit_code == 2, r.output
    assert "op, case, dtype, backend, status" in one_error_line(r)


def test_report_refuses_a_file_that_is_not_a_run(not_a_run, tmp_path):
    r = _run_cli("report", str(not_a_run), "--out", str(tmp_path / "rep"))
    assert r.exit_code == 2, r.output
    one_error_line(r)


@pytest.mark.parametrize("doc", ['[1, 2]', '{"rows": [{"x": 1}]}', '{"rows": 3}', '"text"'])
def test_report_refuses_results_json_of_the_wrong_shape(tmp_path, doc):
    p = tmp_path / "results.json"
    p.write_text(doc)
    r = _run_cli("report", str(p), "--out", str(tmp_path / "rep"))
    assert r.exit_code == 2, r.output
    one_error_line(r)


def _copy_run(smoke_run, tmp_path):
    dst = tmp_path / "run"
    shutil.copytree(smoke_run, dst)
    return dst


def test_run_json_not_an_object_is_a_usage_error(registry, smoke_run, tmp_path):
    run = _copy_run(smoke_run, tmp_path)
    (run / "run.json").write_text("[1, 2]")
    r = invoke(registry, "--resume", str(run))
    assert r.exit_code == 2, r.output
    assert "run.json" in one_error_line(r)
    r = _run_cli("report", str(run), "--out", str(tmp_path / "rep"))
    assert r.exit_code == 2, r.output
    assert "run.json" in one_error_line(r)


def test_results_csv_not_utf8_is_a_usage_error(registry, smoke_run, tmp_path):
    run = _copy_run(smoke_run, tmp_path)
    with (run / "results.csv").open("ab") as f:
        f.write(b"copy,\xff\xfe,f32\n")
    r = invoke(registry, "--resume", str(run))
    assert r.exit_code == 2, r.output
    assert "UTF-8" in one_error_line(r)
    r = _run_cli("report", str(run), "--out", str(tmp_path / "rep"))
    assert r.exit_code == 2, r.output
    one_error_line(r)
