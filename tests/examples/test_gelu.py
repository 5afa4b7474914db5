"""examples/oprt-gelu: the gelu_tanh spec (an op oprt-core does not have), its numpy implementation, its
registration, the sweep, its generated C header and its CUDA kernel, the package's own library for backend nvidia
(``oprt_core.compiled.c_library``).

On the CPU: the library's host analogue (host_lib/oprt_host_gelu_tanh.c, built with the system C compiler) through a
CompiledBackend over the host oprt.h library, every case checked; the package's nvcc build of its library (its
setup.py, no GPU needed: it loads and plans here); the install without it and the reason the backend then gives.
On a GPU (marked gpu, skipping with the reason elsewhere): gelu_tanh on nvidia through ops.run and oprt-bench.

Needs the distribution oprt-gelu (``pip install ./examples/oprt-gelu``; tox env ``examples``).
The ``large`` case set runs only with ``OPRT_TEST_LARGE=1``.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import zlib
from importlib import metadata
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

pytest.importorskip("oprt_gelu", reason="oprt-gelu is not installed: pip install ./examples/oprt-gelu")

from gpu_helpers import available_or_skip, load_test_module, run_checked  # noqa: E402
from oprt_gelu import gelu_tanh_numpy, gelu_tanh_reference, gelu_tanh_spec  # noqa: E402
from oprt_gelu import plugin as gelu_plugin  # noqa: E402
from oprt_gelu.spec import SCALE  # noqa: E402

import oprt_core.build as oprt_build  # noqa: E402
from oprt_core import DTYPES, Registry, get_plugin_manager, hookimpl, numpy_plugin, ops  # noqa: E402
from oprt_core.cabi import abi_version, include_dir  # noqa: E402
from oprt_core.compiled import CLibraryImpl, CompiledBackend, DeviceArray, c_library  # noqa: E402
from oprt_core.errors import DeviceError, OverlapError, ShapeError, UnsupportedDtypeError  # noqa: E402
from oprt_core.operators import equip  # noqa: E402
from oprt_core.spec import REQUIRED_CASE_SETS as CASE_SETS  # noqa: E402

OPRT_BENCH = [sys.executable, "-c", "import sys; from oprt_bench.cli import main; sys.argv[0] = 'oprt-bench'; main()"]
RUN_LARGE = os.environ.get("OPRT_TEST_LARGE") == "1"
SPEC = gelu_tanh_spec
PACKAGE = Path(__file__).resolve().parents[2] / "examples" / "oprt-gelu"
HOST_GELU = Path(__file__).resolve().parent / "host_lib" / "oprt_host_gelu_tanh.c"
LIBRARY = "liboprt_gelu_nvidia.so"


def seed_of(*parts: object) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


def registry(*extra) -> Registry:
    """numpy + gelu_tanh registered in-process (no entry points), plus ``extra`` (plugin, name) pairs."""
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(numpy_plugin, "numpy", "oprt-core")
    pm.register_plugin(gelu_plugin, "gelu_tanh", "oprt-gelu")
    for plugin, name in extra:
        pm.register_plugin(plugin, name)
    return Registry(pm)


# -- the reference and the spec -----------------------------------------------------------------------------------

def test_reference_matches_the_formula_element_by_element():
    xs = np.array([-6.0, -4.0, -1.5, -0.25, 0.0, 0.25, 1.0, 3.0, 8.0])
    want = [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))) for v in xs]
    # 1 + tanh(u) cancels in float64 too (at -4: ~1e-11 relative between two orders of evaluation)
    np.testing.assert_allclose(gelu_tanh_reference(xs), want, rtol=1e-10, atol=1e-300)
    assert gelu_tanh_reference(np.array([30.0]))[0] == 30.0 and gelu_tanh_reference(np.array([-30.0]))[0] == -0.0


def test_not_a_core_op_and_its_facts():
    from oprt_core import operators

    assert "gelu_tanh" not in operators.names()
    assert set(CASE_SETS) <= set(SPEC.case_sets) and SPEC.inplace == ("x",) and SPEC.has_c_abi
    case = SPEC.cases("default")[0]
    assert SPEC.bytes_moved(case, "bf16") == 2 * case.numel * 2 and SPEC.flops(case) == 9 * case.numel
    x = SPEC.make_inputs(SPEC.cases("smoke")[0], "f32", np.random.default_rng(1))[0]
    assert x.min() < -3.5 and x.max() > 3.5 and np.all(x != 0)  # the bend and the cancelling tail, never zeros
    assert np.abs(x).max() < SCALE


# -- the budget ------------------------------------------------------------------------------------------------------

def _x(dtype: str, n: int = 20000, seed: int = 0) -> np.ndarray:
    return SPEC.make_inputs(SPEC.custom_case((n,)), dtype, np.random.default_rng(seed))[0]


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_budget_accepts_one_rounding_and_the_numpy_implementation(dtype):
    x = _x(dtype)
    ref = SPEC.reference([x])
    assert SPEC.check(ref.astype(DTYPES[dtype].numpy), [x], dtype).ok
    out = np.empty_like(x)
    gelu_tanh_numpy([x], out, {})
    assert SPEC.check(out, [x], dtype).ok


def _erf_gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_budget_rejects_wrong_results(dtype):
    x = _x(dtype)
    x64 = x.astype(np.float64)
    np_dt = DTYPES[dtype].numpy
    no_cubic = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * x64))
    assert not SPEC.check(no_cubic.astype(np_dt), [x], dtype).ok
    k = 40 if dtype == "f32" else 3  # every element a few ulps of the dtype off (40 of f32: past the f32 terms)
    assert not SPEC.check((SPEC.reference([x]) * (1 + k * DTYPES[dtype].eps)).astype(np_dt), [x], dtype).ok
    if dtype == "f32":  # the erf form is 1e-4 away: only f32 tells them apart
        assert not SPEC.check(_erf_gelu(x64).astype(np.float32), [x], dtype).ok


def test_budget_absorbs_the_cancelling_tail_in_f32():
    """For x < -3, 1 + tanh(u) cancels: an f32 formula loses digits there, and the budget's |x| * eps term allows
    exactly that; in f16 and bf16 the subnormal floor does."""
    x = np.linspace(-4, -3, 4001, dtype=np.float32)
    x32 = x.astype(np.float32)
    u = np.float32(math.sqrt(2 / math.pi)) * (x32 + np.float32(0.044715) * x32 * x32 * x32)
    f32_formula = (np.float32(0.5) * x32 * (np.float32(1) + np.tanh(u))).astype(np.float32)
    assert SPEC.check(f32_formula, [x], "f32").ok
    xb = x.astype(ml_dtypes.bfloat16)
    assert SPEC.check(SPEC.reference([xb]).astype(ml_dtypes.bfloat16), [xb], "bf16").ok


# -- the numpy backend on every case ---------------------------------------------------------------------------------

def _case_params():
    for case_set in CASE_SETS:
        if case_set == "large" and not RUN_LARGE:
            continue
        for case in SPEC.cases(case_set):
            if case_set == "default" and case.numel > 1 << 24:
                continue
            for dtype in DTYPES:
                yield pytest.param(case_set, case, dtype, id=f"{case_set}-{case.name}-{dtype}")


@pytest.fixture(scope="module")
def numpy_backend():
    return registry().get_backend("numpy")


@pytest.mark.parametrize(("case_set", "case", "dtype"), list(_case_params()))
def test_numpy_backend_every_case(numpy_backend, case_set, case, dtype):
    be = numpy_backend
    assert be.supports("gelu_tanh", dtype, case).ok
    inputs = SPEC.make_inputs(case, dtype, np.random.default_rng(seed_of(case_set, case.name, dtype)))
    out = be.empty(SPEC.output_shape([x.shape for x in inputs], {}), dtype)
    be.fill_nan(out)
    be.prepare("gelu_tanh", [be.to_device(x) for x in inputs], out, {})()
    res = SPEC.check(be.to_host(out), inputs, dtype)
    assert res.ok, f"{case_set}/{case.name}/{dtype}: {res.message}"


def test_in_place_through_the_op_api():
    reg = registry()
    x = _x("f32", 1000, 3)
    y = x.copy()
    assert ops.run("gelu_tanh", [y], backend="numpy", out=y, registry=reg) is y
    assert SPEC.check(y, [x], "f32").ok and not np.array_equal(y, x)


def test_registration_in_process():
    reg = registry()
    assert reg.owner[("op", "gelu_tanh")] == "gelu_tanh"
    assert reg.owner[("impl", "gelu_tanh@numpy")] == "gelu_tanh"
    row = {p.name: p for p in reg.plugins()}["gelu_tanh"]
    assert row.ops == ["gelu_tanh"] and row.error is None
    assert row.impls == ["gelu_tanh@numpy", "gelu_tanh@triton", "gelu_tanh@nvidia"]
    # no triton or nvidia backend in this registry: their implementations are unused, not an error
    assert reg.unused_impls == {("triton", "gelu_tanh"): "backend 'triton' is not registered",
                                ("nvidia", "gelu_tanh"): "backend 'nvidia' is not registered"}
    # nvidia's names the package's own library, loaded only when the op is first asked for
    impl = reg.impls[("nvidia", "gelu_tanh")]
    assert isinstance(impl, CLibraryImpl) and impl.path == str(gelu_plugin.NVIDIA_LIBRARY)
    assert Path(impl.path).name == LIBRARY and Path(impl.path).parent == Path(gelu_plugin.__file__).resolve().parent


def test_other_backends_leave_it_unsupported():
    """Backends without an implementation say so in supports(), available or not; nvidia supports it where the
    package's library was built, and otherwise says why not, naming it."""
    case = SPEC.cases("smoke")[0]
    baselines = pytest.importorskip("oprt_bench.baselines", reason="oprt-bench is not installed")
    for be in (equip(baselines.TorchBackend()), equip(baselines.CupyBackend())):
        sup = be.supports("gelu_tanh", "f32", case)
        assert not sup.ok and "gelu_tanh" in sup.reason
    full = Registry(get_plugin_manager())
    for name in ("metax", "torch", "cupy"):
        if name in full.backends:
            sup = full.get_backend(name).supports("gelu_tanh", "f32", case)
            assert not sup.ok and sup.reason, name
    if "nvidia" in full.backends:
        sup = full.get_backend("nvidia").supports("gelu_tanh", "f32", case)
        assert sup.ok == gelu_plugin.NVIDIA_LIBRARY.is_file() and (sup.ok or LIBRARY in sup.reason), sup.reason


