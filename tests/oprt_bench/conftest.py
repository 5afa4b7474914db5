"""Fixtures of the oprt-bench tests; the helpers themselves live in bench_helpers (a unique module name)."""

from bench_helpers import registry, smoke_run  # noqa: F401 - fixtures

