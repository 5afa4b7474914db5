"""oprt's dtypes: the format constants it states for ml_dtypes' types, and ml_dtypes imported only when one of
those types is used (its 0.7.0 release takes ~0.6 s to import)."""

from __future__ import annotations

import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import oprt_core
from oprt_core import operators
from oprt_core.dlpack import dl_dtype
from oprt_core.dtypes import DTYPES, INDEX_DTYPES, OPT_IN_DTYPES, dtype_of, get_dtype
from oprt_core.errors import UnknownNameError
from oprt_core.spec import OpSpec

ALL = {**DTYPES, **OPT_IN_DTYPES, **INDEX_DTYPES}


@pytest.mark.parametrize("name", sorted(ALL))
def test_stated_constants_are_the_formats(name):
    d = ALL[name]
    assert d.numpy.name == d.type_name and d.numpy.itemsize == d.itemsize
    if d.is_index:
        assert d.numpy.kind == "i" and d.eps == 0.0 and d.smallest_subnormal == 0.0
        return
    fi = ml_dtypes.finfo(d.numpy)
    assert (d.eps, d.smallest_subnormal) == (float(fi.eps), float(fi.smallest_subnormal))
    assert d.finfo.max == fi.max
    assert dtype_of(d.numpy, index=True) is d and get_dtype(d.type_name, index=True) is d


def test_ml_dtypes_types_are_ml_dtypes_own():
    assert DTYPES["bf16"].numpy == np.dtype(ml_dtypes.bfloat16)
    assert OPT_IN_DTYPES["e4m3"].numpy == np.dtype(ml_dtypes.float8_e4m3fn)


CHECK = """
import sys
import numpy as np
import oprt_core.ops as ops
{extra}
from oprt_core.plugins import get_registry
get_registry().backends
from oprt_core.dtypes import dtype_of
assert dtype_of(np.float16).name == "f16"
ops.softmax(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
print("ml_dtypes" in sys.modules)
"""


@pytest.mark.parametrize("extra, imported", [("", False), ("import oprt_bench.cli", False),
                                            ("from oprt_core.dtypes import DTYPES; DTYPES['bf16'].numpy", True)])
def test_ml_dtypes_is_imported_only_for_its_types(extra, imported):
    """Importing oprt_core (and oprt-bench's CLI), loading the plugins and running an f32 op leave ml_dtypes
    unimported; asking for bf16's numpy dtype imports it."""
    if extra.startswith("import oprt_bench"):
        pytest.importorskip("oprt_bench.cli")  # not installed in the core env (the repo's folder is no package)
    out = subprocess.run([sys.executable, "-c", CHECK.format(extra=extra)], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == [str(imported)]


@pytest.mark.parametrize("name", sorted(ALL))
def test_a_dtype_pickles_as_itself_after_its_numpy_and_finfo_are_used(name):
    """A DType travels to a worker by name (its cached ml_dtypes finfo cannot be unpickled) and is the receiving
    process's own object."""
    import copy
    import pickle

    d = ALL[name]
    assert d.numpy.itemsize == d.itemsize  # cached now
    if not d.is_index:
        assert d.finfo.eps == d.eps  # cached now
    assert pickle.loads(pickle.dumps(d)) is d and copy.deepcopy(d) is d


@pytest.mark.parametrize("dt", [np.float64, np.dtype(">f4"), np.int16, np.dtype("V2"), ml_dtypes.float8_e5m2])
def test_dtype_of_refuses_others(dt):
    from oprt_core.errors import UnknownNameError

    with pytest.raises(UnknownNameError):
        dtype_of(dt, index=True)


def test_dtype_of_index_dtypes_only_when_asked():
    from oprt_core.errors import UnknownNameError

    assert dtype_of(np.int64, index=True).name == "i64"
    with pytest.raises(UnknownNameError, match="unknown dtype 'int64'"):
        dtype_of(np.int64)


def test_index_dtypes_known_only_where_asked():
    assert get_dtype("int64", index=True) is INDEX_DTYPES["i64"] and get_dtype(np.int32, index=True).name == "i32"
    with pytest.raises(UnknownNameError, match="valid choices: bf16, e4m3, f16, f32$"):
        get_dtype("i64")  # a sweep's dtypes are the value dtypes
    assert dl_dtype(INDEX_DTYPES["i64"]) == (0, 64, 1) and dl_dtype(INDEX_DTYPES["i32"]) == (0, 32, 1)


def test_e4m3_is_an_opt_in_dtype_known_by_name_alias_and_numpy_type():
    dt = get_dtype("e4m3")
    assert dt is get_dtype("fp8") is get_dtype("float8_e4m3fn") is get_dtype("E4M3")
    assert dt is dtype_of(np.dtype(ml_dtypes.float8_e4m3fn))
    assert (dt.code, dt.itemsize, dt.eps, dt.opt_in) == (5, 1, 0.125, True)
    assert list(oprt_core.OPT_IN_DTYPES) == ["e4m3"]
    # the default value dtypes stay f32, f16, bf16: an op's default dtypes and a sweep's "all"
    assert list(DTYPES) == ["f32", "f16", "bf16"] and not any(d.opt_in for d in DTYPES.values())
    assert OpSpec.__dataclass_fields__["dtypes"].default == ("f32", "f16", "bf16")
    takers = [spec.name for spec in operators.specs() if "e4m3" in spec.dtypes]
    assert takers and len(takers) < len(operators.names())  # opted in by some ops, not a default of every op
    assert get_dtype("i32", index=True) is INDEX_DTYPES["i32"]
    with pytest.raises(UnknownNameError, match="e4m3"):  # the error lists it among the known ones
        get_dtype("e5m2")


def test_oprt_h_code_is_the_registry_code():
    from oprt_core.cabi import header_text

    assert "OPRT_DTYPE_F8E4M3 = 5" in header_text()
