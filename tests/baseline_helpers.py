"""Helpers of the baseline backends' tests (tests/oprt_bench/test_baselines*.py and the op folders' tests of an op's
baseline implementations, ``oprt_core/operators/<op>/test_<op>.py``).

- :func:`torch_cpu_backend`: the torch baseline on torch's CPU kernels, equipped with every op's torch
  implementation (the test skips without torch);
- :func:`run_and_check`: one case on a backend as the bench runs it, checked against the reference, twice;
- stand-ins for torch, triton and Liger-Kernel where they are not installed: :func:`fake_torch` (a CUDA build's
  module surface), :func:`fake_liger_ops`, :class:`NpTensor` and :func:`np_torch` (the few tensor methods and
  allocators a Liger op uses, over numpy arrays), :func:`install_modules` (stand-ins into ``sys.modules`` for one
  test).
"""

from __future__ import annotations

import importlib.util
import sys
import types
import zlib
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from oprt_core import operators
from oprt_core.spec import as_outputs

HAVE_TORCH = importlib.util.find_spec("torch") is not None


def torch_cpu_backend() -> Any:
    """``TorchBackend(device="cpu")`` with every op's torch implementation; skips the test without torch."""
    if not HAVE_TORCH:
        pytest.skip("torch is not installed")
    from oprt_core.baselines import TorchBackend

    be = operators.equip(TorchBackend(device="cpu"))
    avail = be.availability()
    assert avail.ok, avail.reason
    return be


def _seed(*parts: object) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


def run_and_check(be: Any, op: str, case: Any, dtype: str) -> None:
    """Inputs -> device -> NaN-poisoned output -> prepare -> launch -> host -> spec.check, then the prepared launcher
    once more on fresh buffers of the same layout; skips where the backend does not support the case (with its
    reason, which it must give)."""
    support = be.supports(op, dtype, case)
    if not support:
        assert support.reason
        pytest.skip(f"unsupported on {be.name}: {support.reason}")
    spec = operators.spec(op)
    params = case.param_dict
    rng = np.random.default_rng(_seed(op, case.name, dtype))
    inputs = spec.make_inputs(case, dtype, rng)
    dev = [be.to_device(x) for x in inputs]

    def fresh_outputs():  # NaN-poisoned; a tuple for an op with several outputs
        out = spec.new_outputs(be, [x.shape for x in inputs], params, dtype)
        for o in as_outputs(out):
            be.fill_nan(o)
        return out

    def on_host(out):
        host = tuple(be.to_host(o) for o in as_outputs(out))
        return host if spec.multi_output else host[0]

    out = fresh_outputs()
    launcher = be.prepare(op, dev, out, params)
    launcher()
    be.synchronize()
    res = spec.check(on_host(out), inputs, dtype, params)
    assert res.ok, f"{be.name} {case} {dtype}: {res.message}"
    inputs2 = spec.make_inputs(case, dtype, rng)
    dev2 = [be.to_device(x) for x in inputs2]
    out2 = fresh_outputs()
    launcher.run(dev2, out2)
    be.synchronize()
    res = spec.check(on_host(out2), inputs2, dtype, params)
    assert res.ok, f"{be.name} {case} {dtype} (launcher.run): {res.message}"


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
    torch: Any = types.ModuleType("torch")
    torch.__version__ = "9.9.0"
    torch.device = _Device
    torch.version = SimpleNamespace(cuda="13.0")
    torch.cuda = SimpleNamespace(is_available=lambda: gpu, device_count=lambda: int(gpu), current_device=lambda: 0,
                                 get_device_name=lambda index: "Fake H200")
    if with_compile:
        torch.compile = lambda fn, **kw: fn
    dynamo: Any = types.ModuleType("torch._dynamo")
    dynamo.config = SimpleNamespace(**dynamo_config)
    torch._dynamo = dynamo
    return torch


def fake_liger_ops(*names: str) -> types.ModuleType:
    """A module standing for ``liger_kernel.ops`` with a class of each of ``names`` (e.g. LigerRMSNormFunction)."""
    ops = types.ModuleType("liger_kernel.ops")
    for name in names:
        setattr(ops, name, type(name, (), {}))
    return ops


def install_modules(monkeypatch: pytest.MonkeyPatch, **mods: types.ModuleType | None) -> None:
    """Put stand-in modules (name -> module, or None for "not installed") into ``sys.modules`` for one test; a
    double underscore in a name stands for a dot (``liger_kernel__ops``)."""
    for name, mod in mods.items():
        monkeypatch.setitem(sys.modules, name.replace("__", "."), mod)


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


def np_torch() -> types.ModuleType:
    """A module standing for torch's allocators (empty, empty_like, get_default_dtype) over :class:`NpTensor`."""
    torch: Any = types.ModuleType("torch")
    torch.empty = lambda *size, dtype=None, device=None: NpTensor(np.empty(
        size[0] if len(size) == 1 and isinstance(size[0], tuple) else size, dtype or np.float32))
    torch.empty_like = lambda t, dtype=None: NpTensor(np.empty_like(t.a, dtype=dtype))
    torch.get_default_dtype = lambda: np.float32
    return torch
