"""Top-level test configuration for every oprt package's tests.

It installs nothing: the test environment (tox, CI) installs the packages under test and the test plugin
``tests/plugins/oprt-testplugin``; tests that need something missing skip with the reason.
"""

from __future__ import annotations

import os
from importlib import metadata

import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis is a dev dependency; only property tests need it
    pass
else:
    # modest and deadline-free: the whole core suite must stay well under a minute on 2 cores. Under CI (CI set)
    # the examples are derived from each test's name, so a run is reproducible and a red CI is a regression, not
    # a new draw; elsewhere each run draws afresh (and the GPU suite's fuzz phase draws thousands).
    settings.register_profile("oprt", max_examples=60, deadline=None, derandomize=bool(os.environ.get("CI")),
                              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    settings.register_profile("oprt-thorough", max_examples=600, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    settings.load_profile("oprt")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def pytest_report_header(config) -> list[str]:
    dists = ("oprt-core", "oprt-bench", "oprt-nvidia", "oprt-metax", "oprt-testplugin")
    return ["oprt: " + ", ".join(f"{d} {_version(d)}" for d in dists)]


@pytest.fixture(autouse=True, scope="session")
def _no_user_calibration_cache(tmp_path_factory):
    """Runs made by fixtures shared across tests (set up before any test's own cache below) never read the user's
    cache."""
    old = os.environ.get("OPRT_CACHE_DIR")
    os.environ["OPRT_CACHE_DIR"] = str(tmp_path_factory.mktemp("oprt-cache-shared"))
    yield
    if old is None:
        os.environ.pop("OPRT_CACHE_DIR", None)
    else:
        os.environ["OPRT_CACHE_DIR"] = old


@pytest.fixture(autouse=True)
def _private_calibration_cache(_no_user_calibration_cache, tmp_path_factory, monkeypatch):
    """Every test starts with an empty calibration cache of its own (oprt-bench reuses calibrations between
    runs; a test must measure, or see the reuse it sets up, never another test's)."""
    monkeypatch.setenv("OPRT_CACHE_DIR", str(tmp_path_factory.mktemp("oprt-cache")))
