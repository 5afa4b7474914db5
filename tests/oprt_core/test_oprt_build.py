"""oprt_core.build (the build helper the compiled backends' setup.py use): its environment knobs, and the sources it
finds."""

from __future__ import annotations

import pytest

import oprt_core.build as oprt_build
from oprt_core import cdecl


def test_build_jobs_from_the_environment(monkeypatch):
    monkeypatch.setenv("OPRT_BUILD_JOBS", "3")
    assert oprt_build.build_jobs(10) == 3
    monkeypatch.delenv("OPRT_BUILD_JOBS")
    assert 1 <= oprt_build.build_jobs(10) <= 10


@pytest.mark.parametrize("value", ["many", "2.5", "-1"])
def test_build_jobs_rejects_a_bad_value_in_one_line(monkeypatch, value):
    monkeypatch.setenv("OPRT_BUILD_JOBS", value)
    with pytest.raises(oprt_build.BuildError) as info:
        oprt_build.build_jobs(4)
    message = str(info.value)
    assert "OPRT_BUILD_JOBS" in message and repr(value) in message and "\n" not in message


def test_pointer_entry_points_cover_every_launch_function():
    """One oprt_ptrs_<op> per launch function of oprt.h, integer pointers in the same order, the default
    stream; a launch function with a parameter that is not a plain pointer gets none."""
    from pathlib import Path

    from oprt_core.cabi import include_dir

    cdef = oprt_build.read_cdef(Path(include_dir()))
    decls, defs = oprt_build.pointer_entry_points(cdef)
    ops = [s.name for s in cdecl.c_abi_ops()]
    assert [line.split("(")[0].split()[-1] for line in decls.strip().splitlines()] == [f"oprt_ptrs_{op}" for op in ops]
    assert ("oprt_status_t oprt_ptrs_vector_add(oprt_vector_add_descriptor_t desc, uintptr_t workspace, "
            "size_t workspace_size, uintptr_t out, uintptr_t a, uintptr_t b);") in decls
    assert ("return oprt_vector_add(desc, (void *)workspace, workspace_size, (void *)out, (const void *)a, "
            "(const void *)b, NULL);") in defs
    odd = ("oprt_status_t oprt_scale(oprt_scale_descriptor_t desc, void *workspace, size_t workspace_size,\n"
           "                         void *out, const float *x, oprt_stream_t stream);")
    assert oprt_build.pointer_entry_points(odd) == ("\n", "\n")


# -- op packages' own libraries (op_library_setup_kwargs) -------------------------------------------------------------

def _run_op_library_build(tmp_path, make_plan, monkeypatch, mode=None):
    """build_ext of op_library_setup_kwargs for one library of package ``pkg`` into ``tmp_path/lib/pkg``."""
    pytest.importorskip("setuptools")
    from setuptools.dist import Distribution

    monkeypatch.setattr(oprt_build, "_DIST", ["oprt"])  # op_library_setup_kwargs names the dist in messages
    if mode is None:
        monkeypatch.delenv("OPRT_X_HOST", raising=False)
    else:
        monkeypatch.setenv("OPRT_X_HOST", mode)
    (tmp_path / "src" / "pkg").mkdir(parents=True, exist_ok=True)
    lib = oprt_build.OpLibrary(backend="host", package="pkg", lib_name="oprt_x_host", log_name="build-host.log",
                               make_plan=make_plan, mode_env="OPRT_X_HOST")
    dist = Distribution({"name": "oprt-x", "packages": ["pkg"], "package_dir": {"": str(tmp_path / "src")},
                         **oprt_build.op_library_setup_kwargs("oprt-x", [lib])})
    cmd = dist.get_command_obj("build_ext")
    cmd.build_lib, cmd.build_temp = str(tmp_path / "lib"), str(tmp_path / "temp")
    cmd.ensure_finalized()
    cmd.run()
    return tmp_path / "lib" / "pkg"


def _no_compiler(temp_dir, out_dir):
    raise oprt_build.BuildError("nvcc (the CUDA compiler) was not found; looked in: PATH")


