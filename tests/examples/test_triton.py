"""examples/oprt-triton: backend ``triton``.

Three layers:
- anywhere: registration is cheap, availability gives a reason (never raises), layout planning and
  ``supports`` refuse exactly what the kernels cannot index;
- where triton is installed (no GPU needed): every smoke and edge case of every core op and gelu_tanh
  runs through the real kernels in Triton's interpreter (backend ``triton-interpret``, a subprocess with
  ``TRITON_INTERPRET=1``) and the spec's check;
- on a GPU (marked ``gpu``, skipping with the backend's reason elsewhere): every smoke and edge case of
  every core op and gelu_tanh in every dtype through the spec's check, plus the long-row, split-K and
  strided-axis paths.

Needs the distribution oprt-triton (``pip install ./examples/oprt-triton``; tox env ``examples``).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import numpy as np
import pytest
from gpu_helpers import run_checked

pytest.importorskip("oprt_triton", reason="oprt-triton is not installed: pip install ./examples/oprt-triton")

from oprt_triton import backend as triton_backend  # noqa: E402
from oprt_triton import layout  # noqa: E402
from oprt_triton.backend import TritonBackend  # noqa: E402

from oprt_core import (  # noqa: E402
    Registry,
    get_plugin_manager,
    operators,  # noqa: E402
)
from oprt_core.dtypes import get_dtype  # noqa: E402
from oprt_core.errors import UnsupportedCase  # noqa: E402
from oprt_core.spec import Case, TensorCase, make_tensor  # noqa: E402

HAVE_TRITON = importlib.util.find_spec("triton") is not None
HAVE_GELU = importlib.util.find_spec("oprt_gelu") is not None
DTYPES = ("f32", "f16", "bf16")


def seed_of(*parts: object) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())



def test_imports_only_public_names_of_the_baselines():
    """The example builds on the baselines' public base, ``oprt_core.baselines``: it imports no module or name
    outside its ``__all__`` (a third-party backend may rely on what the example relies on), and nothing of
    oprt-bench (not a dependency)."""
    import oprt_core.baselines as baselines

    src = Path(triton_backend.__file__).resolve().parent
    for path in src.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                bad = [a.name for a in node.names if a.name.startswith(("oprt_bench", "oprt_core.baselines"))]
                assert not bad, f"{path.name} imports module {bad}: import names from oprt_core.baselines"
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(("oprt_bench",
                                                                                        "oprt_core.baselines")):
                assert node.module == "oprt_core.baselines", f"{path.name} imports from {node.module}"
                names = [a.name for a in node.names]
                assert set(names) <= set(baselines.__all__), f"{path.name} imports non-public {names}"

# -- registration and availability (anywhere) --------------------------------------------------------------------

def test_registration_imports_neither_triton_nor_torch():
    code = textwrap.dedent("""
        import sys
        from oprt_core import Registry, get_plugin_manager
        from oprt_triton import plugin
        pm = get_plugin_manager(load_entrypoints=False)
        pm.register_plugin(plugin, "triton", "oprt-triton")
        reg = Registry(pm)
        assert type(reg.get_backend("triton")).__name__ == "TritonBackend"
        heavy = [m for m in ("triton", "torch") if m in sys.modules]
        assert not heavy, heavy
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_entry_point_registers_the_backend():
    reg = Registry(get_plugin_manager())
    be = reg.get_backend("triton")
    assert isinstance(be, TritonBackend) and be.name == "triton"
    row = {p.name: p for p in reg.plugins()}["triton"]
    assert row.distribution == "oprt-triton" and row.backends == ["triton"] and row.error is None
    if HAVE_GELU:  # the op package teaches it gelu_tanh through oprt_register_impls
        assert be.supports("gelu_tanh", "f32").ok
        assert ("triton", "gelu_tanh") not in reg.unused_impls


def test_availability_gives_a_reason_and_never_raises():
    avail = TritonBackend().availability()
    assert isinstance(avail.reason, str) and avail.reason
    if not avail.ok:
        assert any(w in avail.reason for w in ("triton", "torch", "CUDA")), avail.reason
    interp = TritonBackend("cpu")
    assert interp.name == "triton-interpret"
    if os.environ.get("TRITON_INTERPRET") != "1" and HAVE_TRITON:
        a = interp.availability()
        assert not a.ok and "TRITON_INTERPRET=1" in a.reason


def test_availability_without_triton(monkeypatch):
    monkeypatch.setattr(triton_backend, "is_installed", lambda name: False)
    avail = TritonBackend().availability()
    assert not avail.ok and "triton is not installed" in avail.reason


