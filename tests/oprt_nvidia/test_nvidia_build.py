"""The build and the plugin, on any machine (no GPU needed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from gpu_helpers import (
    SPLIT_REDUCTIONS,
    check_availability_has_a_reason,
    check_descriptors_need_no_device,
    check_entry_point_is_installed,
    check_no_device_is_a_status_in_a_fresh_process,
    check_pointer_entry_points,
    check_sources_match_the_log,
    check_workspace_for_split_reductions,
    library_info,
)

import oprt_nvidia
from oprt_core.cabi import abi_version

KERNEL_FILES = ("copy.cu", "reduce_sum.cu", "softmax.cu", "runtime.cu")


def test_package_imports_without_loading_the_extension():
    code = "import sys, oprt_nvidia, oprt_nvidia.plugin; print('oprt_nvidia._oprt_nvidia' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_library_info(nvidia_ext):
    info = library_info(nvidia_ext)
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
    check_no_device_is_a_status_in_a_fresh_process("oprt_nvidia")


def test_ptxas_log_is_shipped():
    path = oprt_nvidia.ptxas_log_path()
    assert path.is_file(), f"{path} missing: the build did not ship build-ptxas.log"
    text = path.read_text(encoding="utf-8")
    for name in KERNEL_FILES:
        assert f"## {name}:" in text, f"{name} missing from {path}"
    assert "-Xptxas -v" in text
    assert re.search(r"Used \d+ registers", text), "no -Xptxas -v register report in the log"
    assert "spill" in text


def test_sources_match_the_log(nvidia_ext):
    """Every shared kernel source of the checkout (when this is one) was built, and the CUTLASS ones exactly where the
    library says it has them; the log's title says whether and from where."""
    info = library_info(nvidia_ext)
    cute = "cute sm_90a (CUTLASS " in info["architectures"]
    path = oprt_nvidia.ptxas_log_path()
    check_sources_match_the_log(path, cute=cute)
    title = path.read_text(encoding="utf-8").splitlines()[0]
    assert ("CuTe kernels for sm_90a from CUTLASS" in title) == cute, title
    assert ("no CuTe kernels (" in title) == (not cute), title
    if not cute:
        assert re.search(r"\bwithout\b.*\bcute\b", info["architectures"]), info


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
    check_entry_point_is_installed("nvidia", "oprt_nvidia.plugin")


def test_availability_has_a_reason(nvidia_raw):
    check_availability_has_a_reason(nvidia_raw)


def test_descriptors_need_no_device(nvidia_ext, tdesc):
    """Creating and destroying descriptors is host-only work."""
    check_descriptors_need_no_device(nvidia_ext, tdesc)


@pytest.mark.parametrize("shape, axis", SPLIT_REDUCTIONS)
def test_reduce_sum_workspace_for_split_reductions(nvidia_ext, tdesc, shape, axis):
    """Few long rows or columns are split across blocks: the partial sums need a workspace."""
    check_workspace_for_split_reductions(nvidia_ext, tdesc, shape, axis)


def test_pointer_entry_points_forward_every_pointer(nvidia_ext, tdesc):
    check_pointer_entry_points(nvidia_ext, tdesc)


def test_load_extension_is_oprt_cores():
    """The ABI check lives in oprt_core (one copy for every compiled backend); these names are aliases."""
    from oprt_core.errors import AbiMismatchError

    assert oprt_nvidia.AbiMismatchError is AbiMismatchError
    assert callable(oprt_nvidia.load_extension)


