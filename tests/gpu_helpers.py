"""Helpers shared by the backend test suites (tests/oprt_nvidia, tests/oprt_metax; :func:`run_checked` by every
backend's case tests).

A compiled backend implements the same oprt.h as oprt_nvidia, so its suite reuses the nvidia suite's test
functions rather than copying them: :func:`reuse_tests` loads a test module of ``tests/oprt_nvidia`` under
a private name and returns its ``test_*`` functions with their fixture arguments renamed (e.g.
``nvidia_backend`` -> ``metax_backend``), parametrize marks and all. Assign them in a test module's
namespace and pytest collects them there, with that folder's fixtures.

The rest is what the two suites would otherwise write twice: the bodies of their conftest fixtures
(:func:`tdesc_maker`, :func:`available_or_skip`, :func:`seeded_rng`) and of the build, plugin and device
checks that any oprt.h backend passes (``check_*``), called from each suite's own named test functions. The
conftests register this module for pytest's assertion rewriting, so its asserts report as a test's do.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

TESTS = Path(__file__).resolve().parent


def run_checked(backend: Any, spec: Any, case: Any, dtype: str, seed: int) -> tuple[Any, Any, Any]:
    """One case the way the bench measures it: fresh inputs (seeded), a NaN-poisoned output, prepare, run, compare
    with the float64 reference. Returns ``(check result, launcher, out)``."""
    import numpy as np

    params = spec.validate_params(case.param_dict, [t.shape for t in case.inputs])
    inputs = spec.make_inputs(case, dtype, np.random.default_rng(seed))
    out = spec.new_outputs(backend, [x.shape for x in inputs], params, dtype)  # a tuple for a multi-output op
    outs = out if spec.multi_output else (out,)
    for o in outs:
        backend.fill_nan(o)
    launch = backend.prepare(spec.name, [backend.to_device(x) for x in inputs], out, params)
    launch()
    backend.synchronize()
    host = tuple(backend.to_host(o) for o in outs)
    return spec.check(host if spec.multi_output else host[0], inputs, dtype, params), launch, out


def load_test_module(relpath: str) -> ModuleType:
    """Import ``tests/<relpath>`` as its own module (``_reused_<path>``), apart from pytest's copy."""
    path = TESTS / relpath
    name = "_reused_" + relpath.replace("/", "_").removesuffix(".py")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def rename_fixtures(fn: Callable[..., Any], mapping: dict[str, str]) -> Callable[..., Any]:
    """``fn`` with its arguments renamed by ``mapping`` (pytest reads fixture names from the signature)."""
    sig = inspect.signature(fn)
    inverse = {new: old for old, new in mapping.items()}

    @functools.wraps(fn)
    def wrapper(**kwargs: Any) -> Any:
        return fn(**{inverse.get(k, k): v for k, v in kwargs.items()})

    wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[p.replace(name=mapping.get(p.name, p.name)) for p in sig.parameters.values()])
    return wrapper


def reuse_tests(relpath: str, mapping: dict[str, str], *, exclude: tuple[str, ...] = (),
                prefix: str = "test_") -> dict[str, Callable[..., Any]]:
    """Every ``test_*`` function of ``tests/<relpath>`` but ``exclude``, renamed to ``prefix + rest``."""
    module = load_test_module(relpath)
    out = {}
    for name, obj in vars(module).items():
        if name.startswith("test_") and inspect.isfunction(obj) and name not in exclude:
            out[prefix + name.removeprefix("test_")] = rename_fixtures(obj, mapping)
    return out


# ---- fixture bodies (tests/oprt_nvidia/conftest.py, tests/oprt_metax/conftest.py) --------------------------------
def contiguous_strides(shape) -> tuple[int, ...]:
    """Row-major strides in elements (extent-0 dims count as 1)."""
    strides, run = [], 1
    for n in reversed(shape):
        strides.append(run)
        run *= max(int(n), 1)
    return tuple(reversed(strides))


