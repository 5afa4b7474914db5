"""Availability reasons of compiled backends that say what is missing: no driver, a driver too old for the
runtime the library was built with, no device; the runtime's own message in parentheses. On the CPU: the host
oprt.h library with its device count, last error and library info replaced (a fake runtime status)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from oprt_core import hookimpl, ops
from oprt_core.compiled import DRIVER_HINTS, CompiledBackend, DriverHint, no_device_reason
from oprt_core.errors import BackendUnavailable
from oprt_core.plugins import Registry, get_plugin_manager

INSUFFICIENT = ("cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version "
                "(cudaErrorInsufficientDriver)")
NO_DEVICE = "cudaGetDeviceCount: no CUDA-capable device is detected (cudaErrorNoDevice)"


class _FakeLib:
    """The host library, but oprt_get_device_count answers ``status`` with no device and ``message`` as the last
    error, and oprt_get_library_info reports ``runtime_version`` and ``flavour``."""

    def __init__(self, ffi, lib, *, status: int, message: str, runtime_version: str, flavour: str = "nvcc"):
        self._ffi, self._lib = ffi, lib
        self._status = status
        self._message = ffi.new("char[]", message.encode())
        self._runtime_version, self._flavour = runtime_version.encode(), flavour.encode()

    def oprt_get_device_count(self, count):
        count[0] = 0
        return self._status

    def oprt_last_error_message(self):
        return self._message

    def oprt_get_library_info(self, info):
        status = self._lib.oprt_get_library_info(info)
        info.runtime_version = self._runtime_version
        info.flavour = self._flavour
        return status

    def __getattr__(self, name):
        return getattr(self._lib, name)


@pytest.fixture
def fake_backend(host_lib_path, make_host_loader):
    """``fake_backend(name, status=10, message=..., runtime_version=..., driver=...)``: a CompiledBackend over the
    host library with a fake runtime answer."""

    def make(name="nvidia", *, status=10, message=INSUFFICIENT, runtime_version="runtime 13.0, no driver",
             flavour="nvcc", driver=None):
        real = make_host_loader(host_lib_path)()

        def load():
            fake = _FakeLib(real.ffi, real.lib, status=status, message=message, runtime_version=runtime_version,
                            flavour=flavour)
            return SimpleNamespace(ffi=real.ffi, lib=fake)

        return CompiledBackend(name, load, vendor="NVIDIA", driver=driver)

    return make


@pytest.fixture
def absent_driver(tmp_path):
    """An NVIDIA-like hint whose probes fail here: a library no system has, a /proc path that does not exist."""
    return DriverHint("NVIDIA", "CUDA", "oprt-test-no-such-driver", str(tmp_path / "no-driver"),
                      "CUDA_VISIBLE_DEVICES", "nvidia-smi")


def test_no_driver_as_the_runtime_reports_it(fake_backend, absent_driver, tmp_path):
    avail = fake_backend(driver=absent_driver).availability()
    assert not avail.ok
    assert avail.reason == (
        "no NVIDIA driver is installed (the CUDA runtime 13.0 found none; liboprt-test-no-such-driver is not on the "
        f"library path; {tmp_path / 'no-driver'} does not exist): install the NVIDIA driver; nvidia-smi then lists "
        f"the GPUs ({INSUFFICIENT})")
    assert "insufficient" not in avail.reason.split("(")[0]  # the misleading raw text only in parentheses


def test_no_driver_with_the_default_nvidia_hint(fake_backend):
    avail = fake_backend().availability()
    assert avail.reason.startswith("no NVIDIA driver is installed (the CUDA runtime 13.0 found none")
    assert "install the NVIDIA driver; nvidia-smi then lists the GPUs" in avail.reason
    assert avail.reason.endswith(f" ({INSUFFICIENT})")


def test_no_driver_from_the_probes_when_the_runtime_does_not_say(fake_backend, absent_driver, tmp_path):
    avail = fake_backend(runtime_version="runtime unknown", driver=absent_driver).availability()
    assert avail.reason == (
        "no NVIDIA driver is installed (liboprt-test-no-such-driver is not on the library path; "
        f"{tmp_path / 'no-driver'} does not exist): install the NVIDIA driver; nvidia-smi then lists the GPUs "
        f"({INSUFFICIENT})")


def test_one_probe_finding_the_driver_is_not_no_driver(fake_backend, tmp_path, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    present = DriverHint("NVIDIA", "CUDA", "oprt-test-no-such-driver", str(tmp_path), "CUDA_VISIBLE_DEVICES")
    avail = fake_backend(runtime_version="", message=NO_DEVICE, driver=present).availability()
    assert avail.reason.startswith("no NVIDIA device is visible: the driver is installed but lists no GPU")


def test_driver_too_old_names_both_versions(fake_backend, absent_driver):
    avail = fake_backend(runtime_version="runtime 13.0, driver 12.4", driver=absent_driver).availability()
    assert avail.reason == (
        "the NVIDIA driver is too old: it supports CUDA 12.4, and this build of the nvidia backend uses CUDA "
        "runtime 13.0; update the driver (or rebuild the backend with a CUDA toolkit 12.4 or older) "
        f"({INSUFFICIENT})")


def test_no_device_with_a_driver(fake_backend, absent_driver, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    avail = fake_backend(runtime_version="runtime 13.0, driver 13.0", message=NO_DEVICE,
                         driver=absent_driver).availability()
    assert avail.reason == (
        "no NVIDIA device is visible: the driver (for CUDA 13.0) is installed but lists no GPU; check that the GPU "
        f"is present and given to this process (a container's --gpus) ({NO_DEVICE})")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    avail = fake_backend(runtime_version="runtime 13.0, driver 13.0", message=NO_DEVICE,
                         driver=absent_driver).availability()
    assert "lists no GPU; CUDA_VISIBLE_DEVICES='' is set and may hide them; check" in avail.reason


def test_a_newer_driver_without_a_device_is_not_too_old(fake_backend, absent_driver):
    """Minor-version compatibility: driver 12.4 runs runtime 12.8; a missing GPU is not blamed on the driver."""
    avail = fake_backend(runtime_version="runtime 12.8, driver 12.4", message=NO_DEVICE,
                         driver=absent_driver).availability()
    assert avail.reason.startswith("no NVIDIA device is visible: the driver (for CUDA 12.4) is installed")


def test_count_zero_without_a_status(host_lib_path, make_host_loader, monkeypatch):
    """A runtime that reports 0 devices with success: the same words (the host library with 0 devices)."""
    monkeypatch.setenv("OPRT_HOST_DEVICE_COUNT", "0")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    real = make_host_loader(host_lib_path)()
    lib = _FakeLib(real.ffi, real.lib, status=0, message="", runtime_version="runtime 13.0, driver 13.0")
    lib.oprt_get_device_count = real.lib.oprt_get_device_count
    lib.oprt_last_error_message = real.lib.oprt_last_error_message
    avail = CompiledBackend("nvidia", lambda: SimpleNamespace(ffi=real.ffi, lib=lib)).availability()
    assert avail.reason.startswith("no NVIDIA device is visible: the driver (for CUDA 13.0) is installed")
    assert avail.reason.endswith("(OPRT_HOST_DEVICE_COUNT=0))") and "(a container's --gpus) (" in avail.reason


def test_a_backend_without_a_hint_keeps_the_plain_words(fake_backend):
    avail = fake_backend("host", runtime_version="host-runtime 1", flavour="host-c", message="no host device"
                         ).availability()
    assert avail.reason == "no host device found (no host device)"


def test_the_flavour_picks_the_hint_before_the_name(fake_backend):
    """metax built with nvcc-shim runs on the CUDA runtime: its driver is NVIDIA's."""
    shim = fake_backend("metax", flavour="nvcc-shim").availability()
    assert shim.reason.startswith("no NVIDIA driver is installed (the CUDA runtime 13.0 found none")
    mxcc = fake_backend("metax", flavour="mxcc", runtime_version="runtime 3.0, no driver",
                        message="mcGetDeviceCount: no driver").availability()
    assert mxcc.reason == ("no MetaX driver is installed (the MACA runtime 3.0 found none): install the MetaX driver; "
                           "mx-smi then lists the GPUs (mcGetDeviceCount: no driver)")


