"""e4m3 in oprt-bench: the dtype is opt-in (``--dtypes e4m3`` gives rows only for the ops that declare it, a note
names the others, a one-line error when no op of --ops takes it, ``all`` never includes it), a matmul sweep in e4m3
on numpy (the row's dtype column is e4m3, its bytes count the bf16 output), rows held to the fp8 peak, and the
baselines' refusals (torch._scaled_mm's layout and size rules, without torch too; CuPy's opt-in refusal)."""

from __future__ import annotations

import csv

import pytest
from test_cli import invoke, one_error_line

from oprt_bench.baselines import TorchBackend
from oprt_bench.peaks import roof_dtype
from oprt_bench.sweep import SweepOptions, make_plan
from oprt_core.operators import equip
from oprt_core.operators.matmul import SPEC as S
from oprt_core.operators.matmul import matmul_case
from oprt_core.operators.matmul.baselines import scaled_mm_refusal

try:
    import torch  # noqa: F401

    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


def test_all_dtypes_leave_e4m3_out(registry):
    plan = make_plan(registry, SweepOptions(ops="copy,matmul", backends="numpy", baseline="none", mode="test",
                                            cases="smoke"))
    assert plan.dtypes == ["f32", "f16", "bf16"]
    assert {d for _, _, d in plan.jobs()} == {"f32", "f16", "bf16"}


def test_e4m3_rows_only_for_the_ops_that_declare_it(registry):
    plan = make_plan(registry, SweepOptions(ops="copy,matmul", dtypes="bf16,e4m3", backends="numpy", baseline="none",
                                            mode="test", cases="smoke"))
    jobs = [(s.name, d) for s, _, d in plan.jobs()]
    n_copy, n_matmul = len(plan.cases["copy"]), len(plan.cases["matmul"])
    assert jobs.count(("copy", "bf16")) == n_copy and ("copy", "e4m3") not in jobs
    assert jobs.count(("matmul", "e4m3")) == jobs.count(("matmul", "bf16")) == n_matmul
    assert plan.n_rows == len(jobs) * len(plan.backends) == n_copy + 2 * n_matmul
    notes = [n for n in plan.notes if "e4m3" in n]
    assert notes == ["dtype e4m3 is opt-in: no e4m3 rows for copy, which do not declare it"]  # said once


def test_e4m3_alone_for_ops_that_do_not_take_it_is_one_line_error(registry):
    r = invoke(registry, "--ops", "copy,softmax", "--dtypes", "e4m3", "--backends", "numpy", "--mode", "test")
    assert r.exit_code != 0
    assert one_error_line(r) == ("oprt-bench: error: --dtypes e4m3: no op of --ops takes it (copy, softmax); e4m3 is "
                                 "opt-in, for the ops that declare it: matmul")


def test_unknown_dtype_names_e4m3_among_the_choices(registry):
    r = invoke(registry, "--ops", "matmul", "--dtypes", "e5m2", "--backends", "numpy", "--mode", "test")
    assert r.exit_code != 0 and "e4m3" in one_error_line(r)


def test_matmul_sweep_in_e4m3_on_numpy(registry, tmp_path):
    out = tmp_path / "run"
    r = invoke(registry, "--ops", "matmul", "--cases", "smoke", "--dtypes", "fp8", "--backends", "numpy", "--mode",
               "test", "--isolation", "none", "--format", "csv", "--out", str(out), "-q")
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == len(S.cases("smoke")) and {row["dtype"] for row in rows} == {"e4m3"}
    assert {row["status"] for row in rows} == {"ok"}
    by_case = {row["case"]: row for row in rows}
    case = S.cases("smoke")[0]
    assert int(by_case[case.name]["bytes"]) == S.bytes_moved(case, "e4m3") == 64 * 32 + 32 * 48 + 2 * 64 * 48


def test_e4m3_rows_are_held_to_the_fp8_peak():
    assert roof_dtype("e4m3") == "fp8" and roof_dtype("e4m3", {"allow_tf32": True}) == "fp8"
    assert roof_dtype("bf16") == "bf16" and roof_dtype("f32", {"allow_tf32": True}) == "tf32"


@pytest.mark.parametrize(("case", "fragment"), [
    (matmul_case(64, 64, 64), "needs a row-major a and a column-major b"),
    (matmul_case(64, 64, 64, a_layout="transposed", b_layout="transposed"), "this case has a transposed and b"),
    (matmul_case(64, 40, 64, b_layout="transposed"), "K and N multiples of 16; this case has K = 64, N = 40"),
    (matmul_case(64, 48, 24, b_layout="transposed"), "K = 24"),
    (matmul_case(8, 16, 32, batch=2, b_layout="transposed"), "2-D operands only"),
    (matmul_case(16, 16, 16, b_layout="transposed", beta=1.0), "no beta * c term"),
])
def test_scaled_mm_refusals(case, fragment):
    why = scaled_mm_refusal(case)
    assert why is not None and fragment in why


def test_scaled_mm_takes_the_model_gemms_and_the_column_major_squares():
    for case in S.cases("models"):
        assert scaled_mm_refusal(case) is None, case
    squares = [c for c in S.cases("large") if c.inputs[1].layout == "transposed"]
    assert len(squares) == 2 and all(scaled_mm_refusal(c) is None for c in squares)
    edges = [c for c in S.cases("edge") if scaled_mm_refusal(c) is None]
    assert {c.name for c in edges} == {"17x32x48-b_transposed-alpha0.75", "1x16x16-b_transposed"}
    assert scaled_mm_refusal(matmul_case(5, 16, 32, b_layout="transposed")) is None  # M needs no multiple of 16


@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed")
def test_torch_cpu_refuses_e4m3_matmul_and_other_ops():
    be = equip(TorchBackend(device="cpu"))
    assert be.availability().ok
    sup = be.supports("matmul", "e4m3", matmul_case(16, 16, 16, b_layout="transposed"))
    assert not sup.ok and ("CUDA devices with fp8 tensor cores only" in sup.reason or "no torch._scaled_mm"
                           in sup.reason)
    sup = be.supports("copy", "e4m3")
    assert not sup.ok and "torch backend does not run e4m3" in sup.reason


def test_cupy_refuses_opt_in_dtypes_with_a_reason():
    from oprt_bench.baselines import CupyBackend

    be = equip(CupyBackend())
    sup = be.supports("copy", "e4m3")
    assert not sup.ok and "cupy backend does not run e4m3 (an opt-in dtype" in sup.reason
    assert not be.supports("matmul", "e4m3").ok


def test_torch_compile_and_liger_refuse_e4m3_matmul_with_a_reason():
    from oprt_bench.baselines import LigerBackend, TorchCompileBackend

    sup = equip(TorchCompileBackend(device="cpu")).supports("matmul", "e4m3")
    assert not sup.ok and "has no implementation of 'matmul'" in sup.reason
    sup = equip(LigerBackend()).supports("matmul", "e4m3")
    assert not sup.ok and "no matmul kernel" in sup.reason
