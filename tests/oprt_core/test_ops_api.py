"""The functional op API (oprt_core.ops) on the numpy backend, checked against the references, and its
descriptor cache."""

from __future__ import annotations

import numpy as np
import pytest
from op_helpers import assert_ok, rand

from oprt_core import hookimpl, operators, ops
from oprt_core.errors import InvalidArgumentError
from oprt_core.plugins import Registry, get_plugin_manager

DTYPES = ("f32", "f16", "bf16")


@pytest.fixture(autouse=True)
def fresh_cache():
    ops.clear_cache()
    yield
    ops.clear_cache()


def test_out_argument_is_written_and_returned():
    x = rand((4, 6))
    out = np.full((4, 6), np.nan, np.float32)
    got = ops.relu(x, 0.5, out=out)
    assert got is out
    assert_ok("relu", out, [x], "f32", negative_slope=0.5)
    red = np.full((6,), np.nan, np.float32)
    assert ops.run("reduce_sum", [x], {"axis": 0}, out=red) is red
    assert_ok("reduce_sum", red, [x], "f32", axis=0)


def test_empty_tensors():
    for op, inputs, params in (("copy", [rand((0, 3))], {}), ("softmax", [rand((4, 0))], {}),
                               ("reduce_sum", [rand((0, 3))], {"axis": 0})):
        out = ops.run(op, inputs, params)
        assert out.shape == operators.spec(op).output_shape([x.shape for x in inputs], params)
    np.testing.assert_array_equal(ops.reduce_sum(rand((0, 3)), axis=0), np.zeros(3, np.float32))


def test_descriptor_cache_reuse():
    x1, x2 = rand((8, 16), seed=1), rand((8, 16), seed=2)
    assert len(ops._cache) == 0
    out1 = ops.softmax(x1)
    assert len(ops._cache) == 1
    (launcher,) = ops._cache.values()
    out2 = ops.softmax(x2)  # same layout: cache hit, the launcher runs on the new buffers
    assert len(ops._cache) == 1 and next(iter(ops._cache.values())) is launcher
    assert_ok("softmax", out2, [x2], "f32")
    assert not np.array_equal(out1, out2)
    assert_ok("softmax", out1, [x1], "f32")  # the first result was not overwritten
    # a new key for each change of params, shape, strides or dtype
    ops.softmax(x1, axis=0)
    assert len(ops._cache) == 2
    ops.softmax(rand((8, 17)))
    assert len(ops._cache) == 3
    ops.softmax(rand((16, 8)).T)
    assert len(ops._cache) == 4
    ops.softmax(x1.astype(np.float16))
    assert len(ops._cache) == 5
    ops.copy(x1)
    assert len(ops._cache) == 6
    ops.softmax(x2)  # hits again
    assert len(ops._cache) == 6
    ops.clear_cache()
    assert len(ops._cache) == 0


def test_cache_is_bounded():
    for n in range(1, ops._CACHE_SIZE + 20):
        ops.copy(np.ones(n, np.float32))
    assert len(ops._cache) == ops._CACHE_SIZE
    # the oldest entries were evicted, the newest kept
    shapes = [key[2][0][0] for key in ops._cache]
    assert (ops._CACHE_SIZE + 19,) in shapes and (1,) not in shapes


def test_cache_hit_with_out_argument():
    x = rand((5, 5))
    out = np.empty((5, 5), np.float32)
    ops.copy(x, out=out)
    ops.copy(x + 1, out=out)
    assert len(ops._cache) == 1
    np.testing.assert_array_equal(out, x + 1)


def test_numpy_rejects_outputs_it_cannot_write_element_by_element():
    import oprt_core.ops as ops
    from oprt_core.errors import InvalidArgumentError

    x = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    readonly = np.broadcast_to(np.zeros(4, np.float32), (3, 4))
    with pytest.raises(InvalidArgumentError, match="read-only"):
        ops.copy(x, out=readonly)
    overlapping = np.lib.stride_tricks.as_strided(np.zeros(4, np.float32), (3, 4), (0, 4), writeable=True)
    with pytest.raises(InvalidArgumentError, match="overlapping strides"):
        ops.relu(x, out=overlapping)


# ---------------------------------------------------------------------------------------------
# compiled backends (the host C library) through the op API


