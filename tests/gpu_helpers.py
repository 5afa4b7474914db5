"""Helpers shared by the GPU backend test suites (tests/oprt_nvidia, tests/oprt_metax).

A compiled backend implements the same oprt.h as oprt_nvidia, so its suite reuses the nvidia suite's test
functions rather than copying them: :func:`reuse_tests` loads a test module of ``tests/oprt_nvidia`` under
a private name and returns its ``test_*`` functions with their fixture arguments renamed (e.g.
``nvidia_backend`` -> ``metax_backend``), parametrize marks and all. Assign them in a test module's
namespace and pytest collects them there, with that folder's fixtures.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

TESTS = Path(__file__).resolve().parent


def load_test_module(relpath: str) -> ModuleType:
    """Import ``tests/<relpath>`` as its own module (``_reused_<path>``), apart from pytest's copy."""
    path = TESTS / relpath
    name = "_reused_" + relpath.replace("/", "_").removesuffix(".py")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def rename_fixtures(fn: Callable[..., Any], mapping: dict[str, str]) -> Callable[..., Any]:
    """``fn`` with its arguments renamed by ``mapping`` (pytest reads fixture names from the signature)."""
    sig = inspect.signature(fn)
    inverse = {new: old for old, new in mapping.items()}

    @functools.wraps(fn)
    def wrapper(**kwargs: Any) -> Any:
        return fn(**{inverse.get(k, k): v for k, v in kwargs.items()})

    wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[p.replace(name=mapping.get(p.name, p.name)) for p in sig.parameters.values()])
    return wrapper


def reuse_tests(relpath: str, mapping: dict[str, str], *, exclude: tuple[str, ...] = (),
                prefix: str = "test_") -> dict[str, Callable[..., Any]]:
    """Every ``test_*`` function of ``tests/<relpath>`` but ``exclude``, renamed to ``prefix + rest``."""
    module = load_test_module(relpath)
    out = {}
    for name, obj in vars(module).items():
        if name.startswith("test_") and inspect.isfunction(obj) and name not in exclude:
            out[prefix + name.removeprefix("test_")] = rename_fixtures(obj, mapping)
    return out
