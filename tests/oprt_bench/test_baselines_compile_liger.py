"""The torch-compile and liger baseline backends, and the compile_s column.

Without torch, triton or Liger-Kernel installed (this machine), availability is checked against stand-in modules
in ``sys.modules``, Liger's allocation into oprt's output against a stand-in Liger op module on numpy-backed
tensors; the CPU compile sweep needs torch and skips with the reason without it; the ``gpu`` tests run both
backends' sweeps where torch sees a CUDA device.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import types
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from baseline_helpers import (
    HAVE_TORCH,
    NpTensor,
    fake_liger_ops,
    fake_torch,
    install_modules,
    np_torch,
    run_and_check,
)
from bench_helpers import make_registry

from oprt_bench.baselines import liger_plugin, plugin, torch_compile_plugin
from oprt_bench.report import render_report
from oprt_bench.results import COLUMNS, SCHEMA_VERSION, RowWriter, load_run
from oprt_bench.sweep import SweepOptions, make_plan, run_sweep
from oprt_bench.table import build_table, render
from oprt_core import operators
from oprt_core.baselines.liger_backend import MAX_ROW, AllocInto, LigerBackend, row_refusal
from oprt_core.baselines.torch_compile_backend import (
    RECOMPILE_LIMIT,
    CompiledLauncher,
    TorchCompileBackend,
    _step,
    raise_recompile_limits,
)
from oprt_core.numpy_backend import NumpyBackend
from oprt_core.operators import equip
from oprt_core.operators.rms_norm import norm_case
from oprt_core.operators.silu_mul import silu_mul_case
from oprt_core.plugins import Registry, get_plugin_manager

_BENCH_SRC = Path(__file__).resolve().parents[2] / "oprt_bench" / "src"


# -- stand-ins for torch, triton and Liger ---------------------------------------------------------------------

@pytest.fixture
def modules(monkeypatch):
    """Install stand-in modules (name -> module, or None for "not installed") for one test."""
    return lambda **mods: install_modules(monkeypatch, **mods)


# -- registration ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("module", "names"), [(torch_compile_plugin, ["torch-compile"]), (liger_plugin, ["liger"]),
                                               (plugin, ["torch", "cupy", "torch-compile", "liger"])])
def test_plugins_register(module, names):
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(module, "baselines-under-test")
    reg = Registry(pm)
    for name in names:
        assert reg.get_backend(name).name == name
    assert not pm.load_errors


def test_entry_points_are_declared():
    text = (_BENCH_SRC.parent / "pyproject.toml").read_text()
    assert 'torch-compile = "oprt_bench.baselines.torch_compile_plugin"' in text
    assert 'liger = "oprt_bench.baselines.liger_plugin"' in text
    assert 'liger = ["liger-kernel"]' in text  # the optional extra


def test_registration_imports_neither_torch_nor_liger():
    code = ("import sys\n"
            "from oprt_bench.baselines import torch_compile_plugin, liger_plugin\n"
            "got = []\n"
            "torch_compile_plugin.oprt_register_backends(got.append)\n"
            "liger_plugin.oprt_register_backends(got.append)\n"
            "assert [b.name for b in got] == ['torch-compile', 'liger'], got\n"
            "loaded = [m for m in ('torch', 'triton', 'liger_kernel') if m in sys.modules]\n"
            "assert not loaded, loaded\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(_BENCH_SRC), os.environ.get("PYTHONPATH"))
                                                      if p))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr


# -- availability ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", [TorchCompileBackend, LigerBackend])
def test_missing_torch_is_the_reason(modules, kind):
    modules(torch=None)
    avail = kind().availability()
    assert not avail.ok and "torch not installed" in avail.reason


@pytest.mark.parametrize("kind", [TorchCompileBackend, LigerBackend])
def test_no_gpu_is_the_reason(modules, kind):
    modules(torch=fake_torch(gpu=False))
    avail = kind().availability()
    assert not avail.ok and "torch 9.9.0 sees no CUDA device (CUDA 13.0 build)" == avail.reason


def test_torch_compile_needs_triton(modules):
    modules(torch=fake_torch(gpu=True), triton=None)
    avail = TorchCompileBackend().availability()
    assert not avail.ok
    assert "triton not installed" in avail.reason and "Triton kernels for CUDA" in avail.reason


def test_torch_compile_needs_torch_compile(modules):
    modules(torch=fake_torch(gpu=True, with_compile=False), triton=types.ModuleType("triton"))
    avail = TorchCompileBackend().availability()
    assert not avail.ok and avail.reason == "torch 9.9.0 has no torch.compile (torch >= 2.0)"


def test_torch_compile_available_raises_the_recompile_limit(modules):
    torch = fake_torch(gpu=True, recompile_limit=8, accumulated_recompile_limit=256)
    triton = types.ModuleType("triton")
    triton.__version__ = "3.9.0"
    modules(torch=torch, torch___dynamo=torch._dynamo, triton=triton)
    be = TorchCompileBackend()
    avail = be.availability()
    assert avail.ok, avail.reason
    assert avail.device == "Fake H200" and "triton 3.9.0" in avail.reason and "torch.compile" in avail.reason
    assert torch._dynamo.config.recompile_limit == RECOMPILE_LIMIT
    assert torch._dynamo.config.accumulated_recompile_limit == RECOMPILE_LIMIT
    assert be.recompile_limits == {"recompile_limit": RECOMPILE_LIMIT, "accumulated_recompile_limit": RECOMPILE_LIMIT}


def test_liger_missing_is_the_reason(modules):
    modules(torch=fake_torch(gpu=True), liger_kernel=None, liger_kernel__ops=None)
    avail = LigerBackend().availability()
    assert not avail.ok and avail.reason.startswith("liger-kernel not installed"), avail.reason


def test_liger_on_cpu_is_unavailable(modules):
    modules(torch=fake_torch(gpu=False))
    avail = LigerBackend(device="cpu").availability()
    assert not avail.ok and "CUDA devices only" in avail.reason


def test_liger_available_and_what_it_refuses(modules):
    modules(torch=fake_torch(gpu=True), liger_kernel=types.ModuleType("liger_kernel"),
            liger_kernel__ops=fake_liger_ops("LigerRMSNormFunction", "LigerLayerNormFunction",
                                              "LigerSiLUMulFunction"))  # a Liger without softmax
    be = equip(LigerBackend())
    avail = be.availability()
    assert avail.ok and avail.device == "Fake H200" and avail.reason.startswith("liger-kernel ")
    assert be.supports("rms_norm", "bf16", norm_case("rms_norm", (4, 8192)))
    assert be.supports("silu_mul", "f16", silu_mul_case((3, 5, 7), "step2"))  # Liger makes it contiguous itself
    wide = be.supports("layer_norm", "f32", norm_case("layer_norm", (2, MAX_ROW + 1)))
    assert not wide and f"n = {MAX_ROW + 1}" in wide.reason and "one Triton block" in wide.reason
    assert be.supports("layer_norm", "f32", norm_case("layer_norm", (2, MAX_ROW)))
    soft = be.supports("softmax", "f32")
    assert not soft and "has no LigerSoftmaxFunction" in soft.reason
    copy = be.supports("copy", "f32")
    assert not copy and "Liger-Kernel has no copy kernel" in copy.reason
    fused = be.supports("add_rms_norm", "bf16")  # a Liger without the fused add-rms_norm
    assert not fused and "has no LigerFusedAddRMSNormFunction" in fused.reason
    rope = be.supports("rope", "bf16")
    assert not rope and "LigerRopeFunction" in rope.reason and "no gptj" in rope.reason
    assert not be.supports("rms_norm", "f64")


def test_row_refusal():
    """One Triton block of at most MAX_ROW elements a row; each op's own refusals are in its folder's tests."""
    assert row_refusal("rms_norm", (4, 4096), {"eps": 1e-6}) is None
    assert f"at most {MAX_ROW}" in row_refusal("rms_norm", (4, MAX_ROW + 1), {"eps": 1e-6})


# -- the recompile limit -----------------------------------------------------------------------------------------

def test_raise_recompile_limits_old_and_new_names():
    old = SimpleNamespace(cache_size_limit=8, accumulated_cache_size_limit=256)
    assert raise_recompile_limits(old) == {"cache_size_limit": RECOMPILE_LIMIT,
                                           "accumulated_cache_size_limit": RECOMPILE_LIMIT}
    assert old.cache_size_limit == RECOMPILE_LIMIT
    both = SimpleNamespace(recompile_limit=8, cache_size_limit=8, accumulated_recompile_limit=100000)
    assert raise_recompile_limits(both) == {"recompile_limit": RECOMPILE_LIMIT, "cache_size_limit": RECOMPILE_LIMIT}
    assert both.accumulated_recompile_limit == 100000  # already higher: left alone
    assert raise_recompile_limits(SimpleNamespace()) == {}
    flag = SimpleNamespace(recompile_limit=True)  # not a count
    assert raise_recompile_limits(flag) == {} and flag.recompile_limit is True


def test_step_has_a_code_object_per_case_and_writes_the_output():
    class Out:
        def __init__(self) -> None:
            self.got = None

        def copy_(self, value):
            self.got = value
            return self

    fn = lambda a, b: a * 10 + b  # noqa: E731
    one, two = _step(fn), _step(fn)
    assert one.__code__ is not two.__code__ and one.__code__.co_code == two.__code__.co_code
    out = Out()
    assert one(3, 4, out) is out and out.got == 34
    pair = _step(lambda a, b: (a + b, a - b), 2)  # two outputs, each copied into its own
    o1, o2 = Out(), Out()
    assert pair(5, 3, o1, o2) == (o1, o2) and (o1.got, o2.got) == (8, 2)


# -- Liger writing into oprt's output ------------------------------------------------------------------------------

def test_alloc_into_takes_only_the_first_matching_allocation():
    out = NpTensor(np.zeros((4, 6), np.float16))
    proxy = AllocInto(np_torch(), out)
    assert proxy.get_default_dtype() is np.float32  # everything else is torch's
    other = proxy.empty((4, 6), dtype=np.float32)  # another dtype
    assert other.data_ptr() != out.data_ptr() and not proxy.used
    small = proxy.empty(4, dtype=np.float16)
    assert small.data_ptr() != out.data_ptr() and not proxy.used
    taken = proxy.empty_like(NpTensor(np.ones((24,), np.float16)))
    assert taken.data_ptr() == out.data_ptr() and taken.shape == (24,) and proxy.used
    again = proxy.empty((4, 6), dtype=np.float16)
    assert again.data_ptr() != out.data_ptr()
    strided = NpTensor(np.zeros((4, 12), np.float16)[:, ::2])
    assert AllocInto(np_torch(), strided).empty((4, 6), dtype=np.float16).data_ptr() != strided.data_ptr()
    pair = (NpTensor(np.zeros((4, 6), np.float16)), NpTensor(np.zeros((4, 6), np.float16)))
    proxy = AllocInto(np_torch(), pair)  # several outputs: handed out in order
    first, second = proxy.empty((4, 6), dtype=np.float16), proxy.empty((24,), dtype=np.float16)
    assert (first.data_ptr(), second.data_ptr()) == (pair[0].data_ptr(), pair[1].data_ptr()) and proxy.used


# -- compile_s: the launcher -> the row -> results.csv, the tables --------------------------------------------------

class Compiling(NumpyBackend):
    """numpy's kernels, each prepare saying it compiled for 1.5 s (as torch-compile's launcher does)."""

    name = "compiling"

    def prepare(self, op, inputs, output, params):
        inner = super().prepare(op, inputs, output, params)
        launcher = CompiledLauncher(lambda ins, out: inner, inputs, output, lambda a: (a.shape, a.dtype), op)
        launcher.compile_s = 1.5
        return launcher


def _sweep(mode: str) -> list:
    plan = make_plan(make_registry(Compiling()), SweepOptions(
        backends="numpy,compiling", baseline="none", ops="silu_mul,copy", dtypes="f32", cases="smoke", mode=mode,
        time_budget_s=0.01, calibrate=False, isolation="none"))
    rows: list = []
    run_sweep(plan, rows.append)
    return rows


def test_compile_s_column(tmp_path):
    assert SCHEMA_VERSION == 4 and COLUMNS[COLUMNS.index("kernel") + 1] == "compile_s"
    rows = _sweep("test")
    assert {r["backend"] for r in rows} == {"numpy", "compiling"} and {r["status"] for r in rows} == {"ok"}
    assert {r["compile_s"] for r in rows if r["backend"] == "compiling"} == {1.5}
    assert {r["compile_s"] for r in rows if r["backend"] == "numpy"} == {None}
    w = RowWriter(tmp_path / "results.csv")
    for r in rows:
        w.write(r)
    w.close()
    text = list(csv.DictReader((tmp_path / "results.csv").open()))
    assert tuple(text[0]) == COLUMNS
    assert {t["compile_s"] for t in text if t["backend"] == "compiling"} == {"1.5"}
    assert {t["compile_s"] for t in text if t["backend"] == "numpy"} == {""}
    run = load_run(tmp_path)
    assert set(run.rows.loc[run.rows["backend"] == "compiling", "compile_s"]) == {1.5}
    plain = render(build_table(rows), "plain", width=400)
    header = next(line for line in plain.splitlines() if "status" in line)
    assert header.count("compile s") == 1  # compiling's column; numpy fills none, so it has none
    assert "compile s = seconds its prepare spent compiling" in plain


def test_compile_s_in_the_html_report(tmp_path):
    rows = _sweep("bench")
    timed = [r for r in rows if r["backend"] == "compiling" and r["status"] == "ok"]
    assert timed and all(r["median_ms"] is not None for r in timed)
    w = RowWriter(tmp_path / "results.csv")
    for r in rows:
        w.write(r)
    w.close()
    html = render_report([load_run(tmp_path)])
    assert html.count("compiled in 1.5 s") == len(timed)


# -- on torch: the CPU compile sweep (needs torch), the GPU sweeps ---------------------------------------------------

SWEEP = [(spec.name, case) for spec in (*operators.specs("core"), *operators.specs("model"))
         for case in spec.cases("smoke")]


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize(("op", "case"), SWEEP, ids=[f"{op}-{c.name}" for op, c in SWEEP])
def test_torch_compile_cpu_smoke(op, case, dtype):
    if not HAVE_TORCH:
        pytest.skip("torch is not installed")
    be = equip(TorchCompileBackend(device="cpu"))
    assert be.availability().ok, be.availability().reason
    run_and_check(be, op, case, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", [TorchCompileBackend, LigerBackend], ids=["torch-compile", "liger"])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize(("op", "case_set", "case"),
                         [(s.name, cs, c) for s in (*operators.specs("core"), *operators.specs("model"))
                          for cs in ("smoke", "edge") for c in s.cases(cs)],
                         ids=lambda v: getattr(v, "name", str(v)))
def test_gpu_sweep_compile_liger(kind, op, case_set, case, dtype):
    be = equip(kind())
    avail = be.availability()
    if not avail.ok:
        pytest.skip(f"{be.name} unavailable: {avail.reason}")
    run_and_check(be, op, case, dtype)
