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