class _RegisterBackend:
    def __init__(self, backend):
        self.backend = backend

    @hookimpl
    def oprt_register_backends(self, register) -> None:
        register(self.backend)


def _host_registry(backend, plugin_name="host-lib"):
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(_RegisterBackend(backend), plugin_name, "tests")
    return Registry(pm)


def test_compiled_backend_refuses_a_numpy_out(host_backend):
    """A host numpy ``out`` would be copied to the device and the caller's array never written: refused."""
    reg = _host_registry(host_backend)
    x = rand((3, 4))
    out = np.zeros((3, 4), np.float32)
    with pytest.raises(InvalidArgumentError, match=r"out must be a device array of backend 'host' "
                                                   r"\(or a CuPy array / torch tensor\); got numpy.ndarray"):
        ops.run("relu", [x], {"negative_slope": 0.0}, backend="host", out=out, registry=reg)
    assert not out.any()
    # a device out is written and returned
    dev = host_backend.empty((3, 4), "f32")
    got = ops.run("relu", [x], {"negative_slope": 0.0}, backend="host", out=dev, registry=reg)
    assert got is dev
    np.testing.assert_array_equal(host_backend.to_host(dev), np.maximum(x, 0))


def test_cache_does_not_share_launchers_across_registries(host_lib_path, make_host_loader):
    """Two registries whose backends share a name each get their own launchers."""
    from oprt_core.compiled import CompiledBackend

    b1 = CompiledBackend("host", make_host_loader(host_lib_path), vendor="host")
    b2 = CompiledBackend("host", make_host_loader(host_lib_path), vendor="host")
    r1, r2 = _host_registry(b1), _host_registry(b2)
    x = rand((3, 4))
    out1 = ops.run("copy", [b1.to_device(x)], backend="host", registry=r1)
    out2 = ops.run("copy", [b2.to_device(x)], backend="host", registry=r2)
    assert out1.backend is b1 and out2.backend is b2
    assert len(ops._cache) == 2
    assert {launcher.backend for _, launcher in ops._cache.values()} == {b1, b2}
    np.testing.assert_array_equal(b2.to_host(out2), x)


def test_cache_is_thread_safe():
    import threading

    errors = []

    def work(seed):
        try:
            for n in range(1, 200):
                x = rand((n % 37 + 1,), seed=seed)
                np.testing.assert_array_equal(ops.copy(x), x)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert hasattr(ops, "_cache_lock")


def test_fast_path_launches_the_cached_descriptor_on_new_buffers(host_backend, monkeypatch):
    """Calls with an ``out`` of a layout seen before skip views and validation (the fast path): the
    cached launcher runs on the new pointers, results stay right, and any other layout takes the full
    path with its checks."""
    from oprt_core.compiled import CompiledLauncher

    reg = _host_registry(host_backend)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    full_path = []
    real_run = CompiledLauncher.run
    monkeypatch.setattr(CompiledLauncher, "run", lambda self, *a: (full_path.append(1), real_run(self, *a)))
    be = host_backend
    xs = [rand((5, 33), seed=s, low=-4, high=4) for s in range(3)]
    devs = [be.to_device(x) for x in xs]
    outs = [be.empty((5, 33), "f32") for _ in xs]
    for x, dev, out in zip(xs, devs, outs):  # first call prepares; the others are fast-path launches
        assert ops.softmax(dev, axis=-1, backend="host", out=out) is out
        assert_ok("softmax", be.to_host(out), [x], "f32", axis=-1)
    assert full_path == [] and len(ops._fast) == 1
    assert next(iter(ops._fast.values()))[1]._fn_ptrs is not None  # launched through oprt_ptrs_softmax
    # a different param, shape or stride: a new descriptor through the full path, results right
    ops.softmax(devs[0], axis=0, backend="host", out=outs[0])
    assert_ok("softmax", be.to_host(outs[0]), [xs[0]], "f32", axis=0)
    assert len(ops._fast) == 2
    # a wrong out shape is still refused with the library's status
    with pytest.raises(InvalidArgumentError):
        ops.softmax(devs[0], backend="host", out=be.empty((5, 32), "f32"))
    # a read-only out never matches a writable one's entry
    ro = be.empty((5, 33), "f32")
    ro.readonly = True
    with pytest.raises(InvalidArgumentError, match="read-only"):
        ops.softmax(devs[1], backend="host", out=ro)
    ops.clear_cache()
    assert not ops._fast


