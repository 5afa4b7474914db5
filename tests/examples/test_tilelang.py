"""examples/oprt-tilelang: backend ``tilelang``.

Two layers:
- anywhere (no tilelang, torch or GPU): registration is cheap, availability gives the reason for each missing
  piece (stand-in modules where tilelang is absent), the shape classes, kernel keys and kernel column of the
  planning; where tilelang imports, each kernel factory's ``T.prim_func`` lowered to CUDA source (no GPU);
- on a GPU (marked ``gpu``, skipping with the backend's reason elsewhere): every smoke and edge case of every
  core op in every dtype through the spec's check, the split and online paths, compile_s and the kernel column.

Needs the distribution oprt-tilelang (``pip install ./examples/oprt-tilelang``; tox env ``examples``).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
import types
import zlib
from pathlib import Path

import numpy as np
import pytest
from gpu_helpers import run_checked

pytest.importorskip("oprt_tilelang", reason="oprt-tilelang is not installed: pip install ./examples/oprt-tilelang")

from oprt_tilelang import backend as tl_backend  # noqa: E402
from oprt_tilelang import layout  # noqa: E402
from oprt_tilelang.backend import TileLangBackend  # noqa: E402

from oprt_core import (  # noqa: E402
    Availability,
    Registry,
    get_plugin_manager,
    operators,  # noqa: E402
)
from oprt_core.errors import UnsupportedCase  # noqa: E402
from oprt_core.spec import Case, TensorCase  # noqa: E402

HAVE_TILELANG = importlib.util.find_spec("tilelang") is not None
DTYPES = ("f32", "f16", "bf16")
SM = 132


def plan(op, shapes, params=None, strides=None, out_shape=None, out_strides=None, dtype="f32", sm=SM):
    shapes = [tuple(s) for s in shapes]
    strides = strides or [layout.contiguous_strides(s) for s in shapes]
    if out_shape is None:
        from oprt_core import operators

        spec = operators.spec(op)
        params = spec.validate_params(params or {}, shapes)
        out_shape = spec.output_shape(shapes, params)
    out_strides = out_strides or layout.contiguous_strides(out_shape)
    return layout.plan_call(op, dtype, shapes, strides, out_shape, out_strides, params or {}, sm)


# -- registration and availability (anywhere) --------------------------------------------------------------------

def test_registration_imports_neither_tilelang_nor_torch():
    code = textwrap.dedent("""
        import sys
        from oprt_core import Registry, get_plugin_manager
        from oprt_tilelang import plugin
        pm = get_plugin_manager(load_entrypoints=False)
        pm.register_plugin(plugin, "tilelang", "oprt-tilelang")
        reg = Registry(pm)
        assert type(reg.get_backend("tilelang")).__name__ == "TileLangBackend"
        heavy = [m for m in ("tilelang", "torch", "tvm") if m in sys.modules]
        assert not heavy, heavy
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_entry_point_registers_the_backend():
    reg = Registry(get_plugin_manager())
    be = reg.get_backend("tilelang")
    assert isinstance(be, TileLangBackend) and be.name == "tilelang"
    row = {p.name: p for p in reg.plugins()}["tilelang"]
    assert row.distribution == "oprt-tilelang" and row.backends == ["tilelang"] and row.error is None


def test_imports_only_public_names_of_the_baselines():
    import ast

    import oprt_core.baselines as baselines

    src = Path(tl_backend.__file__).resolve().parent
    for path in src.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(("oprt_bench",
                                                                                      "oprt_core.baselines")):
                assert node.module == "oprt_core.baselines", f"{path.name} imports from {node.module}"
                assert {a.name for a in node.names} <= set(baselines.__all__), path.name


def test_availability_gives_a_reason_and_never_raises():
    avail = TileLangBackend().availability()
    assert isinstance(avail.reason, str) and avail.reason
    if not avail.ok:
        assert any(w in avail.reason for w in ("tilelang", "torch", "CUDA", "nvcc")), avail.reason


def test_availability_without_tilelang(monkeypatch):
    monkeypatch.setattr(tl_backend, "is_installed", lambda name: False)
    avail = TileLangBackend().availability()
    assert not avail.ok and "tilelang is not installed" in avail.reason and "pip install tilelang" in avail.reason


def test_availability_on_a_cpu_device(monkeypatch):
    monkeypatch.setattr(tl_backend, "is_installed", lambda name: True)
    avail = TileLangBackend("cpu").availability()
    assert not avail.ok and "CUDA devices only" in avail.reason


