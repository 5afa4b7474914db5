"""The dtypes oprt knows: names, numpy types (bfloat16 through ml_dtypes) and oprt.h codes.

``DTYPES`` are the value dtypes (f32, f16, bf16): an op's ``dtypes``, the ``--dtypes`` of a sweep, a report's
dtype column. ``INDEX_DTYPES`` (i32, i64) are those of index inputs (cross_entropy's target), which an op
declares input by input (``OpSpec.index_inputs``); ``get_dtype(..., index=True)`` and ``dtype_of(..., index=True)``
know them too.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .errors import UnknownNameError

__all__ = ["DType", "DTYPES", "INDEX_DTYPES", "get_dtype", "dtype_of"]


@dataclass(frozen=True)
class DType:
    name: str  # short name used on the CLI and in reports: f32, f16, bf16
    numpy: np.dtype
    code: int  # oprt_dtype_t
    itemsize: int
    eps: float  # machine epsilon (spacing of 1.0); 0 for an integer dtype

    @property
    def is_index(self) -> bool:
        """An integer dtype (i32, i64): index inputs only."""
        return self.numpy.kind == "i"

    def __str__(self) -> str:
        return self.name


def _make(name: str, np_dtype, code: int) -> DType:
    dt = np.dtype(np_dtype)
    return DType(name, dt, code, dt.itemsize, 0.0 if dt.kind == "i" else float(ml_dtypes.finfo(dt).eps))


DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        _make("f32", np.float32, 0),
        _make("f16", np.float16, 1),
        _make("bf16", ml_dtypes.bfloat16, 2),
    )
}

#: The dtypes of index inputs (oprt.h's OPRT_DTYPE_I32, OPRT_DTYPE_I64).
INDEX_DTYPES: dict[str, DType] = {d.name: d for d in (_make("i32", np.int32, 3), _make("i64", np.int64, 4))}

_ALIASES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "half": "f16", "float": "f32",
            "int32": "i32", "int64": "i64"}


def get_dtype(name: str | DType | np.dtype | type, *, index: bool = False) -> DType:
    """Look a dtype up by short name, long name or numpy dtype; raises UnknownNameError. ``index``: the index
    dtypes (i32, i64) are known too (arrays, not values: a sweep's dtypes are the value dtypes)."""
    if isinstance(name, DType):
        return name
    known = {**DTYPES, **INDEX_DTYPES} if index else DTYPES
    if isinstance(name, str):
        key = _ALIASES.get(name.lower(), name.lower())
        if key in known:
            return known[key]
        raise UnknownNameError("dtype", name, known)
    try:
        np_dt = np.dtype(name)
    except TypeError:
        raise UnknownNameError("dtype", name, known) from None
    return dtype_of(np_dt, index=index)


def dtype_of(np_dtype: np.dtype, *, index: bool = False) -> DType:
    """The oprt dtype of a numpy dtype; raises UnknownNameError for others (e.g. float64); ``index``: int32 and
    int64 too."""
    np_dtype = np.dtype(np_dtype)
    known = {**DTYPES, **INDEX_DTYPES} if index else DTYPES
    for d in known.values():
        if d.numpy == np_dtype:
            return d
    raise UnknownNameError("dtype", str(np_dtype), known)