def test_fast_path_is_not_used_for_numpy_inputs_or_an_explicit_registry(host_backend):
    reg = _host_registry(host_backend)
    x = rand((4, 8))
    out = host_backend.empty((4, 8), "f32")
    ops.run("relu", [x], {"negative_slope": 0.0}, backend="host", out=out, registry=reg)
    ops.run("relu", [host_backend.to_device(x)], {"negative_slope": 0.0}, backend="host", out=out, registry=reg)
    assert not ops._fast
    np.testing.assert_array_equal(host_backend.to_host(out), np.maximum(x, 0))


def test_fast_path_keys_params_by_type_and_sign(host_backend, monkeypatch):
    """1, 1.0 and True (and 0.0 and -0.0) are equal dict keys but different params: never one entry."""
    reg = _host_registry(host_backend)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    be = host_backend
    x = be.to_device(rand((4, 6), low=-2, high=2))
    out = be.empty((4, 6), "f32")
    ops.softmax(x, axis=1, backend="host", out=out)
    with pytest.raises(InvalidArgumentError):
        ops.softmax(x, axis=1.0, backend="host", out=out)  # the full path's type check still runs
    with pytest.raises(InvalidArgumentError):
        ops.softmax(x, axis=True, backend="host", out=out)
    neg = -np.abs(rand((4, 6), seed=3)) - 0.5
    xn = be.to_device(neg)
    for slope in (0.0, -0.0, 0.0):  # x * slope on negatives: -0.0, then +0.0, then -0.0 again
        ops.relu(xn, slope, backend="host", out=out)
        expected = np.where(neg > 0, neg, neg * np.float32(slope))
        np.testing.assert_array_equal(np.signbit(be.to_host(out)), np.signbit(expected))


def test_run_takes_an_iterator_and_returns_the_callers_out(host_backend, monkeypatch):
    reg = _host_registry(host_backend)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    x = host_backend.to_device(rand((3, 5)))
    out = host_backend.empty((3, 5), "f32")
    for _ in range(2):  # full path, then fast path
        assert ops.run("copy", (a for a in [x]), backend="host", out=out) is out
        np.testing.assert_array_equal(host_backend.to_host(out), host_backend.to_host(x))


def test_fast_path_follows_a_replaced_backend(host_lib_path, make_host_loader, monkeypatch):
    """A registry whose backend object is replaced under the same name never runs the old launcher."""
    from oprt_core.compiled import CompiledBackend

    b1 = CompiledBackend("host", make_host_loader(host_lib_path), vendor="host")
    b2 = CompiledBackend("host", make_host_loader(host_lib_path), vendor="host")
    reg = _host_registry(b1)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    x1, o1 = b1.to_device(rand((2, 3))), b1.empty((2, 3), "f32")
    ops.copy(x1, backend="host", out=o1)
    ops.copy(x1, backend="host", out=o1)
    reg.backends["host"] = b2
    x2, o2 = b2.to_device(rand((2, 3), seed=5)), b2.empty((2, 3), "f32")
    ops.copy(x2, backend="host", out=o2)  # same layout; b1's cached entry must not be used
    assert {entry[1].backend for entry in ops._fast.values()} == {b1, b2}
    np.testing.assert_array_equal(b2.to_host(o2), b2.to_host(x2))


@pytest.mark.parametrize("ptrs", [True, False], ids=["oprt_ptrs", "casts"])
def test_fast_path_two_inputs_on_integer_pointers_or_casts(host_backend, monkeypatch, ptrs):
    """vector_add through the fast path on new buffers each call, on oprt_ptrs_vector_add (integer pointers)
    and, as for a library built without it, on oprt_vector_add with cast pointers: results right on both
    (which argument is which is checked by the GPU backends' pointer-entry-point tests)."""
    reg = _host_registry(host_backend)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    be = host_backend
    ab = [(rand((7, 9), seed=2 * s), rand((7, 9), seed=2 * s + 1, low=-3, high=5)) for s in range(3)]
    outs = [be.empty((7, 9), "f32") for _ in ab]
    for i, ((a, b), out) in enumerate(zip(ab, outs)):
        ops.vector_add(be.to_device(a), be.to_device(b), backend="host", out=out)
        if i == 0:
            launcher = next(iter(ops._fast.values()))[1]
            assert launcher._fn_ptrs is not None
            if not ptrs:  # the entry's launch is made once, from the launcher: file it again without oprt_ptrs
                monkeypatch.setattr(launcher, "_fn_ptrs", None)
                ops._fast.clear()
        assert_ok("vector_add", be.to_host(out), [a, b], "f32")
    assert len(ops._fast) == 1