def test_availability_when_triton_fails_to_import(monkeypatch):
    monkeypatch.setattr(triton_backend, "is_installed", lambda name: True)
    monkeypatch.setitem(sys.modules, "triton", None)  # import triton -> ImportError
    avail = TritonBackend().availability()
    assert not avail.ok and "triton is installed but failed to import" in avail.reason


def test_unavailable_backend_raises_a_clear_error_on_use():
    be = TritonBackend()
    if be.availability().ok:
        pytest.skip("the triton backend is available here")
    from oprt_core.errors import BackendUnavailable

    with pytest.raises(BackendUnavailable, match="triton"):
        be.empty((4,), "f32")


# -- supports and layout planning (anywhere) ------------------------------------------------------------------------

def test_supports_reasons():
    be = TritonBackend()
    assert be.supports("copy", "f32").ok
    sup = be.supports("negate", "f32")
    assert not sup.ok and "no implementation of 'negate'" in sup.reason and "oprt_register_impls" in sup.reason
    assert not be.supports("copy", "f64").ok
    rev = Case("copy", "r", (TensorCase((5, 7), "reversed"),))
    sup = be.supports("copy", "f32", rev)
    assert not sup.ok and "negative strides" in sup.reason


def test_add_op_refuses_a_core_op():
    with pytest.raises(ValueError, match="implements core op 'copy' itself"):
        TritonBackend().add_op(operators.spec("copy"), lambda inputs, out, params: None)


