"""The build and the plugin, on any machine (no GPU needed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import oprt_nvidia
from oprt_core.cabi import abi_version

KERNEL_FILES = ("elementwise.cu", "reduce.cu", "softmax.cu", "runtime.cu")


def _info(ext) -> dict[str, object]:
    ffi, lib = ext.ffi, ext.lib
    info = ffi.new("oprt_library_info_t *")
    assert lib.oprt_get_library_info(info) == 0
    fields = ("backend", "flavour", "toolchain", "architectures", "runtime_version")
    return {"abi_version": int(info.abi_version), **{f: ffi.string(getattr(info, f)).decode() for f in fields}}


def test_package_imports_without_loading_the_extension():
    code = "import sys, oprt_nvidia, oprt_nvidia.plugin; print('oprt_nvidia._oprt_nvidia' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_library_info(nvidia_ext):
    info = _info(nvidia_ext)
    assert info["backend"] == "nvidia"
    assert info["flavour"] == "nvcc"
    assert re.fullmatch(r"nvcc \d+\.\d+", info["toolchain"]), info
    assert info["abi_version"] == abi_version() == int(nvidia_ext.lib.OPRT_ABI_VERSION)
    archs = os.environ.get("OPRT_CUDA_ARCHS", "")
    if archs and "90" not in archs:
        pytest.skip(f"built with OPRT_CUDA_ARCHS={archs}")
    assert "sm_90" in info["architectures"].split(), info
    assert info["runtime_version"].startswith("runtime ")


def test_device_count_is_a_status_not_a_crash(nvidia_ext):
    ffi, lib = nvidia_ext.ffi, nvidia_ext.lib
    count = ffi.new("int32_t *", 99)
    status = lib.oprt_get_device_count(count)
    if status == 0:
        assert count[0] >= 1
    else:
        assert status == lib.OPRT_STATUS_NO_DEVICE
        assert count[0] == 0
        assert ffi.string(lib.oprt_last_error_message()).decode()


def test_no_device_in_a_fresh_process():
    """The first CUDA call of a process on a machine without a GPU: a status and CUDA's text."""
    code = textwrap.dedent("""
        from oprt_nvidia import load_extension
        ext = load_extension()
        n = ext.ffi.new("int32_t *")
        st = ext.lib.oprt_get_device_count(n)
        print(st, n[0], ext.ffi.string(ext.lib.oprt_last_error_message()).decode())
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    status, count, *_ = proc.stdout.split()
    assert (int(status), int(count) > 0) in ((0, True), (10, False)), proc.stdout


def test_ptxas_log_is_shipped():
    path = oprt_nvidia.ptxas_log_path()
    assert path.is_file(), f"{path} missing: the build did not ship build-ptxas.log"
    text = path.read_text(encoding="utf-8")
    for name in KERNEL_FILES:
        assert f"## {name}:" in text, f"{name} missing from {path}"
    assert "-Xptxas -v" in text
    assert re.search(r"Used \d+ registers", text), "no -Xptxas -v register report in the log"
    assert "spill" in text


def test_sources_match_the_log():
    """Every .cu file of the checkout (when this is one) was built."""
    csrc = Path(__file__).resolve().parents[2] / "oprt_nvidia" / "csrc"
    if not csrc.is_dir():
        pytest.skip("not run from a checkout")
    text = oprt_nvidia.ptxas_log_path().read_text(encoding="utf-8")
    assert {p.name for p in csrc.glob("*.cu")} == set(re.findall(r"^## (\S+\.cu):", text, re.M))


def test_plugin_registers_nvidia():
    import oprt_nvidia.plugin as plugin
    from oprt_core import get_plugin_manager
    from oprt_core.plugins import Registry

    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(plugin, "nvidia", "oprt-nvidia")
    reg = Registry(pm)
    backend = reg.get_backend("nvidia")
    assert backend.name == "nvidia"
    assert backend.cuda_interop


def test_entry_point_is_installed():
    from importlib import metadata

    eps = [ep for ep in metadata.entry_points(group="oprt") if ep.name == "nvidia"]
    assert [ep.value for ep in eps] == ["oprt_nvidia.plugin"]
    from oprt_core import get_registry

    assert get_registry().get_backend("nvidia").name == "nvidia"


def test_availability_has_a_reason(nvidia_raw):
    avail = nvidia_raw.availability()
    assert avail.reason
    count = nvidia_raw.ffi.new("int32_t *")
    if nvidia_raw.lib.oprt_get_device_count(count) != 0:
        assert not avail.ok
        assert "device" in avail.reason.lower() or "driver" in avail.reason.lower()
    else:
        assert avail.ok, avail.reason


def test_descriptors_need_no_device(nvidia_ext, tdesc):
    """Creating and destroying descriptors is host-only work."""
    ffi, lib = nvidia_ext.ffi, nvidia_ext.lib
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


@pytest.mark.parametrize("shape, axis", [((1 << 24,), -128), ((4, 1 << 22), -1), ((1 << 13, 1 << 13), 0)])
def test_reduce_sum_workspace_for_split_reductions(nvidia_ext, tdesc, shape, axis):
    """Few long rows or columns are split across blocks: the partial sums need a workspace."""
    ffi, lib = nvidia_ext.ffi, nvidia_ext.lib
    out_shape = () if axis == -128 else tuple(n for i, n in enumerate(shape) if i != axis % len(shape))
    p = ffi.new("oprt_reduce_sum_descriptor_t *")
    assert lib.oprt_create_reduce_sum_descriptor(p, tdesc(out_shape), tdesc(shape), axis, 0) == 0
    size = ffi.new("size_t *")
    assert lib.oprt_get_reduce_sum_workspace_size(p[0], size) == 0
    assert size[0] > 0
    assert size[0] < 64 << 20
    lib.oprt_destroy_reduce_sum_descriptor(p[0])
