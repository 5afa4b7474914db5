"""matmul's c (out = alpha * a @ b + beta * c) through oprt-bench on numpy: the smoke and edge cases with c run
end to end and pass their check, the rows count c's read and beta's flops where beta != 0, ``--shape`` still makes
a product without c, and ``--shapes FILE`` takes c as a third shape or from ``params: {beta: ...}``."""

from __future__ import annotations

import csv
import json

from test_cli import invoke, one_error_line

from oprt_core.operators.matmul import SPEC as S


def _rows(out):
    return {row["case"]: row for row in csv.DictReader((out / "results.csv").open())}


def test_smoke_and_edge_cases_with_c_run_on_numpy(registry, tmp_path):
    rows = []
    for case_set in ("smoke", "edge"):
        out = tmp_path / case_set
        r = invoke(registry, "--ops", "matmul", "--cases", case_set, "--dtypes", "f32,bf16", "--backends", "numpy",
                   "--mode", "test", "--isolation", "none", "--format", "csv", "--out", str(out), "-q")
        assert r.exit_code == 0, r.output
        rows += list(csv.DictReader((out / "results.csv").open()))
    with_c = [c for c in S.cases("smoke") + S.cases("edge") if len(c.inputs) == 3]
    assert len(with_c) >= 6
    got = {(row["case"], row["dtype"]): row for row in rows}
    for case in with_c:
        for dtype in ("f32", "bf16"):
            row = got[(case.name, dtype)]
            assert row["status"] == "ok", row
            assert row["shape"] == case.shape_str and row["shape"].count(",") == 2
            assert int(row["bytes"]) == S.bytes_moved(case, dtype) and int(row["flops"]) == S.flops(case)
    read = next(c for c in with_c if c.name == "24x40x56-c-alpha0.5-beta-1")
    assert int(got[(read.name, "f32")]["bytes"]) == (24 * 56 + 56 * 40 + 2 * 24 * 40) * 4  # c read, out written
    assert int(got[(read.name, "f32")]["flops"]) == 2 * 24 * 40 * 56 + 2 * 24 * 40
    assert {row["status"] for row in rows} == {"ok"}


def test_shape_option_still_makes_a_product_without_c(registry, tmp_path):
    out = tmp_path / "run"
    r = invoke(registry, "--ops", "matmul", "--shape", "48x16", "--dtypes", "f32", "--backends", "numpy", "--mode",
               "test", "--isolation", "none", "--format", "csv", "--out", str(out), "-q")
    assert r.exit_code == 0, r.output
    (row,) = _rows(out).values()
    assert row["case"] == "48x48x16" and row["shape"] == "48x16,16x48" and row["status"] == "ok"


def test_shapes_file_gives_c_as_a_third_shape_or_by_beta(registry, tmp_path):
    f = tmp_path / "shapes.json"
    f.write_text(json.dumps([
        {"name": "gemm/c", "op": "matmul", "shape": [[32, 24], [24, 40], [32, 40]], "params": {"beta": 0.5},
         "layout": ["contiguous", "transposed", "transposed"]},
        {"name": "gemm/beta", "op": "matmul", "shape": "2x16x8", "params": {"beta": -1.0}},
        {"name": "gemm/plain", "op": "matmul", "shape": [[16, 8], [8, 4]]},
    ]))
    out = tmp_path / "run"
    r = invoke(registry, "--shapes", str(f), "--ops", "matmul", "--dtypes", "f16", "--backends", "numpy", "--mode",
               "test", "--isolation", "none", "--format", "csv", "--out", str(out), "-q")
    assert r.exit_code == 0, r.output
    rows = _rows(out)
    assert rows["gemm/c"]["shape"] == "32x24,24x40,32x40" and rows["gemm/c"]["status"] == "ok"
    assert rows["gemm/beta"]["shape"] == "2x16x8,2x8x16,2x16x16" and rows["gemm/beta"]["status"] == "ok"
    assert rows["gemm/plain"]["shape"] == "16x8,8x4" and rows["gemm/plain"]["status"] == "ok"
    assert json.loads(rows["gemm/c"]["params"])["beta"] == 0.5


def test_shapes_file_mistakes_about_c_are_one_line(registry, tmp_path):
    for entry, fragment in (
        ({"name": "x", "op": "matmul", "shape": [[4, 3], [3, 5]], "params": {"beta": 1.0}},
         "matmul: beta is 1.0 but c is not given"),
        ({"name": "x", "op": "matmul", "shape": [[4, 3], [3, 5], [5, 4]], "params": {"beta": 1.0}},
         "matmul: c has shape (5, 4), expected out's shape (4, 5)"),
        ({"name": "x", "op": "matmul", "shape": [[4, 3], [3, 5], [4, 5], [4, 5]]},
         "4 shapes given; matmul takes 2 or 3 inputs (a, b, optionally c)"),
    ):
        f = tmp_path / "shapes.json"
        f.write_text(json.dumps([entry]))
        r = invoke(registry, "--shapes", str(f), "--ops", "matmul", "--backends", "numpy", "--out",
                   str(tmp_path / "run"))
        assert r.exit_code == 2 and fragment in one_error_line(r), r.output
