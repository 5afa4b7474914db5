"""Bad input through C and Python returns the matching status and raises the matching exception, metax.

tests/oprt_nvidia/test_nvidia_errors.py's test functions with the metax fixtures (validation is oprt.h's
shared oprt_validate.h, so the statuses and messages are the same); the device-index test that builds a
second backend is written anew.
"""

from __future__ import annotations

from gpu_helpers import check_device_index_out_of_range, reuse_tests

MAPPING = {"nvidia_backend": "metax_backend", "nvidia_ext": "metax_ext", "nvidia_raw": "metax_raw"}

# test_softmax_workspace_too_small: the metax sources do not have the nvidia softmax columns without clusters,
# so no metax softmax descriptor asks for a workspace (test_metax_softmax_needs_no_workspace below)
globals().update(reuse_tests("oprt_nvidia/test_nvidia_errors.py", MAPPING,
                             exclude=("test_python_device_index_out_of_range", "test_softmax_workspace_too_small")))


def test_metax_softmax_needs_no_workspace(metax_ext, tdesc):
    ffi, lib = metax_ext.ffi, metax_ext.lib
    p = ffi.new("oprt_softmax_descriptor_t *")
    assert lib.oprt_create_softmax_descriptor(p, tdesc((9000, 200)), tdesc((9000, 200)), 0) == 0
    size = ffi.new("size_t *")
    assert lib.oprt_get_softmax_workspace_size(p[0], size) == 0
    lib.oprt_destroy_softmax_descriptor(p[0])
    assert size[0] == 0


def test_python_device_index_out_of_range(metax_backend):
    from oprt_metax.plugin import make_backend

    check_device_index_out_of_range(metax_backend, make_backend)
