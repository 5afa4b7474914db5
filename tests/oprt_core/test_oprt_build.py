"""oprt_build.py (the build helper the compiled backends' setup.py use): its environment knobs."""

from __future__ import annotations

import pytest

from oprt_core import cdecl
from oprt_core.include import oprt_build


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
