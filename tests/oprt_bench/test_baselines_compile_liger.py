"""The torch-compile and liger baseline backends, and the compile_s column.

Without torch, triton or Liger-Kernel installed (this machine), availability is checked against stand-in modules
in ``sys.modules``, Liger's allocation into oprt's output against a stand-in Liger op module on numpy-backed
tensors; the CPU compile sweep needs torch and skips with the reason without it; the ``gpu`` tests run both
backends' sweeps where torch sees a CUDA device.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import subprocess
import sys
import types
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
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
from oprt_core.operators.cross_entropy import cross_entropy_case
from oprt_core.operators.rms_norm import norm_case
from oprt_core.operators.silu_mul import silu_mul_case
from oprt_core.plugins import Registry, get_plugin_manager

HAVE_TORCH = importlib.util.find_spec("torch") is not None
_BENCH_SRC = Path(__file__).resolve().parents[2] / "oprt_bench" / "src"


# -- stand-ins for torch, triton and Liger ---------------------------------------------------------------------

class _Device:
    def __init__(self, kind: str, index: int | None = None) -> None:
        if ":" in kind:
            kind, idx = kind.split(":")
            index = int(idx)
        self.type, self.index = kind, index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


def fake_torch(gpu: bool, with_compile: bool = True, **dynamo_config: int) -> types.ModuleType:
    """A module standing for torch 9.9: a CUDA build that sees one device (``gpu``) or none."""
    torch = types.ModuleType("torch")
    torch.__version__ = "9.9.0"
    torch.device = _Device
    torch.version = SimpleNamespace(cuda="13.0")
    torch.cuda = SimpleNamespace(is_available=lambda: gpu, device_count=lambda: int(gpu), current_device=lambda: 0,
                                 get_device_name=lambda index: "Fake H200")
    if with_compile:
        torch.compile = lambda fn, **kw: fn
    dynamo = types.ModuleType("torch._dynamo")
    dynamo.config = SimpleNamespace(**dynamo_config)
    torch._dynamo = dynamo
    return torch


@pytest.fixture
def modules(monkeypatch):
    """Install stand-in modules (name -> module, or None for "not installed") for one test."""

    def install(**mods):
        for name, mod in mods.items():
            monkeypatch.setitem(sys.modules, name.replace("__", "."), mod)

    return install


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


def _fake_liger_ops(*names: str) -> types.ModuleType:
    ops = types.ModuleType("liger_kernel.ops")
    for name in names:
        setattr(ops, name, type(name, (), {}))
    return ops


def test_liger_available_and_what_it_refuses(modules):
    modules(torch=fake_torch(gpu=True), liger_kernel=types.ModuleType("liger_kernel"),
            liger_kernel__ops=_fake_liger_ops("LigerRMSNormFunction", "LigerLayerNormFunction",
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


def _liger(op: str):
    """The op's LigerOp (``IMPLS["liger"]`` of its folder)."""
    return importlib.import_module(f"oprt_core.operators.{op}.baselines").IMPLS["liger"]


def _case_refusal(op: str, shape, params):
    return _liger(op).case_refusal(op, shape, params)


def test_row_refusal():
    assert row_refusal("rms_norm", (4, 4096), {"eps": 1e-6}) is None
    assert _case_refusal("rms_norm", (4, 4096), {"eps": 1e-6}) is None
    assert "at most 65536" in _case_refusal("softmax", (4096, 128256), {"axis": -1})
    assert "last axis only" in _case_refusal("softmax", (4, 8), {"axis": 0})
    assert _case_refusal("softmax", (4, 8), {"axis": 1}) is None
    assert "at least a 1-d" in _case_refusal("silu_mul", (), {})
    assert _case_refusal("cross_entropy", (4096, 256000), {"reduction": "none"}) is None  # it loops over the classes
    assert "at least one row" in _case_refusal("cross_entropy", (0, 5), {})
    assert "at least a 1-d" in _case_refusal("cross_entropy", (), {})


