"""A fake plugin that registers backend ``fakebackend`` and op ``fake_double``."""

from __future__ import annotations

from oprt_core import Budget, Case, OpSpec, TensorCase, hookimpl
from oprt_core.numpy_backend import NumpyBackend


class FakeBackend(NumpyBackend):
    name = "fakebackend"


_CASES = {s: [Case("fake_double", "8", (TensorCase((8,)),))] for s in ("smoke", "default", "large", "edge")}

fake_double_spec = OpSpec(
    name="fake_double",
    doc="out = 2 * x (fake plugin op).",
    n_inputs=1,
    input_names=("x",),
    reference_fn=lambda x: 2 * x,
    bytes_fn=lambda case, dt: 2 * case.numel * dt.itemsize,
    flops_fn=lambda case: case.numel,
    budgets={d: Budget(0.0, 0.0) for d in ("f32", "f16", "bf16")},  # doubling is exact
    case_sets=_CASES,
)


@hookimpl
def oprt_register_backends(register) -> None:
    register(FakeBackend())


@hookimpl
def oprt_register_ops(register) -> None:
    register(fake_double_spec)
