"""An op package's own library on a compiled backend (``oprt_core.compiled.c_library``), end to end on the CPU.

The test op ``negate`` (a spec of this file) is implemented by host_lib/oprt_host_negate.c behind the entry points
generated from its spec, compiled with the system C compiler into a library of its own, and driven through a
CompiledBackend over the host library: descriptors, launches and statuses go through the op library (its own cffi
FFI, its own error text), memory through the backend's. A library that is absent, fails to load, lacks an entry
point or reports another ABI makes ``supports`` say why. Without a C compiler these tests skip with the reason.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from oprt_core import (
    DTYPES,
    Budget,
    Case,
    InvalidArgumentError,
    OpSpec,
    Param,
    Registry,
    TensorCase,
    cdecl,
    get_plugin_manager,
    hookimpl,
    numpy_plugin,
    operators,
    ops,
)
from oprt_core.cabi import abi_version, include_dir
from oprt_core.compiled import CLibraryImpl, CompiledBackend, DeviceArray, c_abi_impl, c_library
from oprt_core.errors import OverlapError, ShapeError, UnsupportedCase

pytest.importorskip("cffi")

SOURCE = Path(__file__).parent / "host_lib" / "oprt_host_negate.c"


def _negate_spec(params=()) -> OpSpec:
    cases = [Case("negate", "1000", (TensorCase((1000,)),)), Case("negate", "33x65-transposed",
                                                                 (TensorCase((33, 65), "transposed"),))]
    return OpSpec(name="negate", doc="out = -x, elementwise; any input strides.", n_inputs=1, input_names=("x",),
                  inplace=("x",), reference_fn=lambda x: -x, bytes_fn=lambda c, dt: 2 * c.numel * dt.itemsize,
                  flops_fn=lambda c: c.numel, budgets={d: Budget(0.0, 0.0) for d in DTYPES},
                  case_sets={"smoke": cases}, params=tuple(params))


SPEC = _negate_spec()


def _cc() -> str:
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name):
            return name
    pytest.skip("no C compiler (cc, gcc or clang) to build the host op library")


def build_negate(dest: Path, name: str, *flags: str) -> Path:
    """Compile oprt_host_negate.c (with ``flags``) into ``dest/<name>.so`` next to its generated header."""
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "oprt_negate.h").write_text(cdecl.header([SPEC], "OPRT_NEGATE_H_"), encoding="utf-8")
    out = dest / f"{name}.so"
    cmd = [_cc(), "-std=gnu11", "-O2", "-Wall", "-Werror", "-shared", "-fPIC", f"-I{include_dir()}", f"-I{dest}",
           *flags, str(SOURCE), "-o", str(out), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, " ".join(cmd) + "\n" + proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="module")
def negate_lib(tmp_path_factory) -> Path:
    return build_negate(tmp_path_factory.mktemp("negate"), "liboprt_negate_host")


@pytest.fixture
def backend(host_lib_path, make_host_loader) -> CompiledBackend:
    """A fresh backend over the host library (the shared test-wide one is left without test ops)."""
    be = CompiledBackend("host", make_host_loader(host_lib_path), vendor="host", dlpack_device_type=1)
    assert be.availability().ok
    return be


def _x(dtype: str, shape=(4, 6), seed=0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-3, 3, shape).astype(DTYPES[dtype].numpy)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_an_op_runs_through_its_own_library(backend, negate_lib, dtype):
    backend.add_op(SPEC, c_library(negate_lib))
    assert backend.supports("negate", dtype)
    for i, case in enumerate(SPEC.cases("smoke")):
        inputs = SPEC.make_inputs(case, dtype, np.random.default_rng(i))
        out = backend.empty(inputs[0].shape, dtype)
        backend.fill_nan(out)
        launch = backend.prepare("negate", [backend.to_device(x) for x in inputs], out, {})
        launch()
        assert SPEC.check(backend.to_host(out), inputs, dtype).ok, case.name
    x = _x(dtype)
    dx, out = backend.to_device(x), backend.empty(x.shape, dtype)
    launch = backend.prepare("negate", [dx], out, {})
    launch.on_stream(0)()  # the stream argument is cast with the op library's ffi
    np.testing.assert_array_equal(backend.to_host(out), -x)
    # other buffers of the layout; raw pointers; the op API's pointer callable
    y = _x(dtype, seed=1)
    dy, out2 = backend.to_device(y), backend.empty(y.shape, dtype)
    launch.run([dy], out2)
    np.testing.assert_array_equal(backend.to_host(out2), -y)
    backend.fill_nan(out2)
    launch.launch_ptrs(out2.ptr, [dy.ptr])
    np.testing.assert_array_equal(backend.to_host(out2), -y)
    assert launch.ptr_call()(out2.ptr, dx.ptr) == 0
    np.testing.assert_array_equal(backend.to_host(out2), -x)
    # in place, on a transposed view
    t = backend.to_device(np.ascontiguousarray(x.T).T)
    backend.prepare("negate", [t], t, {})()
    np.testing.assert_array_equal(backend.to_host(t), -x)


def test_statuses_carry_the_op_librarys_own_error_text(backend, negate_lib):
    backend.add_op(SPEC, c_library(negate_lib))
    x = backend.to_device(_x("f32", (4, 6)))
    with pytest.raises(ShapeError, match=r"negate \(host op library\): out has 3 rows, x 4") as err:
        backend.prepare("negate", [x], backend.empty((3, 6), "f32"), {})
    assert err.value.backend == "host" and "negate" not in backend.last_error()  # not the backend library's text
    # at launch: out overlapping x, other than exactly (the generated entry point's check), on every launch path
    buf = backend.to_device(_x("f32", (25,)))
    head = DeviceArray(backend, buf.ptr, (4, 6), (6, 1), "f32", buf.owner)
    tail = DeviceArray(backend, buf.ptr + 4, (4, 6), (6, 1), "f32", buf.owner)  # one element on: overlaps head
    launch = backend.prepare("negate", [x], backend.empty((4, 6), "f32"), {})
    with pytest.raises(OverlapError, match="negate: out overlaps input x"):
        launch.run([tail], head)
    with pytest.raises(OverlapError, match="negate: out overlaps input x"):
        launch.launch_ptrs(head.ptr, [tail.ptr])
    with pytest.raises(OverlapError, match="negate: out overlaps input x"):
        launch.ptr_call()(head.ptr, tail.ptr)  # raises itself: the caller's backend.check would read the wrong text
    with pytest.raises(OverlapError, match="negate: out overlaps input x"):
        launch.on_stream(0, [tail], head)()


def test_through_the_registry_and_the_op_api(backend, negate_lib):
    lib = c_library(negate_lib)

    class HostPlugin:
        @hookimpl
        def oprt_register_backends(self, register):
            register(backend)

    class NegatePlugin:
        @hookimpl
        def oprt_register_ops(self, register):
            register(SPEC)

        @hookimpl
        def oprt_register_impls(self, register):
            register("host", "negate", lib)

    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(numpy_plugin, "numpy", "oprt-core")
    pm.register_plugin(HostPlugin(), "host")
    pm.register_plugin(NegatePlugin(), "negate")
    reg = Registry(pm)
    assert reg.impls[("host", "negate")] is lib and ("host", "negate") not in reg.unused_impls
    x = _x("bf16", (5, 7), 3)
    np.testing.assert_array_equal(ops.run("negate", [x], backend="host", registry=reg), -x)
    np.testing.assert_array_equal(ops.run("negate", [x], backend="host", registry=reg), -x)  # the cached launcher


def _missing(tmp: Path) -> tuple[CLibraryImpl, str]:
    return c_library(tmp / "liboprt_negate_gone.so", missing="the package was built without a C compiler"), (
        r"liboprt_negate_gone\.so is not there: the package was built without a C compiler")


def _missing_asked(tmp: Path) -> tuple[CLibraryImpl, str]:
    def why() -> str:
        return "asked: see build-host.log"

    return c_library(tmp / "liboprt_negate_gone.so", missing=why), r"is not there: asked: see build-host\.log"


def _not_a_library(tmp: Path) -> tuple[CLibraryImpl, str]:
    path = tmp / "liboprt_negate_text.so"
    path.write_text("not an ELF file")
    return c_library(path), r"liboprt_negate_text\.so cannot be loaded: OSError"


def _unresolved(tmp: Path) -> tuple[CLibraryImpl, str]:
    # no OPRT_IMPLEMENTATION: oprt_set_error stays unresolved and the library does not load
    return c_library(build_negate(tmp, "liboprt_negate_noruntime", "-DNEGATE_NO_RUNTIME")), (
        r"cannot be loaded: .*oprt_set_error")


def _no_destroy(tmp: Path) -> tuple[CLibraryImpl, str]:
    path = build_negate(tmp, "liboprt_negate_nodestroy", "-Doprt_destroy_negate_descriptor=negate_destroy_elsewhere")
    return c_library(path), (r"lacks the entry point oprt_destroy_negate_descriptor \(its four: "
                             r"oprt_create_negate_descriptor, oprt_get_negate_workspace_size, oprt_negate, "
                             r"oprt_destroy_negate_descriptor\)")


def _other_abi(tmp: Path) -> tuple[CLibraryImpl, str]:
    path = build_negate(tmp, "liboprt_negate_abi1", "-DNEGATE_FAKE_ABI=1")
    return c_library(path), (rf"was built against oprt.h ABI version 1, but the installed oprt-core expects version "
                             rf"{abi_version()}; rebuild the op package")


@pytest.mark.parametrize("make", [_missing, _missing_asked, _not_a_library, _unresolved, _no_destroy, _other_abi])
def test_supports_says_why_a_library_cannot_be_used(backend, tmp_path, make):
    impl, reason = make(tmp_path)
    backend.add_op(SPEC, impl)  # cheap: nothing is loaded at registration
    assert "negate" not in backend._op_loaded
    sup = backend.supports("negate", "f32")
    assert not sup.ok and sup.reason.startswith("negate on backend 'host': its library ")
    assert re.search(reason, sup.reason), sup.reason
    x = backend.to_device(_x("f32"))
    with pytest.raises(UnsupportedCase) as err:
        backend.prepare("negate", [x], backend.empty(x.shape, "f32"), {})
    assert str(err.value) == sup.reason
    assert backend.supports("copy", "f32").ok  # the backend's own ops are untouched


def test_add_op_refusals(backend, negate_lib):
    with pytest.raises(InvalidArgumentError, match=r"register oprt_core.compiled.c_library\(path\)"):
        backend.add_op(SPEC, lambda *a: None)
    with pytest.raises(InvalidArgumentError, match="has no C ABI"):
        backend.add_op(_negate_spec([Param("k", (float,), 1.0, "k")]), c_library(negate_lib))
    with pytest.raises(InvalidArgumentError, match="'copy' is one of oprt.h's"):
        backend.add_op(operators.spec("copy"), c_library(negate_lib))
    with pytest.raises(TypeError, match="it is not called"):
        c_library(negate_lib)()
    # registered again with c_abi_impl: the backend's own library then (it has no negate)
    backend.add_op(SPEC, c_library(negate_lib))
    backend.add_op(SPEC, c_abi_impl)
    x = backend.to_device(_x("f32"))
    with pytest.raises(UnsupportedCase, match="the library does not implement 'negate'"):
        backend.prepare("negate", [x], backend.empty(x.shape, "f32"), {})


def test_last_launch_is_not_the_backend_librarys_after_an_op_library_op(host_lib_path, make_host_loader, negate_lib):
    be = CompiledBackend("host", make_host_loader(host_lib_path), last_launch=lambda: "host_copy")
    be.add_op(SPEC, c_library(negate_lib))
    x = be.to_device(_x("f32"))
    negate = be.prepare("negate", [x], be.empty(x.shape, "f32"), {})
    assert be.last_launch() is None  # the backend library did not run it: it cannot say
    copy = be.prepare("copy", [x], be.empty(x.shape, "f32"), {})
    copy()
    assert be.last_launch() == "host_copy"
    negate()
    assert be.last_launch() is None