def _count_full(monkeypatch):
    calls = []
    real_full = ops._full
    monkeypatch.setattr(ops, "_full", lambda *a: (calls.append(a[0]), real_full(*a))[1])
    return calls


def test_fast_path_keys_each_ops_params(host_backend, monkeypatch):
    """The op functions key their params themselves: reduce_sum over axis 0 and axis 1 of a square tensor share
    an out layout, never a launcher; run()'s keys and the op functions' keys never stand for other params."""
    reg = _host_registry(host_backend)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    be = host_backend
    x = rand((6, 6), seed=11, low=-3, high=3)
    dx, out = be.to_device(x), be.empty((6,), "f32")
    for _ in range(2):  # the second round is all fast-path launches
        for axis in (0, 1, -1, -2):
            assert ops.reduce_sum(dx, axis, backend="host", out=out) is out
            assert_ok("reduce_sum", be.to_host(out), [x], "f32", axis=axis, keepdims=False)
    assert len(ops._fast) == 4
    neg = be.to_device(-np.abs(x) - 0.25)
    o2 = be.empty((6, 6), "f32")
    full_path = _count_full(monkeypatch)
    calls = [(0.5, True), (0.25, False), (0.5, False), (0.25, True), (2, False), (2.0, True)]
    for round_ in range(2):
        full_path.clear()
        for slope, via_run in calls:
            if via_run:
                ops.run("relu", [neg], {"negative_slope": slope}, backend="host", out=o2)
            else:
                ops.relu(neg, slope, backend="host", out=o2)
            np.testing.assert_array_equal(be.to_host(o2), (-np.abs(x) - 0.25) * np.float32(slope))
        # round 0: every (slope, way of calling) took the full path and filed its own entry; round 1: none did
        assert len(full_path) == (6 if round_ == 0 else 0)
    assert sum(1 for k in ops._fast if k[0] == "relu") == 6


def _case_arrays(backend, op, rows, seed, wrap=lambda d: d, wrap_out=None):
    """A call of op ``op`` on ``backend``: its inputs of a contiguous f32 case of ``rows`` leading rows (the other
    extents its first smoke case's), default params, each value input wrapped by ``wrap`` (an index input stays a
    device array); its outputs wrapped by ``wrap_out`` (default ``wrap``); the float64 references, a tuple. Returns
    ``(inputs, outputs, references)``."""
    spec = operators.spec(op)
    case = spec.custom_case((rows, *spec.cases("smoke")[0].inputs[0].shape[1:]))
    host = spec.make_inputs(case, "f32", np.random.default_rng(seed))
    dev = [backend.to_device(a) if name in spec.index_inputs else wrap(backend.to_device(a))
           for a, name in zip(host, spec.input_names)]
    want = spec.reference(host)
    want = want if isinstance(want, tuple) else (want,)
    outs = tuple((wrap_out or wrap)(backend.empty(a.shape, "f32")) for a in want)
    return dev, outs, want


def _call(op, dev, outs):
    return getattr(ops, op)(*dev, backend="host", out=outs if len(outs) > 1 else outs[0])


# one input and one output; three inputs; two outputs
LAUNCH_SHAPES = [next(s.name for s in operators.specs() if s.n_inputs == 1 and not s.multi_output),
                 next(s.name for s in operators.specs() if s.min_inputs == 3 and not s.multi_output),
                 next(s.name for s in operators.specs() if s.multi_output)]