def test_other_statuses_keep_the_status_name(fake_backend):
    avail = fake_backend(status=8, message="cudaGetDeviceCount: unknown error (cudaErrorUnknown)").availability()
    assert avail.reason == ("oprt_get_device_count failed [OPRT_STATUS_DEVICE_ERROR]: cudaGetDeviceCount: "
                            "unknown error (cudaErrorUnknown)")


def test_the_op_api_raises_the_reason(fake_backend, absent_driver):
    backend = fake_backend(driver=absent_driver)

    class Plugin:
        @hookimpl
        def oprt_register_backends(self, register) -> None:
            register(backend)

    pm = get_plugin_manager(load_entrypoints=False)
    pm.register_plugin(Plugin(), "fake-nvidia", "tests")
    ops.clear_cache()
    with pytest.raises(BackendUnavailable, match=r"^backend 'nvidia' is unavailable: no NVIDIA driver is installed"):
        ops.run("relu", [np.ones(3, np.float32)], backend="nvidia", registry=Registry(pm))


@pytest.mark.parametrize(("version", "start"), [
    ("runtime 13.0, no driver", "no NVIDIA driver is installed (the CUDA runtime 13.0 found none"),
    ("runtime 13.0, driver 12.0", "the NVIDIA driver is too old: it supports CUDA 12.0"),
    ("runtime 13.0, driver 13.1", "no NVIDIA device is visible: the driver (for CUDA 13.1) is installed"),
])
def test_no_device_reason_by_runtime_version(version, start):
    reason = no_device_reason("nvidia", INSUFFICIENT, version, DRIVER_HINTS["nvidia"], environ={})
    assert reason.startswith(start) and reason.endswith(f" ({INSUFFICIENT})")


def test_no_device_reason_without_a_raw_message():
    assert no_device_reason("host", "") == "no host device found"
