"""Bad input through C and Python returns the matching status and raises the matching exception, metax.

tests/oprt_nvidia/test_nvidia_errors.py's test functions with the metax fixtures (validation is oprt.h's
shared oprt_validate.h, so the statuses and messages are the same); the device-index test that builds a
second backend is written anew.
"""

from __future__ import annotations

import pytest
from gpu_helpers import reuse_tests

import oprt_core.errors as E

MAPPING = {"nvidia_backend": "metax_backend", "nvidia_ext": "metax_ext", "nvidia_raw": "metax_raw"}

globals().update(reuse_tests("oprt_nvidia/test_nvidia_errors.py", MAPPING,
                             exclude=("test_python_device_index_out_of_range",)))


def test_python_device_index_out_of_range(metax_backend):
    from oprt_metax.plugin import make_backend

    with pytest.raises(E.BadDeviceError):
        metax_backend.set_device(4096)
    other = make_backend()
    other.device = 4096
    assert not other.availability().ok
    with pytest.raises(E.BadDeviceError):
        other.empty((3,), "f32")