@pytest.mark.parametrize("op", LAUNCH_SHAPES)
def test_fast_path_launch_failure_raises_and_is_not_retried(host_backend, monkeypatch, op):
    """A non-zero status from a fast-path launch is the library's error, raised as its exception: the call is
    not quietly run again on the full path (one input; three inputs; two outputs)."""
    from oprt_core.compiled import CompiledLauncher
    from oprt_core.errors import BackendError

    reg = _host_registry(host_backend)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    dev, outs, _ = _case_arrays(host_backend, op, 3, 0)

    def call():
        _call(op, dev, outs)

    call()
    (key, entry), = ops._fast.items()
    ops._fast[key] = (*entry[:3], lambda *ptrs: 1)  # status 1: what the library says for a refused call
    full_path = []
    real_run = CompiledLauncher.run
    monkeypatch.setattr(CompiledLauncher, "run", lambda self, *a: (full_path.append(1), real_run(self, *a)))
    with pytest.raises(BackendError):
        call()
    assert full_path == []


def test_fast_path_entry_launches_through_one_callable(host_backend, monkeypatch):
    """The entry's launch is the library's oprt_ptrs_<op> with the descriptor bound (one C call per launch)."""
    import functools

    reg = _host_registry(host_backend)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    be = host_backend
    x, out = be.to_device(rand((4, 5))), be.empty((4, 5), "f32")
    ops.relu(x, backend="host", out=out)
    (entry,) = ops._fast.values()
    call = entry[3]
    assert isinstance(call, functools.partial) and call.func is entry[1]._fn_ptrs
    assert call.args == (entry[1].desc, entry[1]._ws_int, entry[1].workspace_size)


def test_a_tensor_that_requires_grad_is_an_invalid_argument_on_every_path(host_backend, monkeypatch):
    """torch raises RuntimeError for __cuda_array_interface__ of a tensor that requires grad: the op API says
    InvalidArgumentError with torch's advice, as input and as out, with an out the fast path knows too."""
    reg = _host_registry(host_backend)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    out = host_backend.empty((2,), "f32")
    x = host_backend.to_device(rand((2,)))
    for call in (lambda: ops.copy(Tensor(x, requires_grad=True), backend="host", out=out),
                 lambda: ops.copy(x, backend="host", out=Tensor(out, requires_grad=True)),
                 lambda: ops.relu(Tensor(x, requires_grad=True), backend="host")):
        with pytest.raises(InvalidArgumentError, match="requires grad.*detach"):
            call()


class Tensor:
    """A stand-in that the fast path classifies as a torch tensor (its module's name starts with "torch"), over a
    host backend's DeviceArray: shape, stride(), dtype, get_device(), requires_grad, data_ptr() and, for the full path,
    __cuda_array_interface__ (which raises RuntimeError when it requires grad, as torch's does)."""

    __module__ = "torch_standin"

    def __init__(self, dev, requires_grad=False, device=0):
        self.dev, self.requires_grad, self.dtype, self.shape = dev, requires_grad, "f32", dev.shape
        self.device_index = device

    def get_device(self):
        return self.device_index

    def stride(self):
        return self.dev.strides_elements

    def data_ptr(self):
        return self.dev.ptr

    @property
    def __cuda_array_interface__(self):
        if self.requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. If gradients "
                               "aren't required, use var.detach() to get Variable that doesn't require grad.")
        return {"typestr": "<f4", "shape": self.dev.shape, "strides": None, "data": (self.dev.ptr, False), "version": 3}


@pytest.fixture
def cudalike(host_lib_path, make_host_loader):
    """The host library as a backend whose pointers count as CUDA's (cuda_interop): it takes foreign arrays."""
    from oprt_core.compiled import CompiledBackend

    return CompiledBackend("host", make_host_loader(host_lib_path), vendor="host", cuda_interop=True)