def tdesc_maker(ffi) -> Callable[..., Any]:
    """``make(shape, dtype=0, strides=None)`` -> a new ``oprt_tensor_desc_t *`` (contiguous by default)."""

    def make(shape, dtype=0, strides=None):
        shape = tuple(shape)
        strides = contiguous_strides(shape) if strides is None else tuple(strides)
        t = ffi.new("oprt_tensor_desc_t *")
        t.dtype = dtype
        t.ndim = len(shape)
        for i, (n, s) in enumerate(zip(shape, strides)):
            t.shape[i] = n
            t.strides[i] = s
        return t

    return make


def available_or_skip(raw: Any, name: str) -> Any:
    """``raw`` when available; otherwise the test skips with the backend's availability reason."""
    import pytest

    avail = raw.availability()
    if not avail.ok:
        pytest.skip(f"backend {name} is unavailable: {avail.reason}")
    return raw


def seeded_rng(request: Any) -> Any:
    """A generator seeded from the test's id: fresh but reproducible inputs per test."""
    import numpy as np

    return np.random.default_rng(abs(hash(request.node.nodeid)) % (1 << 32))


# ---- checks any compiled oprt.h backend passes (test_nvidia_build.py, test_metax_build.py) ------------------------
def library_info(ext: Any) -> dict[str, object]:
    """``oprt_get_library_info`` as a dict of Python values."""
    ffi, lib = ext.ffi, ext.lib
    info = ffi.new("oprt_library_info_t *")
    assert lib.oprt_get_library_info(info) == 0
    fields = ("backend", "flavour", "toolchain", "architectures", "runtime_version")
    return {"abi_version": int(info.abi_version), **{f: ffi.string(getattr(info, f)).decode() for f in fields}}