def _fake_torch(monkeypatch, ok=True, reason="torch 2.9 (stand-in), CUDA 13.0"):
    monkeypatch.setattr(tl_backend, "is_installed", lambda name: True)
    monkeypatch.setattr(TileLangBackend, "_probe_torch", lambda self: Availability(ok, reason, "Stand-in GPU"))


def test_availability_without_torch_or_a_gpu(monkeypatch):
    _fake_torch(monkeypatch, ok=False, reason="torch 2.9 sees no CUDA device (CUDA 13.0 build)")
    avail = TileLangBackend().availability()
    assert not avail.ok and avail.reason == "tilelang: torch 2.9 sees no CUDA device (CUDA 13.0 build)"


def test_availability_without_nvcc(monkeypatch):
    _fake_torch(monkeypatch)
    monkeypatch.setattr(tl_backend, "find_nvcc", lambda: None)
    avail = TileLangBackend().availability()
    assert not avail.ok and "nvcc" in avail.reason and "was not found" in avail.reason


def test_availability_when_tilelang_fails_to_import(monkeypatch, tmp_path):
    _fake_torch(monkeypatch)
    monkeypatch.setattr(tl_backend, "find_nvcc", lambda: "/opt/cuda/bin/nvcc")
    monkeypatch.setitem(sys.modules, "tilelang", None)  # import tilelang -> ImportError
    avail = TileLangBackend().availability()
    assert not avail.ok and "tilelang is installed but failed to import" in avail.reason


def test_availability_with_a_stand_in_tilelang(monkeypatch, tmp_path):
    """Every piece present (stand-ins for tilelang and torch's device): available, the versions and nvcc in the
    reason, and tilelang's disk cache pointed at oprt's cache folder."""
    _fake_torch(monkeypatch)
    monkeypatch.setattr(tl_backend, "find_nvcc", lambda: "/opt/cuda/bin/nvcc")
    fake = types.ModuleType("tilelang")
    fake.__version__ = "0.1.15-standin"
    monkeypatch.setitem(sys.modules, "tilelang", fake)
    monkeypatch.delenv("TILELANG_CACHE_DIR", raising=False)
    monkeypatch.setenv("OPRT_CACHE_DIR", str(tmp_path))
    avail = TileLangBackend().availability()
    assert avail.ok, avail.reason
    assert avail.reason == "tilelang 0.1.15-standin, torch 2.9 (stand-in), CUDA 13.0, nvcc /opt/cuda/bin/nvcc"
    assert avail.device == "Stand-in GPU"
    import os

    assert os.environ["TILELANG_CACHE_DIR"] == str(tmp_path / "tilelang")


def test_a_set_tilelang_cache_dir_is_kept(monkeypatch, tmp_path):
    _fake_torch(monkeypatch)
    monkeypatch.setattr(tl_backend, "find_nvcc", lambda: "/opt/cuda/bin/nvcc")
    monkeypatch.setitem(sys.modules, "tilelang", types.ModuleType("tilelang"))
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "mine"))
    assert TileLangBackend().availability().ok
    import os

    assert os.environ["TILELANG_CACHE_DIR"] == str(tmp_path / "mine")


def test_find_nvcc_order(monkeypatch, tmp_path):
    home = tmp_path / "cuda"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "nvcc").write_text("")
    other = tmp_path / "nvcc-explicit"
    other.write_text("")
    monkeypatch.setenv("CUDA_HOME", str(home))
    monkeypatch.setenv("NVCC", str(other))
    assert tl_backend.find_nvcc() == str(other)
    monkeypatch.delenv("NVCC")
    assert tl_backend.find_nvcc() == str(home / "bin" / "nvcc")


