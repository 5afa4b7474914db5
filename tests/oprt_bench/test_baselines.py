"""The torch and cupy baseline backends (oprt_bench.baselines; the code in oprt_core.baselines, each op's
implementations in oprt_core/operators/<op>/baselines.py, handed over by ``oprt_core.operators.equip``).

On a machine without a GPU the sweep runs on torch's CPU kernels
(``TorchBackend(device="cpu")``: the same code path, the device aside); the
``gpu``-marked tests run the same sweep on CUDA torch and cupy and skip with the
backend's availability reason where there is no GPU.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from baseline_helpers import HAVE_TORCH, run_and_check, torch_cpu_backend

from oprt_core import operators
from oprt_core.errors import (
    BackendUnavailable,
    InvalidArgumentError,
    OprtError,
    UnknownNameError,
    UnsupportedCase,
)
from oprt_core.operators import equip
from oprt_core.plugins import Registry, get_plugin_manager
from oprt_core.spec import TensorCase, make_tensor

_BENCH_SRC = Path(__file__).resolve().parents[2] / "oprt_bench" / "src"
try:
    import oprt_bench.baselines  # noqa: F401
except ImportError:  # oprt-bench not installed in this environment: use the source tree
    sys.path.insert(0, str(_BENCH_SRC))
    for name in [m for m in sys.modules if m == "oprt_bench" or m.startswith("oprt_bench.")]:
        del sys.modules[name]

import oprt_bench.baselines as baselines  # noqa: E402
from oprt_bench.baselines import CupyBackend, TorchBackend, cupy_plugin, host_span, plugin, torch_plugin  # noqa: E402

DTYPES = ("f32", "f16", "bf16")
SWEEP = [(spec.name, case_set, case) for spec in operators.specs() for case_set in ("smoke", "edge")
         for case in spec.cases(case_set)]
SWEEP_IDS = [f"{case_set}-{case.name}" for _, case_set, case in SWEEP]
LAYOUTS = ("contiguous", "transposed", "step2", "offset1", "broadcast0")


@pytest.fixture(scope="module")
def torch_cpu():
    return torch_cpu_backend()


def _gpu_backend(kind: str):
    be = equip(TorchBackend() if kind == "torch" else CupyBackend())
    avail = be.availability()
    if not avail.ok:
        pytest.skip(f"{be.name} unavailable: {avail.reason}")
    return be


# -- the sweep ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("op", "case_set", "case"), SWEEP, ids=SWEEP_IDS)
def test_torch_cpu_sweep(torch_cpu, op, case_set, case, dtype):
    run_and_check(torch_cpu, op, case, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["torch", "cupy"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("op", "case_set", "case"), SWEEP, ids=SWEEP_IDS)
def test_gpu_sweep(kind, op, case_set, case, dtype):
    run_and_check(_gpu_backend(kind), op, case, dtype)


def _implemented_by(backend: str) -> set[str]:
    """The ops whose folder's baselines.py gives ``backend`` an implementation."""
    return {op for name, op, _ in operators.implementations() if name == backend}


@pytest.mark.parametrize("op", list(operators.names("model")))
def test_model_ops_torch_runs_them_cupy_those_its_folder_gives_it(op):
    assert op in equip(TorchBackend())._impls
    cupy = equip(CupyBackend())
    sup = cupy.supports(op, "f32", operators.spec(op).cases("smoke")[0])
    if op in _implemented_by("cupy"):
        assert sup.ok and op in cupy._impls
    else:
        assert not sup.ok and sup.reason.startswith(f"CuPy has no {op}")


# -- layouts --------------------------------------------------------------------------------------------------