def test_an_op_library_left_out_says_why(tmp_path, monkeypatch):
    stale = tmp_path / "lib" / "pkg" / "liboprt_x_host.so"
    stale.parent.mkdir(parents=True)
    stale.write_text("an older build")
    out = _run_op_library_build(tmp_path, _no_compiler, monkeypatch)
    assert not stale.exists()  # an older library would not say why the new build left it out
    assert (out / "build-host.log").read_text() == (
        f"{oprt_build.NOT_BUILT}nvcc (the CUDA compiler) was not found; looked in: PATH\n")
    out = _run_op_library_build(tmp_path / "off", _no_compiler, monkeypatch, "off")
    assert (out / "build-host.log").read_text() == f"{oprt_build.NOT_BUILT}OPRT_X_HOST=off\n"
    with pytest.raises(oprt_build.BuildError, match=r"^error: oprt-x build: OPRT_X_HOST=on but liboprt_x_host\.so "
                                                    r"cannot be built: nvcc \(the CUDA compiler\) was not found"):
        _run_op_library_build(tmp_path / "on", _no_compiler, monkeypatch, "on")
    with pytest.raises(oprt_build.BuildError, match=r"OPRT_X_HOST='sometimes' is not one of auto, on, off"):
        _run_op_library_build(tmp_path / "bad", _no_compiler, monkeypatch, "sometimes")


def test_an_op_library_built_with_its_runtime_source(tmp_path, monkeypatch):
    """A plan of the runtime source alone (C, the system compiler): the library holds the error text and the ABI
    version; a failing compile stops the build even in mode auto."""
    import shutil
    import subprocess

    from oprt_core.cabi import abi_version, include_dir

    cc = next((c for c in ("cc", "gcc", "clang") if shutil.which(c)), None)
    if cc is None:
        pytest.skip("no C compiler (cc, gcc or clang)")

    def plan(temp_dir, out_dir, extra=()):
        src = oprt_build.op_runtime_source(temp_dir, ".c")
        obj, lib = temp_dir / "oprt_op_runtime.o", out_dir / "liboprt_x_host.so"
        compile_ = oprt_build.Compile(src, obj, [cc, "-fPIC", f"-I{include_dir()}", *extra, "-c", str(src), "-o",
                                                 str(obj)])
        return oprt_build.Plan("oprt-x build of liboprt_x_host.so", [compile_], [cc, "-shared", str(obj), "-o",
                                                                              str(lib)], lib, tool=cc)

    out = _run_op_library_build(tmp_path, plan, monkeypatch)
    assert (out / "build-host.log").read_text().startswith("# oprt-x build of liboprt_x_host.so")
    assert oprt_build.op_runtime_source(tmp_path / "temp").read_text() == oprt_build.OP_RUNTIME_SOURCE
    nm = shutil.which("nm")
    if nm:
        symbols = subprocess.run([nm, "-D", "--defined-only", str(out / "liboprt_x_host.so")], capture_output=True,
                                 text=True).stdout.split()
        assert {"oprt_set_error", "oprt_last_error_message", "oprt_status_string",
                "oprt_library_abi_version"} <= set(symbols)
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    ffi.cdef("int32_t oprt_library_abi_version(void);")
    assert ffi.dlopen(str(out / "liboprt_x_host.so")).oprt_library_abi_version() == abi_version()
    with pytest.raises(oprt_build.BuildError, match="failed on oprt_op_runtime.c"):
        _run_op_library_build(tmp_path / "broken", lambda t, o: plan(t, o, ["-include", str(tmp_path / "gone.h")]),
                              monkeypatch)


# -- the sources a GPU build compiles: every op folder's, found by globbing -------------------------------------------