def _installed(dist: str) -> bool:
    try:
        metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return False
    return True


def _smoke_sweep(tmp_path, backend: str, budget: str, timeout: float) -> list[dict]:
    """``oprt-bench --ops gelu_tanh --backends BACKEND --cases smoke``'s rows: exit 0, one row a case and dtype."""
    import csv

    out = tmp_path / "run"
    proc = subprocess.run([*OPRT_BENCH, "--ops", "gelu_tanh", "--backends", backend, "--baseline", "none",
                           "--cases", "smoke", "--time-budget", budget, "--out", str(out)],
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = list(csv.DictReader(next(out.rglob("*.csv")).open()))
    assert len(rows) == len(SPEC.cases("smoke")) * len(DTYPES), rows
    return rows


@pytest.mark.skipif(not _installed("oprt-bench"), reason="oprt-bench is not installed")
def test_cli_sweep_numpy(tmp_path):
    """``oprt-bench --ops gelu_tanh --backends numpy --cases smoke`` through the installed entry points."""
    rows = _smoke_sweep(tmp_path, "numpy", "0.02", 300)
    assert {r["status"] for r in rows} == {"ok"} and {r["op"] for r in rows} == {"gelu_tanh"}


# -- its C ABI and CUDA kernel --------------------------------------------------------------------------------------

def test_the_committed_c_header_is_generated_from_the_spec():
    from oprt_core import cdecl

    header = PACKAGE / "include" / "oprt_gelu_tanh.h"
    assert header.read_text(encoding="utf-8") == cdecl.header([SPEC], "OPRT_GELU_TANH_H_"), (
        "stale: python -m oprt_core.cdecl --header oprt_gelu.spec:gelu_tanh_spec > "
        "examples/oprt-gelu/include/oprt_gelu_tanh.h")
    text = header.read_text(encoding="utf-8")
    assert "const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *x);" in text
    assert "void *out, const void *x, oprt_stream_t stream);" in text
    assert "d_->common.alias.inplace[0] = 1;" in text  # out may be x: the spec's inplace


def test_the_cuda_kernel_compiles(tmp_path):
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    if nvcc is None:
        pytest.skip("nvcc is not installed (the kernel compiles with it; no GPU needed)")
    obj = tmp_path / "gelu_tanh.o"
    proc = subprocess.run([nvcc, "-std=c++17", "-c", f"-I{include_dir()}", f"-I{PACKAGE / 'include'}",
                           str(PACKAGE / "csrc" / "gelu_tanh.cu"), "-o", str(obj)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    nm = shutil.which("nm")
    symbols = subprocess.run([nm, "-g", str(obj)], capture_output=True, text=True).stdout if nm else ""
    for name in ("oprt_create_gelu_tanh_descriptor", "oprt_gelu_tanh", "oprt_destroy_gelu_tanh_descriptor"):
        assert not symbols or f" T {name}\n" in symbols, name


def test_ops_has_a_function_for_the_plugin_op():
    """``oprt_core.ops.gelu_tanh`` is made from the spec, as the core ops' functions are (installed plugin)."""
    import inspect

    assert list(inspect.signature(ops.gelu_tanh).parameters) == ["x", "backend", "out"]
    x = _x("f32", 100, 5)
    np.testing.assert_array_equal(ops.gelu_tanh(x), ops.run("gelu_tanh", [x]))


# -- its kernel as a library of its own, for backend nvidia (oprt_core.compiled.c_library) ---------------------------

def _cc() -> str:
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name):
            return name
    pytest.skip("no C compiler (cc, gcc or clang) to build the host libraries")


@pytest.fixture(scope="module")
def host_lib_path(tmp_path_factory) -> Path:
    """The host (CPU) implementation of oprt.h, built as tests/oprt_core's fixtures build it."""
    pytest.importorskip("cffi")
    return load_test_module("oprt_core/conftest.py").build_host_library(tmp_path_factory.mktemp("host_lib"))


def host_backend(path: Path) -> CompiledBackend:
    be = CompiledBackend("host", load_test_module("oprt_core/conftest.py").host_loader(path), vendor="host",
                         dlpack_device_type=1)
    avail = be.availability()
    assert avail.ok, avail.reason
    return be


@pytest.fixture(scope="module")
def host_gelu_lib(tmp_path_factory) -> Path:
    """host_lib/oprt_host_gelu_tanh.c: the package's entry points (its generated header) on the CPU."""
    out = tmp_path_factory.mktemp("host_gelu") / "liboprt_gelu_host.so"
    cmd = [_cc(), "-std=gnu11", "-O2", "-Wall", "-Werror", "-shared", "-fPIC", f"-I{include_dir()}",
           f"-I{PACKAGE / 'include'}", str(HOST_GELU), "-o", str(out), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, " ".join(cmd) + "\n" + proc.stdout + proc.stderr
    return out


class _HostGelu:
    """A plugin giving the host backend and gelu_tanh's host op library to it, as oprt-gelu does for nvidia."""

    def __init__(self, backend: CompiledBackend, library: Path):
        self.backend, self.library = backend, library

    @hookimpl
    def oprt_register_backends(self, register):
        register(self.backend)

    @hookimpl
    def oprt_register_impls(self, register):
        register("host", "gelu_tanh", c_library(self.library))


def test_host_op_library_on_every_case(host_lib_path, host_gelu_lib):
    """The add_op path with a separate library, end to end on the CPU: registered by a plugin, loaded with cffi's ABI
    mode, every smoke and edge case checked against the float64 reference, the op API, errors in the library's own
    words."""
    reg = registry((_HostGelu(host_backend(host_lib_path), host_gelu_lib), "host-gelu"))
    be = reg.get_backend("host")
    assert ("host", "gelu_tanh") not in reg.unused_impls and be.supports("gelu_tanh", "f32").ok
    for case_set in ("smoke", "edge"):
        for case in SPEC.cases(case_set):
            res, _, _ = run_checked(be, SPEC, case, "f32", seed_of(case_set, case.name))
            assert res.ok, f"{case_set}/{case.name}: {res.message}"
    x = _x("f32", 3000, 7)
    assert SPEC.check(ops.run("gelu_tanh", [x], backend="host", registry=reg), [x], "f32").ok
    y = be.to_device(x)
    assert ops.run("gelu_tanh", [y], backend="host", out=y, registry=reg) is y  # in place
    assert SPEC.check(be.to_host(y), [x], "f32").ok
    # statuses carry the op library's own text, not the backend library's
    x16 = be.to_device(_x("f16", 10))
    with pytest.raises(UnsupportedDtypeError, match=r"gelu_tanh \(host op library\): f32 only, got dtype 1"):
        be.prepare("gelu_tanh", [x16], be.empty((10,), "f16"), {})
    with pytest.raises(ShapeError, match=r"shape mismatch: copy needs out \(9,\) to equal x \(10,\)"):
        be.prepare("gelu_tanh", [be.to_device(_x("f32", 10))], be.empty((9,), "f32"), {})
    assert "gelu_tanh" not in be.last_error() and "copy needs" not in be.last_error()
    buf = be.to_device(_x("f32", 11))
    head = DeviceArray(be, buf.ptr, (10,), (1,), "f32", buf.owner)
    tail = DeviceArray(be, buf.ptr + 4, (10,), (1,), "f32", buf.owner)
    with pytest.raises(OverlapError, match="gelu_tanh: out overlaps input x"):
        be.prepare("gelu_tanh", [tail], head, {})()


def _setup_build_ext(dest: Path, **env: str) -> subprocess.CompletedProcess:
    """The package's setup.py build_ext into ``dest/lib`` (objects in ``dest/temp``), as pip's build runs it."""
    pytest.importorskip("setuptools", minversion="77", reason="pyproject.toml's license needs setuptools>=77")
    return subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "-b", str(dest / "lib"), "-t",
                           str(dest / "temp")], cwd=PACKAGE, env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def nvcc_gelu_lib(tmp_path_factory) -> Path:
    """liboprt_gelu_nvidia.so as the package's install builds it (OPRT_GELU_NVIDIA=on: a missing nvcc fails)."""
    try:
        oprt_build.find_nvcc()
    except oprt_build.BuildError as exc:
        pytest.skip(f"the package's nvidia library builds with nvcc: {exc}")
    dest = tmp_path_factory.mktemp("gelu_nvcc")
    proc = _setup_build_ext(dest, OPRT_GELU_NVIDIA="on")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    lib = dest / "lib" / "oprt_gelu" / LIBRARY
    assert lib.is_file(), proc.stdout[-2000:]
    return lib


def test_the_package_builds_its_nvidia_library_with_nvcc(nvcc_gelu_lib):
    """Compiled and linked by nvcc (no GPU needed): self-contained (the error text and ABI version compiled in),
    exporting the op's entry points and its runtime's, nothing of the static CUDA runtime."""
    log = (nvcc_gelu_lib.parent / "build-nvidia.log").read_text()
    assert log.startswith(f"# oprt-gelu build of {LIBRARY}: nvcc "), log[:300]
    assert "gelu_tanh.cu" in log and "oprt_op_runtime.cu" in log and "-Bsymbolic" in log
    nm = shutil.which("nm")
    if nm is None:
        return
    defined = set(subprocess.run([nm, "-D", "--defined-only", str(nvcc_gelu_lib)], capture_output=True,
                                 text=True).stdout.split())
    assert {"oprt_create_gelu_tanh_descriptor", "oprt_get_gelu_tanh_workspace_size", "oprt_gelu_tanh",
            "oprt_destroy_gelu_tanh_descriptor", "oprt_last_error_message", "oprt_status_string",
            "oprt_library_abi_version"} <= defined
    assert not [s for s in defined if s.startswith("cuda")], "the static CUDA runtime's symbols are exported"
    undefined = subprocess.run([nm, "-D", "--undefined-only", str(nvcc_gelu_lib)], capture_output=True,
                               text=True).stdout
    assert "oprt_" not in undefined, undefined


def test_its_nvidia_library_loads_and_plans_on_the_cpu(host_lib_path, nvcc_gelu_lib):
    """The nvcc library through c_library on a backend over the host library: it loads without a driver (the CUDA
    runtime is static), its descriptors are made and checked on the host, its statuses carry its own text. No kernel
    is launched where a driver is present (the host backend's memory is not the GPU's)."""
    import ctypes.util

    be = host_backend(host_lib_path)
    be.add_op(SPEC, c_library(nvcc_gelu_lib))
    for dtype in DTYPES:
        assert be.supports("gelu_tanh", dtype).ok, be.supports("gelu_tanh", dtype).reason
    lib = be._op_library("gelu_tanh")
    assert int(lib.lib.oprt_library_abi_version()) == abi_version()
    x = be.to_device(_x("f32", 7))
    with pytest.raises(ShapeError, match=r"shape mismatch: copy needs out \(3,\) to equal x \(7,\)"):
        be.prepare("gelu_tanh", [x], be.empty((3,), "f32"), {})
    assert "copy needs" not in be.last_error()
    launch = be.prepare("gelu_tanh", [x], be.empty((7,), "f32"), {})
    assert launch.workspace_size == 0
    empty = be.to_device(np.zeros((0,), np.float32))
    be.prepare("gelu_tanh", [empty], be.empty((0,), "f32"), {})()  # nothing to launch
    if ctypes.util.find_library("cuda") is None and not Path("/proc/driver/nvidia").exists():
        with pytest.raises(DeviceError, match=r"\]: gelu_tanh: ") as err:  # the launch's runtime error, in its words
            launch()
        assert "gelu_tanh" not in be.last_error(), err.value


def test_the_package_installs_without_its_library(host_lib_path, tmp_path, monkeypatch):
    """Where it is not built (OPRT_GELU_NVIDIA=off here; no nvcc in auto mode likewise) the build succeeds, the log
    says why, and the backend reports gelu_tanh unsupported with that reason."""
    proc = _setup_build_ext(tmp_path, OPRT_GELU_NVIDIA="off")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = tmp_path / "lib" / "oprt_gelu"
    assert not (folder / LIBRARY).exists()
    assert (folder / "build-nvidia.log").read_text() == "not built: OPRT_GELU_NVIDIA=off\n"
    monkeypatch.setattr(gelu_plugin, "NVIDIA_BUILD_LOG", folder / "build-nvidia.log")
    be = host_backend(host_lib_path)
    be.add_op(SPEC, c_library(folder / LIBRARY, missing=gelu_plugin.nvidia_library_missing))
    sup = be.supports("gelu_tanh", "f32")
    assert not sup.ok and f"{LIBRARY} is not there: oprt-gelu was installed without it (not built: " \
                          "OPRT_GELU_NVIDIA=off); reinstall it where nvcc is found" in sup.reason, sup.reason
    bad = _setup_build_ext(tmp_path / "bad", OPRT_GELU_NVIDIA="maybe")
    assert bad.returncode != 0 and "OPRT_GELU_NVIDIA='maybe' is not one of auto, on, off" in bad.stderr, bad.stderr


# -- on a GPU: gelu_tanh on nvidia, through the package's library --------------------------------------------------

@pytest.fixture(scope="module")
def nvidia_gelu():
    """The nvidia backend of the installed plugins, available and supporting gelu_tanh (else a skip saying why)."""
    from oprt_core import get_registry

    if "nvidia" not in get_registry().backends:
        pytest.skip("oprt-nvidia is not installed (no backend nvidia)")
    be = available_or_skip(get_registry().get_backend("nvidia"), "nvidia")
    sup = be.supports("gelu_tanh", "f32")
    if not sup.ok:
        pytest.skip(f"nvidia does not support gelu_tanh here: {sup.reason}")
    return be


@pytest.mark.gpu
def test_nvidia_runs_it_through_the_packages_library(nvidia_gelu):
    be = nvidia_gelu
    for case_set in ("smoke", "edge"):
        for case in SPEC.cases(case_set):
            for dtype in DTYPES:
                res, _, _ = run_checked(be, SPEC, case, dtype, seed_of("nvidia", case_set, case.name, dtype))
                assert res.ok, f"{case_set}/{case.name}/{dtype}: {res.message}"
    assert be.last_launch() is None  # the backend's library did not run it: the kernel column stays empty
    # the op API: numpy in, numpy out; a device array in place; the cached fast path on the second call
    x = _x("bf16", 5000, 11)
    for _ in range(2):
        assert SPEC.check(ops.run("gelu_tanh", [x], backend="nvidia"), [x], "bf16").ok
    for _ in range(2):
        y = be.to_device(x)
        assert ops.gelu_tanh(y, backend="nvidia", out=y) is y
        assert SPEC.check(be.to_host(y), [x], "bf16").ok
    # errors in the library's own words
    buf = be.to_device(_x("f32", 11))
    head = DeviceArray(be, buf.ptr, (10,), (1,), "f32", buf.owner)
    tail = DeviceArray(be, buf.ptr + 4, (10,), (1,), "f32", buf.owner)
    with pytest.raises(OverlapError, match="gelu_tanh: out overlaps input x"):
        be.prepare("gelu_tanh", [tail], head, {})()
    # the launch runs on the stream the backend's events are recorded on: they time it
    n = 1 << 24
    big, out = be.to_device(_x("f32", n, 12)), be.empty((n,), "f32")
    launch = be.prepare("gelu_tanh", [big], out, {})
    launch()
    start, end = be.event(), be.event()
    start.record()
    for _ in range(10):
        launch()
    end.record()
    ms = start.elapsed_ms(end)
    assert ms > 10 * 2 * 4 * n / 10e12 * 1e3, ms  # 10 launches moving 128 MiB each, under a 10 TB/s ceiling
    assert SPEC.check(be.to_host(out), [be.to_host(big)], "f32").ok


@pytest.mark.gpu
@pytest.mark.skipif(not _installed("oprt-bench"), reason="oprt-bench is not installed")
def test_cli_sweep_nvidia(nvidia_gelu, tmp_path):
    """``oprt-bench --ops gelu_tanh --backends nvidia --cases smoke``: ok rows, timed."""
    rows = _smoke_sweep(tmp_path, "nvidia", "0.05", 600)
    assert {r["status"] for r in rows} == {"ok"}, [(r["status"], r.get("message")) for r in rows]
    assert {(r["op"], r["backend"]) for r in rows} == {("gelu_tanh", "nvidia")}