@pytest.mark.parametrize(
    "shape, dtype, splits",
    [
        # f16: rows of 2048 packs, 8 tiles of 256 packs: two blocks an SM would be 32 chunks of 512 rows; at one an
        # SM, 16 chunks of 1024
        ((16384, 16384), 1, 16),
        ((16384, 16384), 2, 16),  # bf16 alike
        ((16384, 16384), 0, 8),  # f32: 16 tiles -> 8 chunks of 2048 rows
        # 2048 packs but 256-row chunks: not the 1-D blocks; 256 MiB: band tiles of 128 rows (kBandMinBytes),
        # 64 partial rows
        ((8192, 8192), 0, 64),
        ((8192, 8192), 1, 64),  # 16-bit, 128 MiB: band tiles
        ((8191, 8192), 1, 7),  # a row short of 128 MiB: the 32 x 8 blocks' 7 chunks of 1171 rows
    ],
    ids=["16384sq-f16", "16384sq-bf16", "16384sq-f32", "8192sq-f32", "8192sq-f16", "8191x8192-f16"],
)
def test_reduce_sum_wide_columns_plan(nvidia_ext, nvidia_raw, tdesc, shape, dtype, splits):
    """Axis 0 of rows of >= 2048 packs: long 1-D blocks (reduce_sum.cu, kColWidePacks) where about two an SM get >= 512
    rows each, run at about one an SM (kColWideUnroll), seen in the workspace (splits x columns partial sums). The
    H200's plan: 132 SMs, the library's figures without a device."""
    if nvidia_raw.availability().ok and nvidia_raw.device_properties()["sm_count"] != 132:
        pytest.skip("the expected splits are the H200's (132 SMs)")
    ffi, lib = nvidia_ext.ffi, nvidia_ext.lib
    p = ffi.new("oprt_reduce_sum_descriptor_t *")
    assert lib.oprt_create_reduce_sum_descriptor(p, tdesc(shape[1:], dtype), tdesc(shape, dtype), 0, 0) == 0
    size = ffi.new("size_t *")
    assert lib.oprt_get_reduce_sum_workspace_size(p[0], size) == 0
    lib.oprt_destroy_reduce_sum_descriptor(p[0])
    assert size[0] == splits * shape[1] * 4


@pytest.mark.parametrize(
    "shape, axis, dtype, size",
    [
        # band tiles (>= 128 MiB, 1024-4095 packs a row): ceil(rows / 128) partial rows of every kept element, the cases
        # of test_nvidia_paths.py's test_reduce_band_columns
        ((8000, 8200), 0, 0, 63 * 8200 * 4),
        ((8257, 8200), 0, 1, 65 * 8200 * 4),
        ((3, 2731, 8200), 1, 0, 22 * 3 * 8200 * 4),
        ((3, 2731, 8200), 1, 2, 22 * 3 * 8200 * 4),
        # >= 128 MiB outside that range keeps the earlier kernels: 2^21 rows of 16 packs (the workspace is the larger
        # of the packed plan's 1024 chunks and the scalar plan's 1056; band tiles would be 16384), 256 rows of 2^18
        # packs (1-D blocks, unsplit: no workspace)
        ((1 << 21, 64), 0, 0, 1056 * 64 * 4),
        ((256, 1 << 20), 0, 0, 0),
    ],
    ids=["f32-partial", "f16-partial", "f32-3d", "bf16-3d", "narrow", "wide"],
)
def test_reduce_sum_band_plan(nvidia_ext, nvidia_raw, tdesc, shape, axis, dtype, size):
    """Which column reductions take reduce_sum's band tiles (kBandMinBytes, kBandMinPacks), seen in the workspace: fails
    with the rule off (the 32 x 8 blocks' few chunks) or widened to every row width. The H200's 132 SMs."""
    if nvidia_raw.availability().ok and nvidia_raw.device_properties()["sm_count"] != 132:
        pytest.skip("the expected sizes are the H200's (132 SMs)")
    ffi, lib = nvidia_ext.ffi, nvidia_ext.lib
    out_shape = tuple(n for i, n in enumerate(shape) if i != axis)
    p = ffi.new("oprt_reduce_sum_descriptor_t *")
    assert lib.oprt_create_reduce_sum_descriptor(p, tdesc(out_shape, dtype), tdesc(shape, dtype), axis, 0) == 0
    got = ffi.new("size_t *")
    assert lib.oprt_get_reduce_sum_workspace_size(p[0], got) == 0
    lib.oprt_destroy_reduce_sum_descriptor(p[0])
    assert got[0] == size