def _elem_strides(x: np.ndarray) -> tuple[int, ...]:
    return tuple(s // x.itemsize for s in x.strides)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_torch_to_device_keeps_layout(torch_cpu, layout, dtype):
    from oprt_core.dtypes import get_dtype

    x = make_tensor(TensorCase((5, 7), layout), get_dtype(dtype), np.random.default_rng(3))
    t = torch_cpu.to_device(x)
    assert tuple(t.shape) == x.shape
    assert tuple(t.stride()) == _elem_strides(x)
    if layout == "offset1":
        assert t.storage_offset() == 1  # one element into its buffer, as on the host
    if layout == "broadcast0":
        assert t.stride()[0] == 0
    back = torch_cpu.to_host(t)
    assert back.dtype == x.dtype and back.shape == x.shape
    np.testing.assert_array_equal(np.ascontiguousarray(back).view(np.uint8), np.ascontiguousarray(x).view(np.uint8))


def test_torch_reversed_is_unsupported(torch_cpu):
    from oprt_core.dtypes import get_dtype

    case = next(c for c in operators.spec("copy").cases("edge") if c.inputs[0].layout == "reversed")
    support = torch_cpu.supports("copy", "f32", case)
    assert not support and "negative strides" in support.reason
    x = make_tensor(TensorCase((4, 6), "reversed"), get_dtype("f32"), np.random.default_rng(0))
    with pytest.raises(UnsupportedCase, match="negative strides"):
        torch_cpu.to_device(x)


@pytest.mark.parametrize("layout", (*LAYOUTS, "reversed"))
def test_host_span_rebuilds_every_view(layout):
    """The span the cupy backend copies rebuilds the same view, negative strides included."""
    from oprt_core.dtypes import get_dtype

    for shape in ((5, 7), (2, 3, 4), (1,), (0, 3)):
        if layout == "transposed" and len(shape) < 2:
            continue
        x = make_tensor(TensorCase(shape, layout), get_dtype("f32"), np.random.default_rng(1))
        span = host_span(x)
        v = span.view()
        assert v.shape == x.shape
        np.testing.assert_array_equal(v, x)
        if x.size:
            assert span.strides == _elem_strides(x)
            assert span.flat.size <= span.storage_offset + 1 + sum(abs(s) * (n - 1) for s, n in
                                                                   zip(span.strides, shape)) + 64
    y = np.arange(10, dtype=np.float32)[::-3]  # negative stride of 3
    span = host_span(y)
    assert span.strides == (-3,)
    np.testing.assert_array_equal(span.view(), y)
    z = np.float32(2.5) * np.ones((), np.float32)  # 0-d
    np.testing.assert_array_equal(host_span(z).view(), z)


def test_torch_zero_size_and_scalar(torch_cpu):
    for shape in ((0,), (0, 5), ()):
        x = np.full(shape, 1.5, np.float32)
        t = torch_cpu.to_device(x)
        assert tuple(t.shape) == shape
        np.testing.assert_array_equal(torch_cpu.to_host(t), x)


# -- bad input ------------------------------------------------------------------------------------------------

def test_torch_bad_input_raises_oprt_errors(torch_cpu):
    import torch

    be = torch_cpu
    x = be.to_device(np.ones((4, 5), np.float32))
    with pytest.raises(InvalidArgumentError, match="shape mismatch"):
        be.prepare("copy", [x], be.empty((5, 4), "f32"), {})
    with pytest.raises(InvalidArgumentError, match="dtype mismatch"):
        be.prepare("copy", [x], be.empty((4, 5), "f16"), {})
    with pytest.raises(InvalidArgumentError, match="takes 2 input"):
        be.prepare("vector_add", [x], be.empty((4, 5), "f32"), {})
    with pytest.raises(InvalidArgumentError, match="do not broadcast"):
        be.prepare("vector_add", [x, be.to_device(np.ones(3, np.float32))], be.empty((4, 5), "f32"), {})
    with pytest.raises(InvalidArgumentError, match="out of range"):
        be.prepare("softmax", [x], be.empty((4, 5), "f32"), {"axis": 2})
    with pytest.raises(InvalidArgumentError, match="out of range"):
        be.prepare("reduce_sum", [x], be.empty((4,), "f32"), {"axis": -3})
    with pytest.raises(UnknownNameError):
        be.prepare("softmax", [x], be.empty((4, 5), "f32"), {"dim": 0})
    with pytest.raises(UnknownNameError):
        be.prepare("gelu", [x], be.empty((4, 5), "f32"), {})
    with pytest.raises(InvalidArgumentError, match="must be finite"):
        be.prepare("relu", [x], be.empty((4, 5), "f32"), {"negative_slope": float("nan")})
    x64 = torch.ones((4, 5), dtype=torch.float64)
    with pytest.raises(InvalidArgumentError, match="float64"):
        be.prepare("copy", [x64], torch.empty((4, 5), dtype=torch.float64), {})
    with pytest.raises(InvalidArgumentError):
        be.to_device(np.ones(3, np.float64))
    with pytest.raises(InvalidArgumentError, match="torch tensors"):
        be.prepare("copy", [np.ones((4, 5), np.float32)], be.empty((4, 5), "f32"), {})
    launcher = be.prepare("copy", [x], be.empty((4, 5), "f32"), {})
    with pytest.raises(InvalidArgumentError, match="prepared for"):
        launcher.run([be.to_device(np.ones((5, 4), np.float32))], be.empty((5, 4), "f32"))
    assert not be.supports("gelu", "f32") and "gelu" in be.supports("gelu", "f32").reason
    assert not be.supports("copy", "f64")


def test_torch_asarray(torch_cpu):
    import torch

    t = torch.ones(3)
    assert torch_cpu.asarray(t) is t
    a = torch_cpu.asarray(np.arange(3, dtype=np.float32))
    assert isinstance(a, torch.Tensor) and a.tolist() == [0.0, 1.0, 2.0]


def test_torch_cpu_timing_primitives(torch_cpu):
    info = torch_cpu.device_info()
    assert info.flavour.startswith("torch-")
    start, end = torch_cpu.event(), torch_cpu.event()
    start.record()
    torch_cpu.flush_cache()
    torch_cpu.flush_cache(clean=True)
    torch_cpu.synchronize()
    assert torch_cpu._flush_buffer.nbytes % 16 == 0 and not torch_cpu._flush_buffer.any()
    end.record()
    assert start.elapsed_ms(end) >= 0.0
    with pytest.raises(InvalidArgumentError):
        torch_cpu.event().elapsed_ms(torch_cpu.event())


# -- availability ---------------------------------------------------------------------------------------------

def test_torch_cuda_availability_here():
    be = TorchBackend()
    assert be.name == "torch"
    avail = be.availability()
    if not HAVE_TORCH:
        assert not avail.ok and "torch not installed" in avail.reason
        return
    import torch

    if torch.cuda.is_available():
        assert avail.ok and avail.device
    else:
        assert not avail.ok and "no CUDA device" in avail.reason
        with pytest.raises(BackendUnavailable, match="no CUDA device"):
            be.empty((3,), "f32")


def test_torch_missing_is_a_reason(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    avail = TorchBackend().availability()
    assert not avail.ok and "torch not installed" in avail.reason


def test_cupy_availability_never_raises():
    be = equip(CupyBackend())
    assert be.name == "cupy"
    avail = be.availability()
    if importlib.util.find_spec("cupy") is None:
        assert not avail.ok and "cupy not installed" in avail.reason
    elif not avail.ok:
        assert avail.reason.startswith("cupy")
    if not avail.ok:
        assert not be.supports("copy", "bf16")
        with pytest.raises(OprtError):
            be.to_device(np.ones(3, np.float32))


def test_cupy_missing_is_a_reason(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    avail = CupyBackend().availability()
    assert not avail.ok and "cupy not installed" in avail.reason


# -- plugins --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("module", "names"), [(torch_plugin, ["torch"]), (cupy_plugin, ["cupy"]),
                                               (plugin, ["torch", "cupy"])])
def test_plugins_register(module, names):
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(module, "baselines-under-test")
    reg = Registry(pm)
    for name in names:
        assert reg.get_backend(name).name == name
    assert not pm.load_errors


def test_backends_start_with_no_op_and_take_each_ops_impls():
    """A baseline backend holds no op of its own: made by hand it runs none (the reason of an op it lacks); the
    registry, or ``equip`` for one made by hand, gives it the impls of each op's folder for its name (torch's for the
    CPU test device)."""
    bare = TorchBackend(device="cpu")
    assert not bare._impls and "has no implementation of 'copy'" in bare.supports("copy", "f32").reason
    assert set(equip(TorchBackend(device="cpu"))._impls) == set(operators.names())
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(plugin, "baselines-under-test")
    reg = Registry(pm)
    assert set(reg.get_backend("torch")._impls) == set(operators.names())
    for name in ("cupy", "torch-compile"):
        assert set(reg.get_backend(name)._impls) == _implemented_by(name)
    assert not [key for key in reg.unused_impls if key[0] in ("torch", "cupy", "torch-compile", "liger")]


def test_registration_is_cheap():
    """Registering imports neither torch nor cupy (they load on the first availability())."""
    code = ("import sys\n"
            "from oprt_bench.baselines import torch_plugin, cupy_plugin\n"
            "got = []\n"
            "torch_plugin.oprt_register_backends(got.append)\n"
            "cupy_plugin.oprt_register_backends(got.append)\n"
            "assert [b.name for b in got] == ['torch', 'cupy'], got\n"
            "assert 'torch' not in sys.modules and 'cupy' not in sys.modules, 'imported at registration'\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(_BENCH_SRC), os.environ.get("PYTHONPATH"))
                                                      if p))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr


# -- GPU extras -------------------------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["torch", "cupy"])
def test_gpu_device_info_events_flush(kind):
    be = _gpu_backend(kind)
    info = be.device_info()
    assert info.vendor == "NVIDIA" and info.sm_count and info.l2_bytes and info.memory_bytes
    assert info.flavour.startswith(f"{kind}-")
    x = be.to_device(np.ones(1 << 20, np.float32))
    out = be.empty((1 << 20,), "f32")
    launcher = be.prepare("copy", [x], out, {})
    start, end = be.event(), be.event()
    be.flush_cache(clean=True)
    be.flush_cache()
    start.record()
    for _ in range(10):
        launcher()
    end.record()
    be.synchronize()
    assert start.elapsed_ms(end) > 0.0


@pytest.mark.gpu
@pytest.mark.parametrize("layout", (*LAYOUTS, "reversed"))
def test_cupy_to_device_keeps_layout(layout):
    from oprt_core.dtypes import get_dtype

    be = _gpu_backend("cupy")
    x = make_tensor(TensorCase((5, 7), layout), get_dtype("f32"), np.random.default_rng(3))
    a = be.to_device(x)
    assert a.shape == x.shape and a.strides == x.strides
    if layout == "offset1":
        assert a.data.ptr % 256 == 4
    np.testing.assert_array_equal(be.to_host(a), x)


@pytest.mark.gpu
def test_gpu_zero_copy_between_torch_and_cupy():
    tb, cb = _gpu_backend("torch"), _gpu_backend("cupy")
    t = tb.to_device(np.arange(6, dtype=np.float32).reshape(2, 3))
    c = cb.asarray(t)
    assert c.data.ptr == t.data_ptr()
    assert tb.asarray(c).data_ptr() == t.data_ptr()


def test_public_names_are_documented():
    """Every name of ``oprt_bench.baselines.__all__`` exists, is described in the package docstring (the guide
    for a third-party backend) and, where it is a class or function, has a docstring of its own."""
    guide = baselines.__doc__ or ""
    for name in baselines.__all__:
        obj = getattr(baselines, name)
        assert f"`{name}`" in guide, f"{name} is not described in oprt_bench.baselines' docstring"
        if isinstance(obj, type) or callable(obj) and hasattr(obj, "__code__"):
            assert (obj.__doc__ or "").strip(), f"{name} has no docstring"
