"""The dtypes oprt knows: names, numpy types (bfloat16 through ml_dtypes) and oprt.h codes."""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .errors import UnknownNameError

__all__ = ["DType", "DTYPES", "get_dtype", "dtype_of"]


@dataclass(frozen=True)
class DType:
    name: str  # short name used on the CLI and in reports: f32, f16, bf16
    numpy: np.dtype
    code: int  # oprt_dtype_t
    itemsize: int
    eps: float  # machine epsilon (spacing of 1.0)

    def __str__(self) -> str:
        return self.name


def _make(name: str, np_dtype, code: int) -> DType:
    dt = np.dtype(np_dtype)
    return DType(name, dt, code, dt.itemsize, float(ml_dtypes.finfo(dt).eps))


DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        _make("f32", np.float32, 0),
        _make("f16", np.float16, 1),
        _make("bf16", ml_dtypes.bfloat16, 2),
    )
}

_ALIASES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "half": "f16", "float": "f32"}


def get_dtype(name: str | DType | np.dtype | type) -> DType:
    """Look a dtype up by short name, long name or numpy dtype; raises UnknownNameError."""
    if isinstance(name, DType):
        return name
    if isinstance(name, str):
        key = _ALIASES.get(name.lower(), name.lower())
        if key in DTYPES:
            return DTYPES[key]
        raise UnknownNameError("dtype", name, DTYPES)
    try:
        np_dt = np.dtype(name)
    except TypeError:
        raise UnknownNameError("dtype", name, DTYPES) from None
    return dtype_of(np_dt)


def dtype_of(np_dtype: np.dtype) -> DType:
    """The oprt dtype of a numpy dtype; raises UnknownNameError for others (e.g. float64)."""
    np_dtype = np.dtype(np_dtype)
    for d in DTYPES.values():
        if d.numpy == np_dtype:
            return d
    raise UnknownNameError("dtype", str(np_dtype), DTYPES)
