"""Fixtures of the op folders' tests (``<op>/test_<op>.py``: the tests about one op only).

They run from a source checkout, beside the repository's test suites, and share their helpers: the checkout's
``tests/`` folder goes on ``sys.path`` as pytest puts it there for those suites (``from gpu_helpers import
run_checked`` works alike in both), and tests/conftest.py's hypothesis profile applies also when only the op
folders are collected. The tests need oprt_core and numpy; those of a baseline backend skip where its library
(torch) is not installed.

- ``host_backend``: the host (CPU) build of oprt.h that tests/oprt_core/conftest.py makes (skips without a C
  compiler);
- ``torch_cpu``: the torch baseline on torch's CPU kernels, handed every op's torch implementation (skips without
  torch).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


def _tests_folder(config: pytest.Config) -> Path | None:
    """The checkout's tests/ folder: under pytest's rootdir, else above this file (an editable install)."""
    for root in (config.rootpath, *Path(__file__).resolve().parents):
        if (root / "tests" / "gpu_helpers.py").is_file():
            return root / "tests"
    return None


def pytest_configure(config: pytest.Config) -> None:
    tests = _tests_folder(config)
    if tests is None:
        return  # not a source checkout: the folder tests' imports of the suites' helpers say what is missing
    if str(tests) not in sys.path:
        sys.path.insert(0, str(tests))
    from gpu_helpers import load_test_module

    load_test_module("conftest.py")  # registers and loads the suites' hypothesis profile


@pytest.fixture(scope="session")
def host_backend(tmp_path_factory: pytest.TempPathFactory):
    from gpu_helpers import load_test_module

    pytest.importorskip("cffi")
    suite = load_test_module("oprt_core/conftest.py")
    return suite.host_backend_at(suite.build_host_library(tmp_path_factory.mktemp("host_lib")))


@pytest.fixture(scope="module")
def torch_cpu():
    from baseline_helpers import torch_cpu_backend

    return torch_cpu_backend()