@pytest.mark.parametrize("switch", [True, False])
def test_liger_cross_entropy_that_overwrites_its_logits_is_refused(modules, tmp_path, monkeypatch, switch):
    """A Liger whose cross-entropy kernel has no HAS_GRADIENTS switch stores the gradient over the logits in every
    forward: its cross_entropy is unsupported (a timed repeat would read its own gradient), the other ops stay."""
    src = tmp_path / "fake_liger_xent.py"
    switch_line = "# HAS_GRADIENTS: tl.constexpr\n" if switch else ""
    src.write_text("class LigerCrossEntropyFunction:\n    pass\n" + switch_line)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("fake_liger_xent", None)
    import fake_liger_xent

    ops = _fake_liger_ops("LigerRMSNormFunction")
    ops.LigerCrossEntropyFunction = fake_liger_xent.LigerCrossEntropyFunction
    modules(torch=fake_torch(gpu=True), liger_kernel=types.ModuleType("liger_kernel"), liger_kernel__ops=ops)
    be = equip(LigerBackend())
    assert be.availability().ok
    got = be.supports("cross_entropy", "bf16", cross_entropy_case((4, 128256)))
    assert bool(got) is switch, got.reason
    if not switch:
        assert "writes the logits' gradient over the logits" in got.reason
    assert be.supports("rms_norm", "bf16", norm_case("rms_norm", (4, 8192)))
    assert not be.supports("cross_entropy", "f32", cross_entropy_case((0, 7)))


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

