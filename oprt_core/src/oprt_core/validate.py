"""Python-side call validation for backends implemented in Python (numpy, torch, cupy...).

Compiled backends validate in C (oprt_validate.h); this module gives the same
answers and the same exception types for the others, so every backend rejects
bad input alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .dtypes import DType, get_dtype
from .errors import InvalidArgumentError, UnsupportedCase
from .spec import OpSpec

__all__ = ["check_call", "check_output_layout"]


def check_call(spec: OpSpec, shapes: Sequence[Sequence[int]], dtypes: Sequence[Any], out_shape: Sequence[int],
               out_dtype: Any, params: Mapping[str, Any] | None) -> tuple[DType, dict[str, Any]]:
    """Validate one call of ``spec``; returns (dtype, params with defaults).

    Raises InvalidArgumentError (count, shape, param, axis, dtype mismatch) or
    UnsupportedCase (a dtype the op does not define).
    """
    if len(shapes) != spec.n_inputs:
        raise InvalidArgumentError(f"{spec.name} takes {spec.n_inputs} input(s) "
                                   f"({', '.join(spec.input_names)}), got {len(shapes)}")
    dts = [get_dtype(d) for d in dtypes]
    odt = get_dtype(out_dtype)
    for name, dt in zip(spec.input_names, dts):
        if dt != odt:
            raise InvalidArgumentError(f"{spec.name}: dtype mismatch: out is {odt} but {name} is {dt} "
                                       "(mixed dtypes are not supported)")
    if odt.name not in spec.dtypes:
        raise UnsupportedCase(f"{spec.name} does not define dtype {odt}; it supports {', '.join(spec.dtypes)}")
    params = spec.validate_params(params, shapes)
    expected = spec.output_shape(shapes, params)
    if tuple(out_shape) != tuple(expected):
        raise InvalidArgumentError(f"{spec.name}: shape mismatch: out has shape {tuple(out_shape)}, "
                                   f"expected {tuple(expected)} for inputs {', '.join(map(str, map(tuple, shapes)))}")
    return odt, params


def check_output_layout(shape: Sequence[int], strides: Sequence[int], writeable: bool = True,
                        name: str = "out") -> None:
    """Reject an output that cannot be written element by element: read-only, or with two indices that
    map to the same element (a zero or overlapping stride on a dim of extent > 1), as oprt_validate.h's
    oprt_check_output_strides does for compiled backends. ``strides`` in any unit (bytes or elements)."""
    if not writeable:
        raise InvalidArgumentError(f"{name} is read-only (e.g. a broadcast view); pass a writeable array")
    dims = sorted((abs(int(s)), int(n)) for s, n in zip(strides, shape) if int(n) > 1)
    if any(n == 0 for n in shape):
        return
    unit = min((s for s, _ in dims if s), default=1)
    span = unit  # bytes covered by the smaller dims, in stride units
    for s, n in dims:
        if s < span or s == 0:
            raise InvalidArgumentError(
                f"{name} has overlapping strides {tuple(strides)} for shape {tuple(shape)}: an element would be "
                "written twice; pass an array whose elements are distinct (e.g. a contiguous one)")
        span = s * n
