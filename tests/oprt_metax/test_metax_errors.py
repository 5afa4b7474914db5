"""Bad input through C and Python returns the matching status and raises the matching exception, metax.

tests/oprt_nvidia/test_nvidia_errors.py's test functions with the metax fixtures (validation is oprt.h's
shared oprt_validate.h, so the statuses and messages are the same); the device-index test that builds a
second backend is written anew.
"""

from __future__ import annotations

from gpu_helpers import check_device_index_out_of_range, reuse_tests

MAPPING = {"nvidia_backend": "metax_backend", "nvidia_ext": "metax_ext", "nvidia_raw": "metax_raw"}

globals().update(reuse_tests("oprt_nvidia/test_nvidia_errors.py", MAPPING,
                             exclude=("test_python_device_index_out_of_range",)))


def test_python_device_index_out_of_range(metax_backend):
    from oprt_metax.plugin import make_backend

    check_device_index_out_of_range(metax_backend, make_backend)