class NpTensor:
    """The few tensor methods the liger backend and a Liger op use, over a numpy array."""

    def __init__(self, array: np.ndarray) -> None:
        self.a = array

    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: self.a.dtype)

    def numel(self) -> int:
        return self.a.size

    def data_ptr(self) -> int:
        return self.a.ctypes.data

    def is_contiguous(self) -> bool:
        return self.a.flags.c_contiguous

    def view(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape
        view = self.a.view()
        view.shape = shape  # raises rather than copy
        return NpTensor(view)

    def copy_(self, other):
        self.a[...] = other.a
        return self


def _np_torch() -> types.ModuleType:
    torch = types.ModuleType("torch")
    torch.empty = lambda *size, dtype=None, device=None: NpTensor(np.empty(
        size[0] if len(size) == 1 and isinstance(size[0], tuple) else size, dtype or np.float32))
    torch.empty_like = lambda t, dtype=None: NpTensor(np.empty_like(t.a, dtype=dtype))
    torch.get_default_dtype = lambda: np.float32
    return torch


def _liger_module(np_torch, allocate_with_torch: bool) -> types.SimpleNamespace:
    """A module standing for liger_kernel.ops.rms_norm: its Function's forward allocates Y through the module's
    ``torch`` (as Liger's does) or not at all through it, then computes RMSNorm into Y."""
    mod = types.ModuleType("fake_liger_rms_norm")
    mod.torch = np_torch

    def apply(x, w, eps):
        rows = x.a.reshape(-1, x.shape[-1])
        y = mod.torch.empty((rows.shape[0], rows.shape[1]), dtype=x.dtype) if allocate_with_torch else \
            NpTensor(np.empty(rows.shape, x.dtype))
        mod.torch.empty(rows.shape[0], dtype=np.float32)  # RSTD: not the output
        y.a[...] = rows / np.sqrt(np.mean(rows * rows, axis=-1, keepdims=True) + eps) * w.a
        return y.view(x.shape)

    function = type("LigerRMSNormFunction", (), {"apply": staticmethod(apply), "__module__": mod.__name__})
    mod.LigerRMSNormFunction = function
    return mod


@pytest.mark.parametrize("into_out", [True, False])
def test_liger_run_writes_into_the_output(monkeypatch, into_out):
    np_torch = _np_torch()
    mod = _liger_module(np_torch, allocate_with_torch=into_out)
    monkeypatch.setitem(sys.modules, "torch", np_torch)
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    rng = np.random.default_rng(7)
    x, w = NpTensor(rng.standard_normal((2, 3, 16)).astype(np.float32)), NpTensor(rng.uniform(0.5, 2, 16).astype(
        np.float32))
    out = NpTensor(np.full((2, 3, 16), np.nan, np.float32))
    run = _liger("rms_norm")(mod, [x, w], out, {"eps": 1e-6})
    assert run() == ("liger rms_norm" if into_out else "liger rms_norm + copy")
    assert mod.torch is np_torch  # put back after the call
    ref = operators.spec("rms_norm").reference_fn(x.a.astype(np.float64), w.a.astype(np.float64), 1e-6)
    np.testing.assert_allclose(out.a, ref, rtol=1e-5)
    empty = _liger("rms_norm")(mod, [x, w], NpTensor(np.empty((0, 16), np.float32)), {"eps": 1e-6})
    assert empty() == "none"


def _fused_liger_module(np_torch) -> types.ModuleType:
    """A module standing for liger_kernel.ops.fused_add_rms_norm: Y, then S allocated through its ``torch`` (as
    Liger's forward does), RSTD too; returns (Y, S)."""
    mod = types.ModuleType("fake_liger_fused_add_rms_norm")
    mod.torch = np_torch

    def apply(x, r, w, eps):
        rows = x.a.reshape(-1, x.shape[-1])
        y = mod.torch.empty((rows.shape[0], rows.shape[1]), dtype=x.dtype)
        s = mod.torch.empty((rows.shape[0], rows.shape[1]), dtype=x.dtype)
        mod.torch.empty(rows.shape[0], dtype=np.float32)  # RSTD
        s.a[...] = rows + r.a.reshape(rows.shape)
        y.a[...] = s.a / np.sqrt(np.mean(s.a * s.a, axis=-1, keepdims=True) + eps) * w.a
        return y.view(x.shape), s.view(x.shape)

    function = type("LigerFusedAddRMSNormFunction", (), {"apply": staticmethod(apply), "__module__": mod.__name__})
    mod.LigerFusedAddRMSNormFunction = function
    return mod


def test_liger_fused_add_rms_norm_writes_into_both_outputs(monkeypatch):
    np_torch = _np_torch()
    mod = _fused_liger_module(np_torch)
    monkeypatch.setitem(sys.modules, "torch", np_torch)
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    rng = np.random.default_rng(8)
    x, r = (NpTensor(rng.standard_normal((3, 16)).astype(np.float32)) for _ in range(2))
    w = NpTensor(rng.uniform(0.5, 2, 16).astype(np.float32))
    outs = (NpTensor(np.full((3, 16), np.nan, np.float32)), NpTensor(np.full((3, 16), np.nan, np.float32)))
    run = _liger("add_rms_norm")(mod, [x, r, w], outs, {"eps": 1e-6})
    assert run() == "liger add_rms_norm"  # Y and S allocated into out and h: nothing copied
    spec = operators.spec("add_rms_norm")
    assert spec.check((outs[0].a, outs[1].a), [x.a, r.a, w.a], "f32", {"eps": 1e-6}).ok


def test_alloc_into_takes_only_the_first_matching_allocation():
    out = NpTensor(np.zeros((4, 6), np.float16))
    proxy = AllocInto(_np_torch(), out)
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
    assert AllocInto(_np_torch(), strided).empty((4, 6), dtype=np.float16).data_ptr() != strided.data_ptr()
    pair = (NpTensor(np.zeros((4, 6), np.float16)), NpTensor(np.zeros((4, 6), np.float16)))
    proxy = AllocInto(_np_torch(), pair)  # several outputs: handed out in order
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


def _run_and_check(be, op, case, dtype):
    from test_baselines import run_and_check

    run_and_check(be, op, case, dtype)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize(("op", "case"), SWEEP, ids=[f"{op}-{c.name}" for op, c in SWEEP])
def test_torch_compile_cpu_smoke(op, case, dtype):
    if not HAVE_TORCH:
        pytest.skip("torch is not installed")
    be = equip(TorchCompileBackend(device="cpu"))
    assert be.availability().ok, be.availability().reason
    _run_and_check(be, op, case, dtype)


def test_torch_rms_norm_formula_without_f_rms_norm(monkeypatch):
    """torch < 2.4 has no torch.nn.functional.rms_norm: the f32 formula stands in."""
    if not HAVE_TORCH:
        pytest.skip("torch is not installed")
    import torch

    from oprt_bench.baselines import TorchBackend

    monkeypatch.delattr(torch.nn.functional, "rms_norm", raising=False)
    for dtype in ("f32", "f16", "bf16"):
        for case in operators.spec("rms_norm").cases("smoke"):
            _run_and_check(equip(TorchBackend(device="cpu")), "rms_norm", case, dtype)


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
    _run_and_check(be, op, case, dtype)