@pytest.mark.parametrize("layout_name", ["contiguous", "transposed", "step2", "offset1", "reversed", "broadcast0"])
@pytest.mark.parametrize("shape", [(7,), (5, 9), (2, 3, 4), (1, 6)])
def test_case_strides_match_make_tensor(layout_name, shape):
    if layout_name == "transposed" and len(shape) < 2:
        return
    t = TensorCase(shape, layout_name)
    arr = make_tensor(t, get_dtype("f32"), np.random.default_rng(0))
    assert layout.case_strides(t) == tuple(s // arr.itemsize for s in arr.strides)


def test_collapse_and_broadcast():
    assert layout.collapse((4, 5, 6), (30, 6, 1)) == ((120,), [(1,)])
    assert layout.collapse((4, 1, 6), (6, 99, 1), (0, 0, 1)) == ((4, 6), [(6, 1), (0, 1)])
    # a transposed 5-d view merges to 3 dims
    assert layout.collapse((2, 3, 5, 7, 11), (1155, 385, 77, 1, 7)) == ((30, 7, 11), [(77, 1, 7)])
    assert layout.broadcast_strides((3, 1), (1, 1), (5, 3, 7)) == (0, 1, 0)
    assert layout.broadcast_strides((), (), (4, 2)) == (0, 0)


def test_plan_elementwise_paths():
    p = layout.plan_elementwise((64, 1000), (1000, 1), [((64, 1000), (1000, 1))])
    assert p.contiguous and p.numel == 64000 and not p.idx64
    p = layout.plan_elementwise((17, 33), (33, 1), [((17, 33), (33, 1)), ((33,), (1,))])
    assert not p.contiguous and p.shape == (1, 1, 17, 33) and p.strides[1] == (0, 0, 0, 1)
    with pytest.raises(UnsupportedCase, match="needs 5 dims after merging"):
        layout.plan_elementwise((2, 3, 5, 7, 11), layout.contiguous_strides((2, 3, 5, 7, 11)),
                                [((2, 3, 5, 7, 11), (1, 2, 6, 30, 210))])
    assert layout.plan_elementwise((1 << 16, 1 << 16), (1 << 16, 1), [((1 << 16, 1 << 16), (1 << 16, 1))]).idx64


def test_plan_rows():
    p = layout.plan_rows((4096, 4096), 0, [((1,), 4096), ((1,), None)])
    assert (p.n, p.n_out, p.outer, p.k_strides) == (4096, 4096, (1, 1, 4096), (4096, 0))
    p = layout.plan_rows((4, 2, 3, 5, 7, 11), 3, [((210, 105, 35, 11, 1), 7), ((462, 231, 77, 11, 1), None)])
    assert p.outer == (1, 24, 77) and p.n == 5
    with pytest.raises(UnsupportedCase, match="needs 4 dims besides the reduced one"):
        layout.plan_rows((2, 3, 4, 5, 6), 4, [((1, 2, 6, 24), 120), ((60, 20, 5, 1), None)])


def test_every_core_case_is_supported_except_negative_strides():
    be = TritonBackend()
    for spec in operators.specs("core"):
        for cs in ("smoke", "default", "large", "edge"):
            for case in spec.cases(cs):
                sup = be.supports(spec.name, "f32", case)
                reversed_ = any(t.layout == "reversed" for t in case.inputs)
                assert sup.ok != reversed_, f"{spec.name}/{case.name}: {sup.reason}"


# -- the kernels in Triton's interpreter (triton installed, no GPU needed) --------------------------------------

INTERPRET_SCRIPT = textwrap.dedent("""
    import json, os, sys
    os.environ["TRITON_INTERPRET"] = "1"
    import numpy as np
    from oprt_core import Registry, get_plugin_manager
    from oprt_triton.backend import TritonBackend

    op, sets = sys.argv[1], sys.argv[2].split(",")
    reg = Registry(get_plugin_manager())
    be = TritonBackend("cpu")
    avail = be.availability()
    if not avail.ok:
        print(json.dumps({"skip": avail.reason})); sys.exit(0)
    spec = reg.get_op(op)
    if op not in be.specs:
        be.add_op(spec, reg.impls[("triton", op)])
    results = []
    for cs in sets:
        for i, case in enumerate(spec.cases(cs)):
            for dt in ("f32", "f16", "bf16"):
                row = {"case": f"{cs}/{case.name}", "dtype": dt}
                sup = be.supports(op, dt, case)
                if not sup.ok:
                    row.update(status="unsupported", reason=sup.reason); results.append(row); continue
                params = spec.validate_params(case.param_dict, [t.shape for t in case.inputs])
                inputs = spec.make_inputs(case, dt, np.random.default_rng(i))
                try:
                    dev = [be.to_device(x) for x in inputs]
                    out = be.empty(spec.output_shape([x.shape for x in inputs], params), dt)
                    be.fill_nan(out)
                    be.prepare(op, dev, out, params)()
                    res = spec.check(be.to_host(out), inputs, dt, params)
                    row.update(status="ok" if res.ok else "failed", reason=res.message)
                except Exception as exc:
                    row.update(status="error", reason=f"{type(exc).__name__}: {exc}")
                results.append(row)
    print(json.dumps({"results": results}))
""")

INTERPRET_OPS = [s.name for s in operators.specs("core")] + (["gelu_tanh"] if HAVE_GELU else [])


@pytest.mark.skipif(not HAVE_TRITON, reason="triton is not installed (the interpreter tests need it, not a GPU)")
@pytest.mark.parametrize("op", INTERPRET_OPS)
def test_kernels_in_the_interpreter(op):
    proc = subprocess.run([sys.executable, "-c", INTERPRET_SCRIPT, op, "smoke,edge"], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    if "skip" in report:
        pytest.skip(report["skip"])
    rows = report["results"]
    bad = [r for r in rows if r["status"] in ("failed", "error")]
    assert not bad, "\n".join(f"{r['case']} {r['dtype']}: {r['status']}: {r['reason'][:300]}" for r in bad)
    unsupported = {r["case"] for r in rows if r["status"] == "unsupported"}
    assert all("reversed" in c for c in unsupported), unsupported
    assert sum(r["status"] == "ok" for r in rows) >= len(rows) - 3 * len(unsupported)


# -- on a GPU -------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gpu_registry():
    return Registry(get_plugin_manager())


@pytest.fixture(scope="module")
def gpu(gpu_registry):
    be = gpu_registry.get_backend("triton")
    avail = be.availability()
    if not avail.ok:
        pytest.skip(f"backend triton is unavailable: {avail.reason}")
    return be


def _gpu_params():
    specs = list(operators.specs("core"))
    if HAVE_GELU:
        from oprt_gelu import gelu_tanh_spec

        specs.append(gelu_tanh_spec)
    for spec in specs:
        for cs in ("smoke", "edge"):
            for case in spec.cases(cs):
                for dtype in DTYPES:
                    yield pytest.param(spec.name, case, dtype, id=f"{spec.name}-{cs}-{case.name}-{dtype}")


@pytest.mark.gpu
@pytest.mark.parametrize(("op", "case", "dtype"), list(_gpu_params()))
def test_gpu_every_smoke_and_edge_case(gpu, gpu_registry, op, case, dtype):
    spec = gpu_registry.get_op(op)
    sup = gpu.supports(op, dtype, case)
    if not sup.ok:
        assert any(t.layout == "reversed" for t in case.inputs), f"{op}/{case.name} unsupported: {sup.reason}"
        pytest.skip(sup.reason)
    res, _, _ = run_checked(gpu, spec, case, dtype, seed_of(op, case.name, dtype))
    assert res.ok, f"{op}/{case.name}/{dtype}: {res.message}"


def _c(op, shape, layout_name="contiguous", **params):
    inputs = (TensorCase(shape, layout_name),)
    return Case(op, f"{'x'.join(map(str, shape))}-{layout_name}-{params}", inputs, tuple(params.items()))


GPU_PATHS = [
    _c("reduce_sum", (1 << 22,), axis=None, keepdims=False),  # split-K, two passes
    _c("reduce_sum", (4, 1 << 20), axis=-1, keepdims=False),  # split-K over rows
    _c("reduce_sum", (1 << 16, 64), axis=0, keepdims=True),  # strided axis with split-K
    _c("reduce_sum", (300, 500), "transposed", axis=None, keepdims=False),  # two-stage all-reduce
    _c("softmax", (8, 65536), axis=-1),  # online max/sum
    _c("softmax", (4096, 96), axis=0),  # strided axis
    _c("softmax", (512, 300), "transposed", axis=-1),
    _c("copy", (2048, 2048), "transposed"),
    _c("vector_add", (1 << 20,)),
]
if HAVE_GELU:
    GPU_PATHS += [_c("gelu_tanh", (1 << 22,)), _c("gelu_tanh", (1024, 512), "transposed"),
                  _c("gelu_tanh", (8, 8192), "step2")]


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU_PATHS, ids=lambda c: f"{c.op}-{c.name}")
@pytest.mark.parametrize("dtype", DTYPES)
def test_gpu_kernel_paths(gpu, gpu_registry, case, dtype):
    if case.op == "vector_add":
        case = Case("vector_add", case.name, case.inputs * 2)
    spec = gpu_registry.get_op(case.op)
    res, _, _ = run_checked(gpu, spec, case, dtype, seed_of(case.op, case.name, dtype))
    assert res.ok, f"{case.op}/{case.name}/{dtype}: {res.message}"


@pytest.mark.gpu
def test_gpu_launcher_rebinds_and_reports_device_facts(gpu, gpu_registry):
    spec = gpu_registry.get_op("softmax")
    case = spec.cases("smoke")[0]
    res, launch, out = run_checked(gpu, spec, case, "f32", 1)
    assert res.ok
    x2 = spec.make_inputs(case, "f32", np.random.default_rng(2))
    out2 = gpu.empty(out.shape, "f32")
    launch.run([gpu.to_device(x2[0])], out2)
    gpu.synchronize()
    assert spec.check(gpu.to_host(out2), x2, "f32", case.param_dict).ok
    info = gpu.device_info()
    assert info.flavour.startswith("triton-") and info.sm_count and info.l2_bytes
    start, end = gpu.event(), gpu.event()
    start.record()
    launch()
    end.record()
    assert start.elapsed_ms(end) >= 0


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_gpu_op_api_without_out_returns_torch_tensors(gpu, dtype):
    """The op API without ``out`` on torch tensors: a torch tensor back, on their device, in their dtype, right for
    every core op (the new output's dtype is read from the torch dtype)."""
    import torch

    from oprt_core import ops

    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    g = torch.Generator(device="cuda").manual_seed(7)
    x = torch.randn(33, 257, device="cuda", generator=g).to(tdt)
    y = torch.randn(257, device="cuda", generator=g).to(tdt)
    tol = {"f32": 1e-5, "f16": 2e-3, "bf16": 2e-2}[dtype]
    calls = {
        "copy": (lambda: ops.copy(x.t(), backend="triton"), lambda: x.t()),
        "vector_add": (lambda: ops.vector_add(x, y, backend="triton"), lambda: (x.float() + y.float()).to(tdt)),
        "relu": (lambda: ops.relu(x, 0.25, backend="triton"), lambda: torch.nn.functional.leaky_relu(x, 0.25)),
        "reduce_sum": (lambda: ops.reduce_sum(x, axis=0, backend="triton"), lambda: x.float().sum(0).to(tdt)),
        "softmax": (lambda: ops.softmax(x, backend="triton"), lambda: torch.softmax(x.float(), -1).to(tdt)),
    }
    for op, (call, ref) in calls.items():
        got = call()
        assert isinstance(got, torch.Tensor) and got.device == x.device and got.dtype == tdt, op
        torch.cuda.synchronize()
        torch.testing.assert_close(got.float(), ref().float(), rtol=tol, atol=tol, msg=op)


@pytest.mark.gpu
def test_gpu_expanded_out_is_refused(gpu):
    """An ``out`` whose elements are not distinct (stride 0: an expanded tensor) is refused, as the compiled backends
    refuse it, and never written."""
    import torch

    from oprt_core import InvalidArgumentError, ops

    x = torch.randn(4, 8, device="cuda")
    base = torch.zeros(8, device="cuda")
    with pytest.raises(InvalidArgumentError, match="(?i)overlap"):
        ops.relu(x, backend="triton", out=base.expand(4, 8))
    assert not base.any()