def test_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("OPRT_CACHE_DIR", str(tmp_path / "x"))
    assert layout.cache_dir() == tmp_path / "x" / "tilelang"
    monkeypatch.delenv("OPRT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert layout.cache_dir() == tmp_path / "xdg" / "oprt" / "tilelang"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert layout.cache_dir() == Path.home() / ".cache" / "oprt" / "tilelang"


def test_unavailable_backend_raises_a_clear_error_on_use():
    be = TileLangBackend()
    if be.availability().ok:
        pytest.skip("the tilelang backend is available here")
    from oprt_core.errors import BackendUnavailable

    with pytest.raises(BackendUnavailable):
        be.empty((4,), "f32")


# -- supports (anywhere) -------------------------------------------------------------------------------------------

def test_supports_reasons():
    be = TileLangBackend()
    assert be.supports("softmax", "bf16").ok
    sup = be.supports("rms_norm", "f32")
    assert not sup.ok and "no implementation of 'rms_norm'" in sup.reason
    assert not be.supports("copy", "f64").ok
    rev = Case("copy", "r", (TensorCase((5, 7), "reversed"),))
    sup = be.supports("copy", "f32", rev)
    assert not sup.ok and "negative strides" in sup.reason


def test_every_core_case_is_supported_except_negative_strides():
    be = TileLangBackend()
    for spec in operators.specs("core"):
        for cs in ("smoke", "default", "large", "edge"):
            for case in spec.cases(cs):
                for dtype in DTYPES:
                    sup = be.supports(spec.name, dtype, case)
                    reversed_ = any(t.layout == "reversed" for t in case.inputs)
                    assert sup.ok != reversed_, f"{spec.name}/{case.name}/{dtype}: {sup.reason}"


def test_too_many_elements_are_refused():
    with pytest.raises(UnsupportedCase, match="int32"):
        plan("copy", [(1 << 16, 1 << 16)])


# -- shape classes, keys and the kernel column (anywhere) --------------------------------------------------------

def test_elementwise_shape_classes():
    p = plan("copy", [(4096, 4096)], dtype="bf16")
    assert p.kind == "ew" and p.dims == (4096 * 4096,)
    assert p.keys == (layout.KernelKey("ew_copy", "bfloat16", "bfloat16", (("block", 1024), ("threads", 256))),)
    # every size of a contiguous copy shares one kernel: the class does not depend on the extents
    assert plan("copy", [(7,)], dtype="bf16").keys == p.keys
    assert plan("relu", [(1000,)], {"negative_slope": 0.5}).keys[0].factory == "ew_relu"
    assert plan("vector_add", [(1000,), (1000,)]).keys[0].factory == "ew_add"


def test_vector_add_broadcasts():
    p = plan("vector_add", [(17, 33), (33,)])
    assert (p.keys[0].factory, p.dims, p.swap, p.expand) == ("ew_add_row", (17 * 33, 33), False, False)
    p = plan("vector_add", [(33,), (4, 17, 33)])
    assert (p.keys[0].factory, p.dims, p.swap) == ("ew_add_row", (4 * 17 * 33, 33), True)
    p = plan("vector_add", [(4, 5, 3), (5, 3)])  # b: a row of 15 repeated along dim 0
    assert p.keys[0].factory == "ew_add_row" and p.dims == (60, 15) and not p.swap
    p = plan("vector_add", [(5, 1, 7), (3, 1)])  # both broadcast along some dim
    assert p.keys[0].factory == "ew_add" and p.expand
    p = plan("vector_add", [(37, 1), (1, 129)])  # neither is the output's shape: both expanded
    assert p.keys[0].factory == "ew_add" and p.expand and p.contiguous_inputs == (True, True)
    assert layout.kernel_text(p) == "tilelang ew_add (inputs broadcast to the output's shape)"


def test_reduce_sum_classes_and_blocks():
    p = plan("reduce_sum", [(4096, 4096)], {"axis": -1})
    assert p.kind == "rows" and p.dims == (4096, 4096) and p.split == 1
    assert p.keys[0].params == (("BO", 4), ("BK", 1024), ("threads", 256))
    p = plan("reduce_sum", [(64, 20)], {"axis": -1})  # a short row: its bucket, many rows a block
    assert p.keys[0].params == (("BO", 64), ("BK", 32), ("threads", 128))
    assert plan("reduce_sum", [(9, 17)], {"axis": -1}).keys == p.keys  # same bucket, same compiled kernel
    p = plan("reduce_sum", [(64, 4096, 64)], {"axis": 1})
    assert p.kind == "cols" and p.dims == (64, 4096, 64) and p.keys[0].factory == "sum_cols"
    assert p.keys[0].params == (("BI", 64), ("BK", 64), ("threads", 256))
    assert plan("reduce_sum", [(5, 0)], {"axis": -1}).kind == "zero"
    assert plan("reduce_sum", [(0, 5)], {"axis": -1}).kind == "none"


def test_reduce_sum_splits_few_long_rows():
    p = plan("reduce_sum", [(1 << 24,)], {"axis": None})
    assert p.kind == "rows" and p.dims == (1, 1 << 24) and p.split == 4 * SM
    first, second = p.keys
    assert (first.factory, first.in_dtype, first.out_dtype) == ("sum_rows", "float32", "float32")
    assert (second.factory, second.in_dtype, second.out_dtype) == ("sum_cols", "float32", "float32")
    assert layout.kernel_text(p) == f"tilelang sum_rows+sum_cols (split into {4 * SM} f32 partials)"
    h = plan("reduce_sum", [(1 << 24,)], {"axis": None}, dtype="f16")
    assert (h.keys[0].in_dtype, h.keys[0].out_dtype, h.keys[1].in_dtype, h.keys[1].out_dtype) == (
        "float16", "float32", "float32", "float16")
    p = plan("reduce_sum", [(8192, 8192)], {"axis": 0})  # few column blocks, a long axis: split too
    assert p.kind == "cols" and p.split > 1
    assert plan("reduce_sum", [(8192, 8192)], {"axis": 0}, sm=8).split == 1  # enough blocks for a small GPU
    assert plan("reduce_sum", [(3, 1001)], {"axis": 0}).split == 1  # too short to split


def test_softmax_classes():
    p = plan("softmax", [(65536, 128)])
    assert p.kind == "rows" and p.keys[0].factory == "softmax_rows"
    assert p.keys[0].params == (("BO", 32), ("BN", 128), ("threads", 256))
    p = plan("softmax", [(4096, 8192)])
    assert p.keys[0].params == (("BO", 1), ("BN", 8192), ("threads", 256))
    p = plan("softmax", [(128, 65536)])
    assert p.keys[0].factory == "softmax_rows_online" and p.keys[0].params == (("BN", 4096), ("threads", 256))
    p = plan("softmax", [(4096, 4096)], {"axis": 0})
    assert p.kind == "cols" and p.dims == (1, 4096, 4096) and p.keys[0].factory == "softmax_cols"
    assert p.keys[0].param("BI") == 32  # 4096 columns: narrow blocks to fill 132 SMs
    assert plan("softmax", [(64, 4096, 64)], {"axis": 0}).keys[0].param("BI") == 256
    assert plan("softmax", [(0, 5)]).kind == "none"


def test_kernel_column_says_what_was_made_contiguous():
    t = layout.contiguous_strides((65, 33))
    p = plan("softmax", [(33, 65)], strides=[(t[1], t[0])])
    assert layout.kernel_text(p).startswith("tilelang softmax_rows (input made contiguous")
    assert layout.kernel_text(p) == "tilelang softmax_rows (input made contiguous)"
    p = plan("vector_add", [(33, 65), (33, 65)], strides=[(1, 33), (65, 1)])
    assert layout.kernel_text(p) == "tilelang ew_add (a made contiguous)"
    p = plan("vector_add", [(33, 65), (33, 65)], strides=[(1, 33), (1, 33)])
    assert layout.kernel_text(p) == "tilelang ew_add (inputs made contiguous)"
    p = plan("copy", [(64, 512)], out_shape=(64, 512), out_strides=(1, 64))
    assert layout.kernel_text(p) == "tilelang ew_copy (output copied back)"
    p = plan("copy", [(5, 31)], strides=[(0, 1)])  # a stride-0 broadcast view is not contiguous
    assert p.contiguous_inputs == (True,)
    assert layout.kernel_text(plan("copy", [(0,)])) == "none"
    assert layout.kernel_text(plan("reduce_sum", [(5, 0)], {"axis": -1})) == "torch zero_ (an empty sum)"
    # extent-1 dims may have any stride
    assert layout.is_contiguous((1, 7), (99, 1)) and not layout.is_contiguous((2, 7), (1, 2))


def test_kernel_key_text_and_buckets():
    key = layout.KernelKey("sum_rows", "float16", "float32", (("BO", 4), ("BK", 1024)))
    assert str(key) == "sum_rows[float16->float32, BO=4, BK=1024]"
    assert key.param("BK") == 1024
    assert [layout.clamp_pow2(n, 32, 1024) for n in (1, 33, 1000, 5000)] == [32, 64, 1024, 1024]


def test_every_plan_names_a_factory():
    """Every key the planner can produce has a factory (checked on the source: kernels.py imports tilelang)."""
    src = (Path(layout.__file__).parent / "kernels.py").read_text(encoding="utf-8")
    seen = set()
    for spec in operators.specs("core"):
        for cs in ("smoke", "default", "large", "edge"):
            for case in spec.cases(cs):
                if any(t.layout == "reversed" for t in case.inputs):
                    continue
                shapes = [t.shape for t in case.inputs]
                seen |= {k.factory for k in plan(spec.name, shapes, case.param_dict).keys}
    assert seen == {"ew_copy", "ew_relu", "ew_add", "ew_add_row", "sum_rows", "sum_cols", "softmax_rows",
                    "softmax_rows_online", "softmax_cols"}
    for name in seen:
        assert f'"{name}":' in src, name


# -- the kernel factories, lowered to CUDA source (tilelang importable; no GPU or nvcc needed) ---------------------

@pytest.mark.skipif(not HAVE_TILELANG, reason="tilelang is not installed (lowering the kernels needs it, not a GPU)")
@pytest.mark.parametrize("op,shapes,params", [
    ("copy", [(1000,)], {}), ("relu", [(1000,)], {"negative_slope": 0.5}), ("vector_add", [(17, 33), (33,)], {}),
    ("vector_add", [(64,), (64,)], {}),
    ("reduce_sum", [(1 << 24,)], {"axis": None}), ("reduce_sum", [(64, 4096, 64)], {"axis": 1}),
    ("softmax", [(64, 1000)], {}), ("softmax", [(8, 65536)], {}), ("softmax", [(1000, 33)], {"axis": 0}),
])
def test_factories_lower_to_cuda_source(op, shapes, params):
    """Each factory's T.prim_func lowers to a CUDA kernel for sm_90 (tilelang.lower: code generation, no nvcc)."""
    import tilelang
    from oprt_tilelang import kernels
    from tvm.target import Target

    for key in plan(op, shapes, params, dtype="bf16").keys:
        func = kernels.build(key)
        target = Target({"kind": "cuda", "arch": "sm_90"})
        with target:
            source = tilelang.lower(func, target=target).kernel_source
        assert f"void __launch_bounds__({key.param('threads')}, 1) {key.factory}_kernel(" in source, key


# -- on a GPU -------------------------------------------------------------------------------------------------------

def seed_of(*parts: object) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


@pytest.fixture(scope="module")
def gpu_registry():
    return Registry(get_plugin_manager())


@pytest.fixture(scope="module")
def gpu(gpu_registry):
    be = gpu_registry.get_backend("tilelang")
    avail = be.availability()
    if not avail.ok:
        pytest.skip(f"backend tilelang is unavailable: {avail.reason}")
    return be


def _gpu_params():
    for spec in operators.specs("core"):
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
    return Case(op, f"{'x'.join(map(str, shape))}-{layout_name}-{params}", (TensorCase(shape, layout_name),),
                tuple(params.items()))


GPU_PATHS = [
    _c("reduce_sum", (1 << 22,), axis=None, keepdims=False),  # split rows, then sum_cols over the partials
    _c("reduce_sum", (4, 1 << 20), axis=-1, keepdims=False),
    _c("reduce_sum", (1 << 16, 64), axis=0, keepdims=True),  # split columns
    _c("reduce_sum", (300, 500), "transposed", axis=None, keepdims=False),
    _c("softmax", (8, 65536), axis=-1),  # online max/sum
    _c("softmax", (4096, 96), axis=0),  # one column a thread
    _c("softmax", (512, 300), "transposed", axis=-1),
    _c("copy", (2048, 2048), "transposed"),
]


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU_PATHS, ids=lambda c: f"{c.op}-{c.name}")
@pytest.mark.parametrize("dtype", DTYPES)
def test_gpu_kernel_paths(gpu, gpu_registry, case, dtype):
    spec = gpu_registry.get_op(case.op)
    res, _, _ = run_checked(gpu, spec, case, dtype, seed_of(case.op, case.name, dtype))
    assert res.ok, f"{case.op}/{case.name}/{dtype}: {res.message}"


@pytest.mark.gpu
def test_gpu_compile_once_then_from_memory(gpu, gpu_registry):
    """A shape class compiles once: the first prepare reports compile_s, a second shape of the class none; the kernel
    column names the kernel."""
    spec = gpu_registry.get_op("relu")
    first = _c("relu", (3001,), negative_slope=0.25)
    second = _c("relu", (77, 13), negative_slope=0.5)
    gpu._kernels.clear()
    res, launch, _ = run_checked(gpu, spec, first, "f16", 1)
    assert res.ok and launch.compile_s is not None and launch.compile_s > 0
    res, launch2, _ = run_checked(gpu, spec, second, "f16", 2)
    assert res.ok and launch2.compile_s is None
    assert gpu.last_launch() == "tilelang ew_relu"


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
    assert info.flavour.startswith("tilelang-") and info.sm_count and info.extra["tilelang_cache_dir"]
