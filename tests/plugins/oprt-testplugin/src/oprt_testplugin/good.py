"""A well-behaved plugin: backend ``testbackend`` (the numpy backend under another name) and op ``negate``."""

from __future__ import annotations

import numpy as np

from oprt_core import Budget, Case, OpSpec, TensorCase, hookimpl
from oprt_core.numpy_backend import NumpyBackend

__all__ = ["TestBackend", "negate_spec", "oprt_register_backends", "oprt_register_ops"]


def _case(shape: tuple[int, ...], layout: str = "contiguous") -> Case:
    return Case("negate", "x".join(map(str, shape)) + ("" if layout == "contiguous" else f"-{layout}"),
                (TensorCase(shape, layout),))


negate_spec = OpSpec(
    name="negate",
    doc="out = -x (test plugin op).",
    n_inputs=1,
    input_names=("x",),
    reference_fn=lambda x: -x,
    bytes_fn=lambda case, dt: 2 * case.numel * dt.itemsize,
    flops_fn=lambda case: case.numel,
    budgets={"f32": Budget(0.0, 0.0), "f16": Budget(0.0, 0.0), "bf16": Budget(0.0, 0.0)},  # negation is exact
    case_sets={
        "smoke": [_case((100,))],
        "default": [_case((1000,)), _case((33, 65), "transposed")],
        "large": [_case((1 << 20,))],
        "edge": [_case((1,)), _case((0,)), _case((7,)), _case((9, 5), "step2")],
    },
)


def _negate(inputs, out, params) -> None:
    np.negative(inputs[0], out=out)


class TestBackend(NumpyBackend):
    """The numpy backend under the name ``testbackend``, taught ``negate``."""

    __test__ = False  # not a pytest test class
    name = "testbackend"

    def __init__(self) -> None:
        super().__init__()
        self.add_op(negate_spec, _negate)


@hookimpl
def oprt_register_backends(register) -> None:
    register(TestBackend())


@hookimpl
def oprt_register_ops(register) -> None:
    register(negate_spec)
