"""The build and the plugin of oprt-metax, on any machine (no GPU needed)."""

from __future__ import annotations

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

from oprt_core.cabi import abi_version

KERNEL_FILES = ("copy.cu", "reduce_sum.cu", "softmax.cu", "runtime.cu")


def test_package_imports_without_loading_the_extension(metax_pkg):
    code = ("import sys, oprt_metax, oprt_metax.plugin; oprt_metax.plugin.make_backend(); "
            "print('oprt_metax._oprt_metax' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_library_info(metax_ext, metax_pkg):
    info = library_info(metax_ext)
    assert info["backend"] == "metax"
    assert info["flavour"] in ("mxcc", "nvcc-shim")
    assert info["flavour"] == metax_pkg.flavour()
    assert info["abi_version"] == abi_version() == int(metax_ext.lib.OPRT_ABI_VERSION)
    if info["flavour"] == "nvcc-shim":
        assert re.fullmatch(r"nvcc \d+\.\d+", info["toolchain"]), info
        assert "sm_" in info["architectures"], info
    else:
        assert info["toolchain"].startswith("mxcc "), info
    assert info["runtime_version"].startswith("runtime ")


def test_shim_flavour_in_library_info(metax_ext):
    """What CI and the H200 build: the nvcc-shim flavour, labelled as such."""
    info = library_info(metax_ext)
    if info["flavour"] != "nvcc-shim":
        pytest.skip(f"built with flavour {info['flavour']}")
    assert info["backend"] == "metax" and info["toolchain"].startswith("nvcc ")


def test_no_device_is_a_status_in_a_fresh_process(metax_pkg):
    check_no_device_is_a_status_in_a_fresh_process("oprt_metax")


def test_availability_has_a_reason(metax_raw):
    check_availability_has_a_reason(metax_raw)


def test_build_log_is_shipped(metax_pkg):
    path = metax_pkg.build_log_path()
    assert path.is_file(), f"{path} missing: the build did not ship build-metax.log"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# oprt-metax build: flavour ")
    for name in KERNEL_FILES:
        assert f"## {name}:" in text, f"{name} missing from {path}"
    if metax_pkg.flavour() == "nvcc-shim":
        assert "-x cu -include" in text and "maca_cuda_shim.h" in text and "-DOPRT_VENDOR_MACA" in text
        assert re.search(r"Used \d+ registers", text), "no -Xptxas -v register report in the log"


def test_sources_match_the_log(metax_pkg):
    check_sources_match_the_log(metax_pkg.build_log_path())


def test_plugin_registers_metax(metax_pkg):
    import oprt_metax.plugin as plugin
    from oprt_core import get_plugin_manager
    from oprt_core.plugins import Registry

    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(plugin, "metax", "oprt-metax")
    backend = Registry(pm).get_backend("metax")
    assert backend.name == "metax"
    assert backend.vendor == "MetaX"
    # only the shim's memory is CUDA memory
    assert backend.cuda_interop == (metax_pkg.flavour() == "nvcc-shim")


def test_entry_point_is_installed(metax_pkg):
    check_entry_point_is_installed("metax", "oprt_metax.plugin")


def test_backends_command_lists_metax(metax_pkg):
    """`oprt-bench backends` lists metax; with a device its flavour column says which build it is."""
    pytest.importorskip("oprt_bench")
    import json

    from click.testing import CliRunner

    from oprt_bench.cli import cli

    res = CliRunner().invoke(cli, ["backends", "--json"])
    assert res.exit_code == 0, res.output
    out = res.output
    rows = {b["name"]: b for b in json.loads(out)["backends"]}
    assert "metax" in rows
    if rows["metax"]["available"]:
        assert rows["metax"]["flavour"].startswith(metax_pkg.flavour())
    else:
        assert rows["metax"]["reason"]


@pytest.mark.gpu
def test_bench_rows_are_labelled_with_the_flavour(metax_backend, metax_pkg, tmp_path):
    """Every CSV row and run.json of a metax sweep carry the build flavour (nvcc-shim on NVIDIA)."""
    pytest.importorskip("oprt_bench")
    import csv
    import json

    from click.testing import CliRunner

    from oprt_bench.cli import cli

    out = tmp_path / "run"
    res = CliRunner().invoke(cli, ["--backends", "metax", "--ops", "copy,softmax", "--cases", "smoke", "--dtypes",
                                   "f32", "--mode", "test", "--baseline", "none", "--out", str(out), "--format",
                                   "csv,json", "-q"])
    assert res.exit_code == 0, res.output
    flavour = metax_pkg.flavour()
    with open(out / "results.csv", newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["backend"] == "metax"]
    assert rows
    assert "flavour" in rows[0], "results.csv has no flavour column"
    assert all(r["flavour"].startswith(flavour + " ") for r in rows), {r["flavour"] for r in rows}
    meta = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert meta["backends"]["metax"]["device_info"]["flavour"].startswith(flavour + " ")


def test_descriptors_need_no_device(metax_ext, tdesc):
    """Creating and destroying descriptors is host-only work (as in the nvidia suite, which imports oprt_nvidia
    at module level, so it is not reused here: the tox metax env has no oprt-nvidia)."""
    check_descriptors_need_no_device(metax_ext, tdesc)


def test_pointer_entry_points_forward_every_pointer(metax_ext, tdesc):
    check_pointer_entry_points(metax_ext, tdesc)


@pytest.mark.parametrize("shape, axis", SPLIT_REDUCTIONS)
def test_reduce_sum_workspace_for_split_reductions(metax_ext, tdesc, shape, axis):
    """Few long rows or columns are split across blocks: the partial sums need a workspace."""
    check_workspace_for_split_reductions(metax_ext, tdesc, shape, axis)


def test_load_extension_is_oprt_cores(metax_pkg):
    """The ABI check lives in oprt_core (one copy for every compiled backend); these names are aliases."""
    from oprt_core.errors import AbiMismatchError

    assert metax_pkg.AbiMismatchError is AbiMismatchError
    assert callable(metax_pkg.load_extension)