def _fake_core(root):
    """A tree laid out as oprt-core: include/ (the HEADERS, oprt_shared/runtime.cu) and operators/<op>/."""
    include = root / "include"
    (include / oprt_build.SHARED_DIR).mkdir(parents=True)
    for name in oprt_build.HEADERS:
        (include / name).write_text(f"/* {name} */\n")
    (include / oprt_build.SHARED_DIR / "runtime.cu").write_text("// runtime\n")
    (include / oprt_build.SHARED_DIR / "common.cuh").write_text("// common\n")
    for op in ("beta", "alpha"):
        (root / "operators" / op).mkdir(parents=True)
        (root / "operators" / op / f"{op}.cu").write_text(f"// {op}\n")
        (root / "operators" / op / "plan.h").write_text(f"/* {op} */\n")
        (root / "operators" / op / "numpy_impl.py").write_text("")
    (root / "operators" / "alpha" / oprt_build.CUTE_DIR).mkdir()
    (root / "operators" / "alpha" / oprt_build.CUTE_DIR / "alpha_sm90.cu").write_text("// sm90\n")
    return include


def test_kernel_sources_are_the_shared_runtime_and_every_op_folder(tmp_path):
    include = _fake_core(tmp_path)
    rel = lambda paths: [str(p.relative_to(tmp_path)) for p in paths]  # noqa: E731
    assert rel(oprt_build.kernel_sources(include)) == [
        "include/oprt_shared/runtime.cu", "operators/alpha/alpha.cu", "operators/beta/beta.cu"]
    assert rel(oprt_build.cute_sources(include)) == ["operators/alpha/sm90/alpha_sm90.cu"]
    deps = rel(oprt_build.kernel_headers(include))
    assert "include/oprt_shared/common.cuh" in deps and "operators/beta/plan.h" in deps
    (tmp_path / "operators" / "gamma").mkdir()  # a new op folder: built with no build file edited
    (tmp_path / "operators" / "gamma" / "gamma.cu").write_text("// gamma\n")
    assert "operators/gamma/gamma.cu" in rel(oprt_build.kernel_sources(include))
    (tmp_path / "operators" / "gamma" / "alpha.cu").write_text("// another alpha.o\n")
    with pytest.raises(oprt_build.BuildError, match="share the name 'alpha'"):
        oprt_build.kernel_sources(include)


def test_the_repository_builds_every_op_folder():
    """This checkout's op folders each hold their kernel source, and kernel_sources() finds all of them."""
    from pathlib import Path

    from oprt_core import operators
    from oprt_core.cabi import include_dir

    found = {p.stem for p in oprt_build.kernel_sources(Path(include_dir()))}
    assert set(operators.names()) | {"runtime"} == found


def test_an_sdist_vendors_what_the_build_reads_and_finds_it_first(tmp_path, monkeypatch):
    """vendor() lays build.py, the include folder and the op folders' C files out as in oprt-core, under _oprt_core/;
    find_include_dir takes that copy before the checkout, and the vendored build.py loads on its own."""
    import importlib.util
    import sys

    include = _fake_core(tmp_path / "core")
    setup_dir = tmp_path / "pkg"
    oprt_build.vendor(include, setup_dir / oprt_build.VENDOR_DIR)
    dest = setup_dir / oprt_build.VENDOR_DIR
    files = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert files == sorted(["build.py", *(f"include/{h}" for h in oprt_build.HEADERS), "include/oprt_shared/common.cuh",
                            "include/oprt_shared/runtime.cu", "operators/alpha/alpha.cu", "operators/alpha/plan.h",
                            "operators/alpha/sm90/alpha_sm90.cu", "operators/beta/beta.cu", "operators/beta/plan.h"])
    monkeypatch.delenv("OPRT_INCLUDE_DIR", raising=False)
    assert oprt_build.find_include_dir(setup_dir, "oprt-x") == (dest / "include").resolve()
    spec = importlib.util.spec_from_file_location("vendored_oprt_build", dest / "build.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    assert [p.name for p in module.kernel_sources(dest / "include")] == ["runtime.cu", "alpha.cu", "beta.cu"]
    with pytest.raises(oprt_build.BuildError, match="cannot find the oprt include folder"):
        oprt_build.find_include_dir(tmp_path / "elsewhere", "oprt-x")