def test_fast_path_checks_the_registry_and_backend_of_a_torch_like_entry(host_lib_path, make_host_loader, monkeypatch):
    """Torch tensors' signatures name no backend, so only the entry's checks keep a replaced backend or a swapped
    registry from running an old launcher: each sends the call down the full path, whose launcher is the new
    backend's."""
    from oprt_core.compiled import CompiledBackend

    b1, b2, b3 = (CompiledBackend("host", make_host_loader(host_lib_path), vendor="host", cuda_interop=True)
                  for _ in range(3))
    reg = _host_registry(b1)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    x = rand((4, 6), seed=21)
    tx, to = Tensor(b1.to_device(x)), Tensor(b1.empty((4, 6), "f32"))
    full = _count_full(monkeypatch)
    for _ in range(2):
        ops.copy(tx, backend="host", out=to)
    assert full == ["copy"]  # the second call was a fast-path launch
    reg.backends["host"] = b2
    ops.copy(tx, backend="host", out=to)
    assert full == ["copy", "copy"] and {e[1].backend for e in ops._fast.values()} == {b2}
    reg2 = _host_registry(b3, "other")
    monkeypatch.setattr(ops, "get_registry", lambda: reg2)
    ops.copy(tx, backend="host", out=to)
    ops.copy(tx, backend="host", out=to)
    assert full == ["copy"] * 3 and {e[1].backend for e in ops._fast.values()} == {b3}
    np.testing.assert_array_equal(b3.to_host(to.dev), x)


def test_fast_path_refuses_a_torch_like_tensor_that_requires_grad(cudalike, monkeypatch):
    """requires_grad is in a torch tensor's signature: one that requires grad, in the layout of a filed entry, goes
    down the full path and is refused there, not launched."""
    reg = _host_registry(cudalike)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    x = cudalike.to_device(rand((3, 5)))
    out = Tensor(cudalike.empty((3, 5), "f32"))
    ops.relu(Tensor(x), backend="host", out=out)
    with pytest.raises(InvalidArgumentError, match="requires grad.*detach"):
        ops.relu(Tensor(x, requires_grad=True), backend="host", out=out)


class _CupyMemory:
    def __init__(self, ptr, device_id):
        self.ptr, self.device_id = ptr, device_id


class _CupyDevice:
    def __init__(self, device_id):
        self.id = device_id


class ndarray:  # noqa: N801 - the fast path classifies a CuPy array by its module and class name
    """A stand-in that the fast path classifies as a CuPy array, over a host backend's DeviceArray: shape, strides
    (bytes), dtype, data.ptr / data.device_id, device.id and __cuda_array_interface__."""

    __module__ = "cupy_standin"

    def __init__(self, dev, device=0):
        self.dev, self.shape, self.dtype = dev, dev.shape, np.dtype(np.float32)
        self.strides = tuple(s * 4 for s in dev.strides_elements)
        self.data, self.device = _CupyMemory(dev.ptr, device), _CupyDevice(device)

    @property
    def __cuda_array_interface__(self):
        return {"typestr": "<f4", "shape": self.dev.shape, "strides": None, "data": (self.dev.ptr, False), "version": 3}


@pytest.mark.parametrize("kind", ["torch", "cupy"])
def test_an_array_on_another_cuda_device_is_refused(cudalike, monkeypatch, kind):
    """A torch tensor or CuPy array on CUDA device 1 handed to a backend on device 0: refused with where it is and what
    to do, through the full path, and also after an entry was filed for the same layout on device 0 (the device index
    is in the fast path's signature); its out is never written."""
    wrap = Tensor if kind == "torch" else ndarray
    reg = _host_registry(cudalike)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    x = rand((3, 5), seed=8)
    dx, dout = cudalike.to_device(x), cudalike.empty((3, 5), "f32")
    with pytest.raises(InvalidArgumentError, match="runs on CUDA device 0.*on device 1.*set_device"):
        ops.relu(wrap(dx, device=1), backend="host", out=wrap(dout))
    full = _count_full(monkeypatch)
    for _ in range(2):
        ops.relu(wrap(dx), backend="host", out=wrap(dout))
    assert full == ["relu"]  # filed, then a fast-path launch
    np.testing.assert_array_equal(cudalike.to_host(dout), np.maximum(x, 0))
    cudalike.fill_nan(dout)
    for call in (lambda: ops.relu(wrap(dx, device=1), backend="host", out=wrap(dout)),
                 lambda: ops.relu(wrap(dx), backend="host", out=wrap(dout, device=1))):
        with pytest.raises(InvalidArgumentError, match="on device 1"):
            call()
    assert np.isnan(cudalike.to_host(dout)).all()


MANY_ARRAYS = [spec.name for spec in operators.specs() if spec.min_inputs + spec.n_outputs >= 4]


