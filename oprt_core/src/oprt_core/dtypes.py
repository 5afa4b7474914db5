"""The dtypes oprt knows: names, numpy types (bfloat16 and float8_e4m3fn through ml_dtypes) and oprt.h codes.

``DTYPES`` are the value dtypes (f32, f16, bf16): an op's ``dtypes``, the ``--dtypes`` of a sweep, a report's
dtype column. ``INDEX_DTYPES`` (i32, i64) are those of index inputs (class ids, positions), which an op
declares input by input (``OpSpec.index_inputs``); ``get_dtype(..., index=True)`` and ``dtype_of(..., index=True)``
know them too. ``OPT_IN_DTYPES`` (e4m3: fp8 E4M3, ``ml_dtypes.float8_e4m3fn``) are value dtypes an op takes only
where it lists them in its ``dtypes`` (matmul's a and b, with a bf16 output): never a default, asked for by name
(``--dtypes e4m3``); ``get_dtype`` and ``dtype_of`` know them.

ml_dtypes is imported when a bf16 or e4m3 numpy dtype is first needed (``DType.numpy``, ``DType.finfo``), not
with this module: ml_dtypes 0.7.0 takes about 0.6 s to import (0.6.0 about 0.07 s), which every command of
``oprt-bench`` and every ``import oprt_core`` would otherwise pay.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from .errors import UnknownNameError

__all__ = ["DType", "DTYPES", "OPT_IN_DTYPES", "INDEX_DTYPES", "get_dtype", "dtype_of"]


@dataclass(frozen=True)
class DType:
    name: str  # short name used on the CLI and in reports: f32, f16, bf16, e4m3
    type_name: str  # the numpy dtype's name: float32, bfloat16 (an ml_dtypes type), float8_e4m3fn, int64
    code: int  # oprt_dtype_t
    itemsize: int
    eps: float  # machine epsilon (spacing of 1.0); 0 for an integer dtype
    smallest_subnormal: float  # the smallest positive value; 0 for an integer dtype
    _np_type: Any = field(repr=False, compare=False)  # a numpy scalar type, or None: ml_dtypes' ``type_name``

    @cached_property
    def numpy(self) -> np.dtype:
        """The numpy dtype (bf16 and e4m3: ml_dtypes' types, imported here on first use)."""
        if self._np_type is not None:
            return np.dtype(self._np_type)
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, self.type_name))

    @cached_property
    def finfo(self) -> Any:
        """The float dtype's finfo (max, tiny, smallest_subnormal, ...): numpy's where numpy knows the type,
        ml_dtypes' for bf16 and e4m3."""
        if self._np_type is not None:
            return np.finfo(self.numpy)
        import ml_dtypes

        return ml_dtypes.finfo(self.numpy)

    def __reduce__(self) -> tuple:
        # pickled (to a worker) by name: the receiving process's own object, not this one's cached numpy dtype and
        # finfo (an ml_dtypes finfo cannot be unpickled)
        return _by_name, (self.name,)

    @property
    def is_index(self) -> bool:
        """An integer dtype (i32, i64): index inputs only."""
        return self.type_name.startswith("int")

    @property
    def opt_in(self) -> bool:
        """A value dtype an op takes only where it lists it (``OPT_IN_DTYPES``: e4m3)."""
        return self.name in OPT_IN_DTYPES

    def __str__(self) -> str:
        return self.name


def _make(name: str, np_type: Any, code: int) -> DType:
    dt = np.dtype(np_type)
    fi = np.finfo(dt) if dt.kind == "f" else None
    return DType(name, dt.name, code, dt.itemsize, float(fi.eps) if fi else 0.0,
                 float(fi.smallest_subnormal) if fi else 0.0, np_type)


def _make_ml(name: str, type_name: str, code: int, itemsize: int, eps: float, smallest_subnormal: float) -> DType:
    """A dtype of ml_dtypes' (its numpy type made on first use); ``itemsize``, ``eps`` and ``smallest_subnormal``
    are the format's (a test checks them against ml_dtypes)."""
    return DType(name, type_name, code, itemsize, eps, smallest_subnormal, None)


DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        _make("f32", np.float32, 0),
        _make("f16", np.float16, 1),
        _make_ml("bf16", "bfloat16", 2, 2, 2.0**-7, 2.0**-133),  # 8 significant bits, float32's exponent
    )
}

#: Value dtypes an op takes only where its ``dtypes`` list them (oprt.h's OPRT_DTYPE_F8E4M3): never a default of a
#: sweep or an op. e4m3: 1 sign, 4 exponent (bias 7) and 3 mantissa bits, finite only (no inf; NaN is 0x7f and
#: 0xff), largest 448, eps 2^-3.
OPT_IN_DTYPES: dict[str, DType] = {d.name: d for d in (_make_ml("e4m3", "float8_e4m3fn", 5, 1, 2.0**-3, 2.0**-9),)}

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
    d = _by_numpy.get(np_dtype)
    if d is None:
        t = np_dtype.type
        for c in (*DTYPES.values(), *OPT_IN_DTYPES.values(), *INDEX_DTYPES.values()):
            # by the scalar type first (numpy's dtype.name costs microseconds): ml_dtypes is imported only to
            # confirm one of its types
            if (t is c._np_type if c._np_type is not None else t.__name__ == c.type_name) and c.numpy == np_dtype:
                d = c
                if len(_by_numpy) < 64:  # bounded: equal dtypes that hash apart (metadata) are few
                    _by_numpy[np_dtype] = c
                break
    if d is None or (d.is_index and not index):
        raise UnknownNameError("dtype", str(np_dtype), _known(index))
    return d


_by_numpy: dict[np.dtype, DType] = {}  # dtype_of's answers: numpy dtypes equal to one of oprt's (a few)


def _by_name(name: str) -> DType:
    return _known(True)[name]


def _known(index: bool) -> dict[str, DType]:
    return {**DTYPES, **OPT_IN_DTYPES, **INDEX_DTYPES} if index else {**DTYPES, **OPT_IN_DTYPES}
