"""The dtypes oprt knows: names, numpy types (bfloat16 through ml_dtypes) and oprt.h codes.

``DTYPES`` are the value dtypes (f32, f16, bf16): an op's ``dtypes``, the ``--dtypes`` of a sweep, a report's
dtype column. ``INDEX_DTYPES`` (i32, i64) are those of index inputs (cross_entropy's target), which an op
declares input by input (``OpSpec.index_inputs``); ``get_dtype(..., index=True)`` and ``dtype_of(..., index=True)``
know them too. ``OPT_IN_DTYPES`` (e4m3: fp8 E4M3, ``ml_dtypes.float8_e4m3fn``) are value dtypes an op takes only
where it lists them in its ``dtypes`` (matmul's a and b, with a bf16 output): never a default, asked for by name
(``--dtypes e4m3``); ``get_dtype`` and ``dtype_of`` know them.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .errors import UnknownNameError

__all__ = ["DType", "DTYPES", "OPT_IN_DTYPES", "INDEX_DTYPES", "get_dtype", "dtype_of"]


@dataclass(frozen=True)
class DType:
    name: str  # short name used on the CLI and in reports: f32, f16, bf16, e4m3
    numpy: np.dtype
    code: int  # oprt_dtype_t
    itemsize: int
    eps: float  # machine epsilon (spacing of 1.0); 0 for an integer dtype

    @property
    def is_index(self) -> bool:
        """An integer dtype (i32, i64): index inputs only."""
        return self.numpy.kind == "i"

    @property
    def opt_in(self) -> bool:
        """A value dtype an op takes only where it lists it (``OPT_IN_DTYPES``: e4m3)."""
        return self.name in OPT_IN_DTYPES

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

#: Value dtypes an op takes only where its ``dtypes`` list them (oprt.h's OPRT_DTYPE_F8E4M3): never a default of a
#: sweep or an op. e4m3: 1 sign, 4 exponent (bias 7) and 3 mantissa bits, finite only (no inf; NaN is 0x7f and
#: 0xff), largest 448, eps 2^-3.
OPT_IN_DTYPES: dict[str, DType] = {d.name: d for d in (_make("e4m3", ml_dtypes.float8_e4m3fn, 5),)}

#: The dtypes of index inputs (oprt.h's OPRT_DTYPE_I32, OPRT_DTYPE_I64).
INDEX_DTYPES: dict[str, DType] = {d.name: d for d in (_make("i32", np.int32, 3), _make("i64", np.int64, 4))}

_ALIASES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "half": "f16", "float": "f32",
            "int32": "i32", "int64": "i64", "float8_e4m3fn": "e4m3", "fp8": "e4m3"}


def get_dtype(name: str | DType | np.dtype | type, *, index: bool = False) -> DType:
    """Look a dtype up by short name, long name or numpy dtype (the opt-in value dtypes too: e4m3, alias
    float8_e4m3fn or fp8); raises UnknownNameError. ``index``: the index dtypes (i32, i64) are known too (arrays,
    not values: a sweep's dtypes are the value dtypes)."""
    if isinstance(name, DType):
        return name
    known = _known(index)
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
    """The oprt dtype of a numpy dtype (float32, float16, bfloat16, float8_e4m3fn); raises UnknownNameError for
    others (e.g. float64); ``index``: int32 and int64 too."""
    np_dtype = np.dtype(np_dtype)
    known = _known(index)
    for d in known.values():
        if d.numpy == np_dtype:
            return d
    raise UnknownNameError("dtype", str(np_dtype), known)


def _known(index: bool) -> dict[str, DType]:
    return {**DTYPES, **OPT_IN_DTYPES, **INDEX_DTYPES} if index else {**DTYPES, **OPT_IN_DTYPES}
