"""oprt_build.py (the build helper the compiled backends' setup.py use): its environment knobs."""

from __future__ import annotations

import pytest

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
