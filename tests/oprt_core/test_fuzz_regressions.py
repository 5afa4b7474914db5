"""Examples the GPU fuzz run found, replayed on the host library in CI."""

from __future__ import annotations

from test_fuzz_cabi import T, run_case


def test_empty_input_with_a_huge_other_extent(host_backend):
    """reduce_sum over all of a (0, 2**62) tensor is valid in C; numpy cannot describe the host array
    (found on the metax shim build, 2026-11-29: the harness, not the library, raised)."""
    case = {"op": "reduce_sum", "out": T(dtype=0, ndim=0, shape=[], strides=[]),
            "ins": [T(dtype=0, ndim=2, shape=[0, 4_611_686_018_427_387_904], strides=[1, 1])],
            "params": {"axis": -128, "keepdims": 0}, "null": "none", "workspace": "exact", "pointers": "ok"}
    run_case("host", host_backend, case, seed=0)
