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


def core_op(test: Callable[[Any], bool]) -> Any:
    """The spec of the first core op (in listing order) that passes ``test``: a check that needs an op of some kind
    picks it by that kind, never by name."""
    from oprt_core import operators

    return next(spec for spec in operators.specs("core") if test(spec))


def takes(spec: Any, param: str) -> bool:
    """``spec`` declares a param named ``param``."""
    return any(p.name == param for p in spec.params)


def keeps_shape(spec: Any) -> bool:
    """``spec``'s output has its (first) input's shape, default params on a 2-D input."""
    shape = (4, 5)
    return spec.output_shape([shape] * spec.min_inputs, spec.validate_params({})) == shape


def descriptor_args(ffi: Any, tdesc: Callable[..., Any], spec: Any, case: Any) -> tuple[list[Any], list[str]]:
    """``oprt_create_<op>_descriptor``'s arguments after the descriptor pointer for ``case`` in f32 (each tensor in
    its case's layout, an index input in its dtype, an optional input left out NULL), and the names of the given
    tensors (the outputs, then the inputs) in that order."""
    import numpy as np

    from oprt_core.cdecl import c_params
    from oprt_core.dtypes import dtype_of

    inputs = spec.make_inputs(case, "f32", np.random.default_rng(0))
    params = spec.validate_params(case.param_dict, [x.shape for x in inputs])
    outs = spec.output_shapes([x.shape for x in inputs], params)
    ins = [tdesc(x.shape, dtype_of(x.dtype, index=True).code, tuple(s // x.itemsize for s in x.strides))
           for x in inputs]
    args = [*(tdesc(shape) for shape in outs), *ins, *[ffi.NULL] * (spec.n_inputs - len(inputs)),
            *c_params(spec, params)]
    return args, [*spec.output_names, *spec.input_names[:len(inputs)]]


def check_descriptors_need_no_device(ext: Any, tdesc: Callable[..., Any]) -> None:
    """Creating and destroying descriptors is host-only work: every smoke case of every core op."""
    from oprt_core import operators

    ffi, lib = ext.ffi, ext.lib
    for spec in operators.specs("core"):
        op = spec.name
        for case in spec.cases("smoke"):
            args, _ = descriptor_args(ffi, tdesc, spec, case)
            p = ffi.new(f"oprt_{op}_descriptor_t *")
            assert getattr(lib, f"oprt_create_{op}_descriptor")(p, *args) == 0, \
                (case.name, ffi.string(lib.oprt_last_error_message()))
            size = ffi.new("size_t *", 123)
            assert getattr(lib, f"oprt_get_{op}_workspace_size")(p[0], size) == 0
            assert getattr(lib, f"oprt_destroy_{op}_descriptor")(p[0]) == 0


def check_pointer_entry_points(ext: Any, tdesc: Callable[..., Any]) -> None:
    """Every op has oprt_ptrs_<op> (the launch on integer pointers the op API's fast path uses), and it
    forwards each pointer to its own parameter: a null pointer in one position is reported by that
    parameter's name, exactly as through oprt_<op> with cast pointers (host-only: the null checks come
    before any device work). The core ops, the first op of several outputs (they come before the inputs) and the
    first op with an optional input, given (its pointer forwarded and checked like the others), each on its smoke
    case of the most inputs."""
    from oprt_core import operators

    ffi, lib = ext.ffi, ext.lib
    specs = [*operators.specs("core"), next(s for s in operators.specs() if s.multi_output),
             next(s for s in operators.specs() if s.optional_inputs)]
    for spec in specs:
        op, nout = spec.name, spec.n_outputs
        case = max((c for c in spec.cases("smoke") if c.numel), key=lambda c: len(c.inputs))
        args, names = descriptor_args(ffi, tdesc, spec, case)
        fast = getattr(lib, f"oprt_ptrs_{op}")
        slow = getattr(lib, f"oprt_{op}")
        p = ffi.new(f"oprt_{op}_descriptor_t *")
        assert getattr(lib, f"oprt_create_{op}_descriptor")(p, *args) == 0, ffi.string(lib.oprt_last_error_message())
        try:
            size = ffi.new("size_t *")
            assert getattr(lib, f"oprt_get_{op}_workspace_size")(p[0], size) == 0
            ws = (1 << 41) if size[0] else 0  # a plausible device address where the case needs a workspace
            for null in range(len(names)):  # pointer `null` is NULL, the others plausible device addresses
                ptrs = [0 if i == null else (1 << 40) + (i << 20) for i in range(len(names))]
                got = fast(p[0], ws, size[0], *ptrs)
                fast_msg = ffi.string(lib.oprt_last_error_message()).decode()
                cast = [ffi.cast("void *", q) for q in ptrs[:nout]] + [ffi.cast("const void *", q) for q in ptrs[nout:]]
                want = slow(p[0], ffi.cast("void *", ws), size[0], *cast, ffi.NULL)
                slow_msg = ffi.string(lib.oprt_last_error_message()).decode()
                assert got == want == lib.OPRT_STATUS_NULL_POINTER, (op, names[null], got, want)
                # the core ops' own entry points name it bare, the generated ones (oprt_entry.h) quoted
                named = f"{names[null]} is NULL" in fast_msg or f"'{names[null]}' is NULL" in fast_msg
                assert fast_msg == slow_msg and named, (fast_msg, slow_msg)
            assert fast(ffi.NULL, 0, 0, *([1 << 40] * len(names))) == lib.OPRT_STATUS_NULL_POINTER
        finally:
            assert getattr(lib, f"oprt_destroy_{op}_descriptor")(p[0]) == 0


# (shape, axis) of sums split across blocks (axis None: all of it), by the op of role sum-all
SPLIT_REDUCTIONS = [((1 << 24,), None), ((4, 1 << 22), -1), ((1 << 13, 1 << 13), 0)]


def check_workspace_for_split_reductions(ext: Any, tdesc: Callable[..., Any], shape, axis) -> None:
    """Few long rows or columns are split across blocks: the partial sums need a workspace (the op of role
    ``sum-all``, oprt_core.operators.with_role, over ``axis``)."""
    from oprt_core.cdecl import c_params
    from oprt_core.operators import with_role

    ffi, lib = ext.ffi, ext.lib
    spec, params = with_role("sum-all")
    op = spec.name
    params = spec.validate_params({**params, "axis": axis}, [shape])
    p = ffi.new(f"oprt_{op}_descriptor_t *")
    create = getattr(lib, f"oprt_create_{op}_descriptor")
    assert create(p, tdesc(spec.output_shape([shape], params)), tdesc(shape), *c_params(spec, params)) == 0
    size = ffi.new("size_t *")
    assert getattr(lib, f"oprt_get_{op}_workspace_size")(p[0], size) == 0
    assert size[0] > 0
    assert size[0] < 64 << 20
    getattr(lib, f"oprt_destroy_{op}_descriptor")(p[0])


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

    def ref(values) -> Any:  # a float64 reference as a CUDA f32 tensor
        return torch.from_numpy(values).float().cuda()

    binary = core_op(lambda s: s.n_inputs == 2)  # b broadcast along a's rows
    a = torch.randn(257, 129, device="cuda").to(tdt)
    b = torch.randn(129, device="cuda").to(tdt)
    out = torch.empty_like(a)
    getattr(ops, binary.name)(a, b, backend=name, out=out)
    torch.cuda.synchronize()
    want = binary.reference([a.float().cpu().numpy(), b.float().cpu().numpy()])
    torch.testing.assert_close(out.float(), ref(want).to(tdt).float())
    over_axis = core_op(lambda s: takes(s, "axis") and keeps_shape(s))  # over axis 0 of a transposed view
    t = torch.randn(64, 512, device="cuda").to(tdt)
    sm = torch.empty_like(t)
    getattr(ops, over_axis.name)(t.t(), axis=0, backend=name, out=sm.t())
    torch.cuda.synchronize()
    want = over_axis.reference([t.float().cpu().numpy()], {"axis": -1})
    torch.testing.assert_close(sm.float(), ref(want), atol=1e-2, rtol=1e-2)


def check_op_api_fast_path(backend: Any, lib: str, dtype: str, rng: Any) -> None:
    """The op API's fast path on ``lib`` arrays ("torch" or "cupy") of ``backend``: every core op on its smoke
    cases (contiguous and transposed layouts; outputs of one dim or more), and an op over an axis over axis 0 and 1
    of a square (params that share an out layout, as the slopes of an op's smoke cases do), three rounds of fresh
    random inputs and fresh NaN-filled outs (new pointers each call), each result checked against the float64
    reference; round 0 takes the full path once per case, rounds 1-2 never do. Then arrays the fast path must not
    launch on, in a layout it holds: host memory, and (torch) a tensor that requires grad."""
    import numpy as np
    import pytest

    import oprt_core.ops as ops
    from oprt_core import operators
    from oprt_core.dtypes import get_dtype
    from oprt_core.errors import InvalidArgumentError
    from oprt_core.spec import TensorCase

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
            return a.transpose(-1, -2)
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
            return a.swapaxes(-1, -2)

    def arrays(tensors) -> Callable[[], list[Any]]:
        """Fresh random inputs laid out as the case's ``tensors`` (contiguous or transposed)."""
        return lambda: [tr(rnd(*t.shape[:-2], t.shape[-1], t.shape[-2])) if t.layout == "transposed"
                        else rnd(*t.shape) for t in tensors]

    name = backend.name
    ops.clear_cache()  # other tests' calls may have filed these layouts (test_torch_inputs' do)
    # (op, params, inputs, out): each call is ops.<op>(*inputs, **params, backend=name, out=out)
    cases, seen = [], set()
    for spec in operators.specs("core"):
        calls = [(c.param_dict, c.inputs) for c in spec.cases("smoke")
                 if all(t.layout in ("contiguous", "transposed") for t in c.inputs)]
        if takes(spec, "axis"):
            calls += [({"axis": axis}, (TensorCase((96, 96)),)) for axis in (0, 1)]
        for params, tensors in calls:
            out_shape = spec.output_shape([t.shape for t in tensors], spec.validate_params(params))
            key = (spec.name, repr(sorted(params.items())), tensors)
            if out_shape and key not in seen:
                seen.add(key)
                cases.append((spec.name, params, arrays(tensors), lambda s=out_shape: empty(*s)))
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
    unary = getattr(ops, core_op(lambda s: s.n_inputs == 1 and not s.params and keeps_shape(s)).name)
    x, out = rnd(257, 129), empty(257, 129)
    unary(x, backend=name, out=out)  # the layout is the fast path's now
    if lib == "torch":
        with pytest.raises(InvalidArgumentError, match="cannot use a torch.Tensor"):
            unary(x.cpu(), backend=name, out=out)
        with pytest.raises(InvalidArgumentError, match="out must be a device array"):
            unary(x, backend=name, out=host(out))
        with pytest.raises(InvalidArgumentError, match="requires grad"):
            unary(x.detach().clone().requires_grad_(True), backend=name, out=out)
    else:
        with pytest.raises(InvalidArgumentError, match="out must be a device array"):
            unary(x, backend=name, out=host(out))


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
    over_axis = core_op(lambda s: takes(s, "axis") and keeps_shape(s))
    run = getattr(ops, over_axis.name)
    ref = over_axis.reference([x_host])
    tol = {"f32": 1e-5, "f16": 2e-3, "bf16": 2e-2}[odt]

    got = run(x_host, backend=backend.name)
    assert type(got) is np.ndarray and got.dtype == npdt
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=tol, atol=tol)

    d = backend.to_device(x_host)
    out_d = run(d, backend=backend.name)
    assert isinstance(out_d, DeviceArray)

    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    t = torch.from_dlpack(out_d)  # DeviceArray -> torch: no copy, bf16 as torch.bfloat16
    assert t.dtype == getattr(torch, dtype) and t.data_ptr() == out_d.ptr and t.device.index == backend.device
    del out_d  # the tensor keeps the allocation alive
    np.testing.assert_allclose(t.float().cpu().numpy(), ref, rtol=tol, atol=tol)

    x = torch.from_dlpack(d)
    y = run(x, backend=backend.name)
    assert isinstance(y, torch.Tensor) and y.device == x.device and y.dtype == x.dtype
    torch.cuda.synchronize()
    np.testing.assert_allclose(y.float().cpu().numpy(), ref, rtol=tol, atol=tol)
    binary = core_op(lambda s: s.n_inputs == 2)
    z = getattr(ops, binary.name)(x.t(), x.t(), backend=backend.name)  # strided torch input, torch result
    torch.cuda.synchronize()
    assert isinstance(z, torch.Tensor) and tuple(z.shape) == (300, 65)
    want = torch.from_numpy(binary.reference([x_host.T, x_host.T])).cuda().to(x.dtype).float()
    torch.testing.assert_close(z.float(), want)

    if odt == "bf16":
        return  # CuPy has no bfloat16
    cp = pytest.importorskip("cupy")
    c = cp.asarray(x_host)
    leaky = core_op(lambda s: s.n_inputs == 1 and any(float in p.types for p in s.params))  # a float param of 0.5
    params = {next(p.name for p in leaky.params if float in p.types): 0.5}
    w = getattr(ops, leaky.name)(c, **params, backend=backend.name)
    assert isinstance(w, cp.ndarray) and w.dtype == c.dtype
    cp.cuda.runtime.deviceSynchronize()
    res = leaky.check(cp.asnumpy(w), [x_host], odt, leaky.validate_params(params))
    assert res.ok, res.message
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