def check_no_device_is_a_status_in_a_fresh_process(package: str) -> None:
    """The first runtime call of a fresh process (no GPU here, maybe): a status and the runtime's text."""
    code = textwrap.dedent(f"""
        from {package} import load_extension
        ext = load_extension()
        n = ext.ffi.new("int32_t *")
        st = ext.lib.oprt_get_device_count(n)
        print(st, n[0], ext.ffi.string(ext.lib.oprt_last_error_message()).decode())
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    status, count, *_ = proc.stdout.split()
    assert (int(status), int(count) > 0) in ((0, True), (10, False)), proc.stdout


def check_availability_has_a_reason(raw: Any) -> None:
    avail = raw.availability()
    assert avail.reason
    count = raw.ffi.new("int32_t *")
    if raw.lib.oprt_get_device_count(count) != 0:
        assert not avail.ok
        assert "device" in avail.reason.lower() or "driver" in avail.reason.lower()
    else:
        assert avail.ok, avail.reason


OPRT_CORE = TESTS.parent / "oprt_core" / "src" / "oprt_core"


def check_sources_match_the_log(log_path: Path, cute: bool = False) -> None:
    """Every kernel source both vendors build (``operators/*/*.cu`` and the include folder's ``oprt_shared/*.cu``,
    when this is a checkout) was built, and the CUTLASS sources (``operators/*/sm90/*.cu``, nvidia only) exactly where
    ``cute`` says so."""
    import pytest

    if not (OPRT_CORE / "operators").is_dir():
        pytest.skip("not run from a checkout")
    text = log_path.read_text(encoding="utf-8")
    want = {p.name for p in [*(OPRT_CORE / "include" / "oprt_shared").glob("*.cu"),
                             *(OPRT_CORE / "operators").glob("*/*.cu")]}
    if cute:
        want |= {p.name for p in (OPRT_CORE / "operators").glob("*/sm90/*.cu")}
    assert want == set(re.findall(r"^## (\S+\.cu):", text, re.M))


def check_entry_point_is_installed(name: str, value: str) -> None:
    from importlib import metadata

    eps = [ep for ep in metadata.entry_points(group="oprt") if ep.name == name]
    assert [ep.value for ep in eps] == [value]
    from oprt_core import get_registry

    assert get_registry().get_backend(name).name == name


def check_descriptors_need_no_device(ext: Any, tdesc: Callable[..., Any]) -> None:
    """Creating and destroying descriptors is host-only work."""
    ffi, lib = ext.ffi, ext.lib
    for op, args in (
        ("copy", (tdesc((33, 65)), tdesc((33, 65), strides=(1, 33)))),
        ("vector_add", (tdesc((4, 5)), tdesc((4, 5)), tdesc((5,)))),
        ("relu", (tdesc((7,)), tdesc((7,)), 0.1)),
        ("reduce_sum", (tdesc((5,)), tdesc((5, 9)), -1, 0)),
        ("softmax", (tdesc((5, 9)), tdesc((5, 9)), 0)),
    ):
        p = ffi.new(f"oprt_{op}_descriptor_t *")
        assert getattr(lib, f"oprt_create_{op}_descriptor")(p, *args) == 0, ffi.string(lib.oprt_last_error_message())
        size = ffi.new("size_t *", 123)
        assert getattr(lib, f"oprt_get_{op}_workspace_size")(p[0], size) == 0
        assert getattr(lib, f"oprt_destroy_{op}_descriptor")(p[0]) == 0


def check_pointer_entry_points(ext: Any, tdesc: Callable[..., Any]) -> None:
    """Every op has oprt_ptrs_<op> (the launch on integer pointers the op API's fast path uses), and it
    forwards each pointer to its own parameter: a null pointer in one position is reported by that
    parameter's name, exactly as through oprt_<op> with cast pointers (host-only: the null checks come
    before any device work)."""
    ffi, lib = ext.ffi, ext.lib
    cases = (
        ("copy", (tdesc((33, 65)), tdesc((33, 65))), ("out", "x")),
        ("vector_add", (tdesc((4, 5)), tdesc((4, 5)), tdesc((4, 5))), ("out", "a", "b")),
        ("relu", (tdesc((7,)), tdesc((7,)), 0.1), ("out", "x")),
        ("reduce_sum", (tdesc((5,)), tdesc((5, 9)), -1, 0), ("out", "x")),
        ("softmax", (tdesc((5, 9)), tdesc((5, 9)), -1), ("out", "x")),
        # two outputs (out, h) before the inputs
        ("add_rms_norm", (*(tdesc((4, 64)) for _ in range(4)), tdesc((64,)), 1e-6),
         ("out", "h", "x", "residual", "weight")),
        # an optional input given (matmul's c, beta != 0): its pointer forwarded and checked like the others
        ("matmul", (tdesc((4, 5)), tdesc((4, 3)), tdesc((3, 5)), tdesc((4, 5)), 1.0, 0.5, 0), ("out", "a", "b", "c")),
    )
    for op, args, names in cases:
        nout = 2 if op == "add_rms_norm" else 1
        fast = getattr(lib, f"oprt_ptrs_{op}")
        slow = getattr(lib, f"oprt_{op}")
        p = ffi.new(f"oprt_{op}_descriptor_t *")
        assert getattr(lib, f"oprt_create_{op}_descriptor")(p, *args) == 0, ffi.string(lib.oprt_last_error_message())
        try:
            for null in range(len(names)):  # pointer `null` is NULL, the others plausible device addresses
                ptrs = [0 if i == null else (1 << 40) + (i << 20) for i in range(len(names))]
                got = fast(p[0], 0, 0, *ptrs)
                fast_msg = ffi.string(lib.oprt_last_error_message()).decode()
                cast = [ffi.cast("void *", q) for q in ptrs[:nout]] + [ffi.cast("const void *", q) for q in ptrs[nout:]]
                want = slow(p[0], ffi.NULL, 0, *cast, ffi.NULL)
                slow_msg = ffi.string(lib.oprt_last_error_message()).decode()
                assert got == want == lib.OPRT_STATUS_NULL_POINTER, (op, names[null], got, want)
                # the core ops' own entry points name it bare, the generated ones (oprt_entry.h) quoted
                named = f"{names[null]} is NULL" in fast_msg or f"'{names[null]}' is NULL" in fast_msg
                assert fast_msg == slow_msg and named, (fast_msg, slow_msg)
            assert fast(ffi.NULL, 0, 0, *([1 << 40] * len(names))) == lib.OPRT_STATUS_NULL_POINTER
        finally:
            assert getattr(lib, f"oprt_destroy_{op}_descriptor")(p[0]) == 0


# (shape, axis) of reductions split across blocks; axis -128 is OPRT_AXIS_ALL
SPLIT_REDUCTIONS = [((1 << 24,), -128), ((4, 1 << 22), -1), ((1 << 13, 1 << 13), 0)]


def check_reduce_sum_workspace_for_split_reductions(ext: Any, tdesc: Callable[..., Any], shape, axis) -> None:
    """Few long rows or columns are split across blocks: the partial sums need a workspace."""
    ffi, lib = ext.ffi, ext.lib
    out_shape = () if axis == -128 else tuple(n for i, n in enumerate(shape) if i != axis % len(shape))
    p = ffi.new("oprt_reduce_sum_descriptor_t *")
    assert lib.oprt_create_reduce_sum_descriptor(p, tdesc(out_shape), tdesc(shape), axis, 0) == 0
    size = ffi.new("size_t *")
    assert lib.oprt_get_reduce_sum_workspace_size(p[0], size) == 0
    assert size[0] > 0
    assert size[0] < 64 << 20
    lib.oprt_destroy_reduce_sum_descriptor(p[0])


def check_device_index_out_of_range(backend: Any, make_backend: Callable[[], Any]) -> None:
    """A bad device index: BadDeviceError from set_device, and a second backend on it is unavailable."""
    import pytest

    import oprt_core.errors as E

    with pytest.raises(E.BadDeviceError):
        backend.set_device(4096)
    other = make_backend()
    other.device = 4096
    assert not other.availability().ok
    with pytest.raises(E.BadDeviceError):
        other.empty((3,), "f32")


def check_torch_inputs(name: str, dtype: str) -> None:
    """Zero-copy torch tensors (CUDA memory) in and out of backend ``name``; skips without torch or CUDA."""
    import pytest

    import oprt_core.ops as ops

    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    tdt = getattr(torch, dtype)
    a = torch.randn(257, 129, device="cuda").to(tdt)
    b = torch.randn(129, device="cuda").to(tdt)
    out = torch.empty_like(a)
    ops.vector_add(a, b, backend=name, out=out)
    torch.cuda.synchronize()
    torch.testing.assert_close(out.float(), (a.float() + b.float()).to(tdt).float())
    t = torch.randn(64, 512, device="cuda").to(tdt)
    sm = torch.empty_like(t)
    ops.softmax(t.t(), axis=0, backend=name, out=sm.t())
    torch.cuda.synchronize()
    torch.testing.assert_close(sm.float(), torch.softmax(t.float(), dim=-1), atol=1e-2, rtol=1e-2)


def check_op_api_fast_path(backend: Any, lib: str, dtype: str, rng: Any) -> None:
    """The op API's fast path on ``lib`` arrays ("torch" or "cupy") of ``backend``: every op, contiguous and
    transposed layouts, params that share an out layout (reduce_sum axis 0 / 1, relu slopes), three rounds of
    fresh random inputs and fresh NaN-filled outs (new pointers each call), each result checked against the
    float64 reference; round 0 takes the full path once per case, rounds 1-2 never do. Then arrays the fast path
    must not launch on, in a layout it holds: host memory, and (torch) a tensor that requires grad."""
    import numpy as np
    import pytest

    import oprt_core.ops as ops
    from oprt_core import operators
    from oprt_core.dtypes import get_dtype
    from oprt_core.errors import InvalidArgumentError

    if not backend.cuda_interop:
        pytest.skip(f"backend {backend.name!r}'s memory is not CUDA memory: no torch or CuPy arrays")
    from oprt_core.plugins import get_registry

    backend = get_registry().get_backend(backend.name)  # the op API's instance: its arrays are the ones ops.* takes
    odt = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}[dtype]
    if lib == "torch":
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("torch sees no CUDA device")
        tdt = getattr(torch, dtype)

        def rnd(*shape):
            return torch.from_numpy(rng.uniform(-4, 4, shape).astype(np.float32)).cuda().to(tdt)

        def empty(*shape):
            return torch.full(shape, float("nan"), device="cuda", dtype=tdt)

        def host(a):
            return a.float().cpu().numpy().astype(get_dtype(odt).numpy)

        def tr(a):
            return a.t()
    else:
        cp = pytest.importorskip("cupy")
        if odt == "bf16":
            pytest.skip("CuPy has no bfloat16")

        def rnd(*shape):
            return cp.asarray(rng.uniform(-4, 4, shape).astype(dtype))

        def empty(*shape):
            return cp.full(shape, np.nan, dtype=dtype)

        def host(a):
            return cp.asnumpy(a)

        def tr(a):
            return a.T

    name = backend.name
    ops.clear_cache()  # other tests' calls may have filed these layouts (test_torch_inputs' vector_add does)
    # (op, params, inputs, out): each call is ops.<op>(*inputs, **params, backend=name, out=out)
    cases = [
        ("copy", {}, lambda: [rnd(257, 129)], lambda: empty(257, 129)),
        ("copy", {}, lambda: [tr(rnd(129, 257))], lambda: empty(257, 129)),
        ("vector_add", {}, lambda: [rnd(257, 129), rnd(129)], lambda: empty(257, 129)),
        ("relu", {"negative_slope": 0.0}, lambda: [rnd(33, 1000)], lambda: empty(33, 1000)),
        ("relu", {"negative_slope": 0.125}, lambda: [rnd(33, 1000)], lambda: empty(33, 1000)),
        ("reduce_sum", {"axis": 0}, lambda: [rnd(96, 96)], lambda: empty(96)),
        ("reduce_sum", {"axis": 1}, lambda: [rnd(96, 96)], lambda: empty(96)),
        ("softmax", {"axis": -1}, lambda: [rnd(33, 1000)], lambda: empty(33, 1000)),
        ("softmax", {"axis": 0}, lambda: [tr(rnd(64, 512))], lambda: tr(empty(64, 512))),
    ]
    full: list[str] = []
    real_full = ops._full
    ops._full = lambda *a: (full.append(a[0]), real_full(*a))[1]
    try:
        for round_ in range(3):
            full.clear()
            for op, params, make_in, make_out in cases:
                ins, out = make_in(), make_out()
                assert getattr(ops, op)(*ins, **params, backend=name, out=out) is out
                backend.synchronize()
                spec = operators.spec(op)
                res = spec.check(host(out), [host(x) for x in ins], odt, spec.validate_params(params))
                assert res.ok, f"{lib} {op} {params} round {round_}: {res.message}"
            assert len(full) == (len(cases) if round_ == 0 else 0), (round_, full)
    finally:
        ops._full = real_full
    x, out = rnd(257, 129), empty(257, 129)
    ops.copy(x, backend=name, out=out)  # the layout is the fast path's now
    if lib == "torch":
        with pytest.raises(InvalidArgumentError, match="cannot use a torch.Tensor"):
            ops.copy(x.cpu(), backend=name, out=out)
        with pytest.raises(InvalidArgumentError, match="out must be a device array"):
            ops.copy(x, backend=name, out=host(out))
        with pytest.raises(InvalidArgumentError, match="requires grad"):
            ops.copy(x.detach().clone().requires_grad_(True), backend=name, out=out)
    else:
        with pytest.raises(InvalidArgumentError, match="out must be a device array"):
            ops.copy(x, backend=name, out=host(out))


def check_what_goes_in_comes_out(backend: Any, dtype: str, rng: Any) -> None:
    """The op API without ``out`` on ``backend`` (a CUDA-like compiled one): torch tensors give a torch tensor on
    their device (allocated by torch, so no copy), bf16 included; numpy arrays a numpy array; a bf16 DeviceArray
    goes to torch through DLPack (kDLBfloat) without a copy; CuPy arrays (f32, f16) give a CuPy array."""
    import numpy as np
    import pytest

    import oprt_core.ops as ops
    from oprt_core.device_array import DeviceArray
    from oprt_core.dtypes import get_dtype

    if not backend.cuda_interop:
        pytest.skip(f"backend {backend.name!r}'s memory is not CUDA memory: no torch or CuPy arrays")
    from oprt_core.plugins import get_registry

    backend = get_registry().get_backend(backend.name)  # the op API's instance: its arrays are the ones ops.* takes
    odt = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}[dtype]
    npdt = get_dtype(odt).numpy
    x_host = rng.uniform(-4, 4, (65, 300)).astype(npdt)
    ref = np.exp(x_host.astype(np.float64) - x_host.astype(np.float64).max(-1, keepdims=True))
    ref /= ref.sum(-1, keepdims=True)
    tol = {"f32": 1e-5, "f16": 2e-3, "bf16": 2e-2}[odt]

    got = ops.softmax(x_host, backend=backend.name)
    assert type(got) is np.ndarray and got.dtype == npdt
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=tol, atol=tol)

    d = backend.to_device(x_host)
    out_d = ops.softmax(d, backend=backend.name)
    assert isinstance(out_d, DeviceArray)

    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    t = torch.from_dlpack(out_d)  # DeviceArray -> torch: no copy, bf16 as torch.bfloat16
    assert t.dtype == getattr(torch, dtype) and t.data_ptr() == out_d.ptr and t.device.index == backend.device
    del out_d  # the tensor keeps the allocation alive
    np.testing.assert_allclose(t.float().cpu().numpy(), ref, rtol=tol, atol=tol)

    x = torch.from_dlpack(d)
    y = ops.softmax(x, backend=backend.name)
    assert isinstance(y, torch.Tensor) and y.device == x.device and y.dtype == x.dtype
    torch.cuda.synchronize()
    np.testing.assert_allclose(y.float().cpu().numpy(), ref, rtol=tol, atol=tol)
    z = ops.vector_add(x.t(), x.t(), backend=backend.name)  # strided torch input, torch result
    torch.cuda.synchronize()
    assert isinstance(z, torch.Tensor) and tuple(z.shape) == (300, 65)
    torch.testing.assert_close(z.float(), (x.float() * 2).to(x.dtype).float().t())

    if odt == "bf16":
        return  # CuPy has no bfloat16
    cp = pytest.importorskip("cupy")
    c = cp.asarray(x_host)
    w = ops.relu(c, 0.5, backend=backend.name)
    assert isinstance(w, cp.ndarray) and w.dtype == c.dtype
    cp.cuda.runtime.deviceSynchronize()
    np.testing.assert_array_equal(cp.asnumpy(w), np.where(x_host > 0, x_host, x_host * npdt.type(0.5)))
    v = cp.from_dlpack(backend.to_device(x_host))  # DeviceArray -> CuPy through DLPack
    np.testing.assert_array_equal(cp.asnumpy(v), x_host)