@pytest.mark.parametrize(
    "shape, axis, dtype, size",
    [
        # f32 over more than 8192 rows: 256 bytes of ticket, then 8 bytes a block (1024 rows) and column, blocks
        # a strip ceil(L / 1024), strips of 32 columns
        ((16384, 16384), 0, 0, 256 + 16 * 16384 * 8),
        ((9000, 200), 0, 0, 256 + 9 * 7 * 32 * 8),  # 9 blocks, a partial seventh strip
        ((2, 9000, 72), 1, 0, 256 + 2 * 9 * 3 * 32 * 8),  # an outer dim
        ((8192, 8192), 0, 0, 0),  # 8 blocks a strip: clusters, no workspace
        ((16385, 64), 0, 0, 0),  # past 16 blocks: the generic columns kernel (softmax_cols)
        ((16384, 16384), 0, 1, 0),  # 16-bit keeps its clusters
        ((16384, 16384), -1, 0, 0),  # rows
        ((9000, 201), 0, 0, 0),  # inner not a whole number of 16-byte packs
    ],
    ids=["16384sq", "9000x200", "outer", "8192sq", "16385", "f16", "rows", "odd-inner"],
)
def test_softmax_group_cols_workspace(nvidia_ext, tdesc, shape, axis, dtype, size):
    """Which softmax descriptors ask for the strip-exchange workspace (softmax.cu, cols_group_workspace_f32),
    and its size: fails with the rule off (every size 0) or a changed slot layout."""
    ffi, lib = nvidia_ext.ffi, nvidia_ext.lib
    p = ffi.new("oprt_softmax_descriptor_t *")
    assert lib.oprt_create_softmax_descriptor(p, tdesc(shape, dtype), tdesc(shape, dtype), axis) == 0
    got = ffi.new("size_t *")
    assert lib.oprt_get_softmax_workspace_size(p[0], got) == 0
    lib.oprt_destroy_softmax_descriptor(p[0])
    assert got[0] == size


def test_last_launch_without_a_launch(nvidia_ext):
    """oprt_nvidia_last_launch (runtime.cu; oprt_nvidia.last_launch): per host thread, "none" on a thread that launched
    nothing and after a call refused before its launch (a NULL descriptor on this thread); NULL_POINTER for a NULL
    buffer; BAD_PARAM and an emptied buffer where the buffer cannot hold the name, with the status's message. The
    names a launch leaves are checked by the GPU tests (test_nvidia_paths.py, _launched)."""
    import threading

    from oprt_core.compiled import raise_for_status
    from oprt_core.errors import OprtError

    ffi, lib = nvidia_ext.ffi, nvidia_ext.lib
    seen = []
    t = threading.Thread(target=lambda: seen.append(oprt_nvidia.last_launch()))
    t.start()
    t.join()
    assert seen == ["none"]
    # the plugin's backend asks the same function (oprt-bench's kernel column: CompiledBackend.last_launch)
    from oprt_nvidia.plugin import make_backend

    t = threading.Thread(target=lambda: seen.append(make_backend().last_launch()))
    t.start()
    t.join()
    assert seen == ["none", "none"]
    assert lib.oprt_reduce_sum(ffi.NULL, ffi.NULL, 0, ffi.NULL, ffi.NULL, ffi.NULL) == lib.OPRT_STATUS_NULL_POINTER
    assert oprt_nvidia.last_launch() == "none"
    assert lib.oprt_nvidia_last_launch(ffi.NULL, 16) == lib.OPRT_STATUS_NULL_POINTER
    buf = ffi.new("char[]", b"xxxx")
    assert lib.oprt_nvidia_last_launch(buf, 4) == lib.OPRT_STATUS_BAD_PARAM  # "none" needs 5 bytes with its NUL
    assert ffi.string(buf) == b""
    assert "cannot hold" in ffi.string(lib.oprt_last_error_message()).decode()
    assert lib.oprt_nvidia_last_launch(buf, 5) == lib.OPRT_STATUS_SUCCESS and ffi.string(buf) == b"none"
    with pytest.raises(OprtError):
        raise_for_status(ffi, lib, lib.oprt_nvidia_last_launch(buf, 1), "nvidia")