@pytest.mark.parametrize("kind", ["device", "torch", "cupy", "mixed"])
@pytest.mark.parametrize("op", MANY_ARRAYS)
def test_fast_path_of_ops_with_many_arrays(cudalike, monkeypatch, kind, op):
    """Ops of four arrays or more (three inputs; two outputs; an index input): the arrays of a call are keyed in one
    batch when they are of one type, one by one when mixed (torch-like outputs, device-array inputs); either way the
    second call of a layout launches on that call's own buffers, without the full path, and a call with another layout
    goes down the full path. (The stand-ins are f32 only: an index input stays a device array, so such an op's calls
    are mixed.)"""
    reg = _host_registry(cudalike)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    full = _count_full(monkeypatch)
    wrap = {"device": lambda d: d, "torch": Tensor, "cupy": ndarray, "mixed": lambda d: d}[kind]
    wrap_out = Tensor if kind == "mixed" else wrap

    def check(outs, want):
        for o, w in zip(outs, want):
            np.testing.assert_allclose(cudalike.to_host(getattr(o, "dev", o)), w, rtol=1e-5, atol=1e-5)

    for seed, rows, n_full in [(0, 3, 1), (10, 3, 1), (20, 5, 2), (30, 3, 2)]:
        dev, outs, want = _case_arrays(cudalike, op, rows, seed, wrap, wrap_out)
        _call(op, dev, outs)
        check(outs, want)
        assert len(full) == n_full  # a layout seen before: a fast-path launch on this call's buffers


def test_there_are_ops_of_many_arrays():
    assert MANY_ARRAYS


def test_a_backend_without_cuda_pointers_refuses_cuda_arrays(host_backend, monkeypatch):
    """A torch tensor or CuPy array holds a CUDA pointer: a backend whose memory is not CUDA's (the MetaX mxcc
    flavour, the host library) refuses it as input and as out, with what to pass instead, and files no fast-path
    entry for it."""
    reg = _host_registry(host_backend)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    x = host_backend.to_device(rand((3, 5)))
    out = host_backend.empty((3, 5), "f32")
    for call in (lambda: ops.copy(Tensor(x), backend="host", out=out),
                 lambda: ops.copy(x, backend="host", out=Tensor(out)),
                 lambda: ops.copy(Tensor(x), backend="host")):
        with pytest.raises(InvalidArgumentError, match="its memory is CUDA memory.*pass a numpy array"):
            call()
    assert not ops._fast


def test_fast_path_keys_bools_apart_from_ints(host_backend, monkeypatch):
    """reduce_sum(axis=True) after reduce_sum(axis=1) on the same layout: True == 1 as a dict key, but the full
    path refuses a bool axis, and so must the fast path."""
    reg = _host_registry(host_backend)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    x, out = host_backend.to_device(rand((4, 4))), host_backend.empty((4,), "f32")
    for _ in range(2):
        ops.reduce_sum(x, 1, backend="host", out=out)
    with pytest.raises(InvalidArgumentError):
        ops.reduce_sum(x, True, backend="host", out=out)
    with pytest.raises(InvalidArgumentError):
        ops.reduce_sum(x, 1, True, backend="host", out=out)  # keepdims=True needs a (4, 1) out


def test_numpy_scalar_params_are_keyed_by_value(host_backend, monkeypatch):
    """Two neighbouring float32 slopes print alike in numpy's legacy print mode; keyed by repr they would share an
    entry and the second call would run the first slope. Keyed by value (as validate_params takes them), each runs
    its own, through the op function and through run()."""
    reg = _host_registry(host_backend)
    monkeypatch.setattr(ops, "get_registry", lambda: reg)
    neg = -np.abs(rand((2, 64), seed=5)) - 1.0
    x, out = host_backend.to_device(neg), host_backend.empty((2, 64), "f32")
    v = np.float32(0.12428328)
    w = np.nextafter(v, np.float32(2))
    with np.printoptions(legacy="1.13"):
        assert repr(v) == repr(w)
        for _ in range(2):
            for slope in (v, w):
                ops.relu(x, slope, backend="host", out=out)
                np.testing.assert_array_equal(host_backend.to_host(out), neg * slope)
                ops.run("relu", [x], {"negative_slope": slope}, backend="host", out=out)
                np.testing.assert_array_equal(host_backend.to_host(out), neg * slope)