def rows_disjoint(a: tuple[int, Sequence[int], Sequence[int]], b: tuple[int, Sequence[int], Sequence[int]]) -> bool:
    """The overlap checks' rows rule, restated for test oracles: tensors ``(origin, shape, strides)`` of one dtype
    (in elements), each laid out as rows along its largest positive stride with its other dims inside one row, of
    the same row stride, whose rows share no element (``(origin_b - origin_a) mod step`` clears a's row)."""

    def rows(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, int, int] | None:
        dims = [i for i, n in enumerate(shape) if n > 1]
        if not dims or 0 in shape:
            return None
        outer = max(dims, key=lambda i: abs(strides[i]))
        step = strides[outer]
        lo = sum((shape[i] - 1) * strides[i] for i in dims if i != outer and strides[i] < 0)
        hi = sum((shape[i] - 1) * strides[i] for i in dims if i != outer and strides[i] > 0) + 1
        return (step, lo, hi) if step > 0 and hi - lo <= step else None

    ra, rb = rows(a[1], a[2]), rows(b[1], b[2])
    if ra is None or rb is None or ra[0] != rb[0]:
        return False
    step, r = ra[0], (b[0] - a[0]) % ra[0]
    return all(not (rb[1] + r + j * step < ra[2] and ra[1] < rb[2] + r + j * step) for j in range(-2, 3))
