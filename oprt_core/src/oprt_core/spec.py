"""Operator specifications: what an op computes, how it is checked and how it is benchmarked.

An :class:`OpSpec` holds the op's params (validated), its float64 numpy reference,
bytes moved and flops as functions of a :class:`Case`, a per-dtype error budget,
and named case sets (``smoke``, ``default``, ``large``, ``edge``; optionally ``models``, shapes of published
models from :mod:`oprt_core.model_shapes`). Specs are
registered through the ``oprt_register_ops`` hook; the built-in ops live in
:mod:`oprt_core.operators`, one folder each.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .device_array import contiguous_strides
from .dtypes import DTYPES, INDEX_DTYPES, DType, get_dtype
from .errors import DeviceOutOfMemoryError, InvalidArgumentError, OprtError, UnknownNameError

__all__ = [
    "Param",
    "Layout",
    "TensorCase",
    "Case",
    "Budget",
    "CheckResult",
    "Output",
    "OpSpec",
    "as_outputs",
    "CASE_SETS",
    "REQUIRED_CASE_SETS",
    "parse_shape",
    "format_shape",
]

CASE_SETS = ("smoke", "default", "large", "edge", "models")
#: The case sets every op declares; ``models`` is optional: an op without it has no rows in a ``models`` sweep.
REQUIRED_CASE_SETS = ("smoke", "default", "large", "edge")

# How an input tensor is laid out in memory; the op always sees the logical shape.
#  contiguous  row-major
#  transposed  last two dims swapped (a .T-style view of a row-major buffer)
#  step2       every other element of the last dim (base twice as wide, sliced ::2)
#  offset1     starts one element into its buffer (misaligned for vector loads)
#  reversed    negative stride on the last dim
#  broadcast0  stride 0 on dim 0 (np.broadcast_to of a single row)
LAYOUTS = ("contiguous", "transposed", "step2", "offset1", "reversed", "broadcast0")
Layout = str


def format_shape(shape: Sequence[int]) -> str:
    """``(4096, 4096)`` -> ``"4096x4096"``; a 0-d shape is ``"scalar"``."""
    return "x".join(str(int(s)) for s in shape) if len(shape) else "scalar"


_SHAPE_RE = re.compile(r"^\d+(x\d+)*$")


def parse_shape(text: str) -> tuple[int, ...]:
    """``"4096x4096"`` -> ``(4096, 4096)``; raises InvalidArgumentError with the expected form."""
    if not isinstance(text, str):
        raise InvalidArgumentError(f"malformed shape {text!r}: expected a string of extents joined by 'x', "
                                   "e.g. 4096x4096 or 1000")
    text = text.strip().lower()
    if text == "scalar":
        return ()
    if not _SHAPE_RE.match(text):
        raise InvalidArgumentError(
            f"malformed shape {text!r}: expected extents joined by 'x', e.g. 4096x4096 or 1000"
        )
    shape = tuple(int(p) for p in text.split("x"))
    if len(shape) > 8:
        raise InvalidArgumentError(f"shape {text!r} has {len(shape)} dims; at most 8 are supported")
    return shape


def check_shape(shape: Sequence[int]) -> tuple[int, ...]:
    """A shape as a tuple of non-negative ints (at most 8 dims); raises InvalidArgumentError otherwise."""
    try:
        dims = tuple(shape)
    except TypeError:
        raise InvalidArgumentError(f"malformed shape {shape!r}: expected a sequence of non-negative ints") from None
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise InvalidArgumentError(f"malformed shape {shape!r}: extents must be non-negative ints")
    if len(dims) > 8:
        raise InvalidArgumentError(f"shape {shape!r} has {len(dims)} dims; at most 8 are supported")
    return tuple(int(d) for d in dims)


# the C types a param may have in the C ABI (oprt.h), and how CompiledBackend marshals a Python value to each
C_PARAM_TYPES = ("float", "int32_t")
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1  # an int32_t param's range


@dataclass(frozen=True)
class Param:
    """One op parameter: its name, accepted Python types, default and meaning, and how the C ABI takes it.

    ``ctype`` is the C type of the param in the op's ``oprt_create_<op>_descriptor`` (one of
    ``C_PARAM_TYPES``: ``float``; ``int32_t`` for ints and bools, a bool as 0 or 1); ``c_none`` the C value
    passed for None where ``allow_none`` (reduce_sum's axis: ``OPRT_AXIS_ALL``). ``choices``: a str param taking
    one of these values (a reduction mode), passed to C as its index in ``choices`` (ctype ``int32_t``).
    An op whose every param has a ``ctype`` has a C ABI (:mod:`oprt_core.cdecl`)."""

    name: str
    types: tuple[type, ...]
    default: Any
    doc: str
    allow_none: bool = False
    ctype: str | None = None
    c_none: int | None = None
    choices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.choices and (self.types != (str,) or self.ctype not in (None, "int32_t")):
            raise InvalidArgumentError(f"param {self.name!r} has choices: its types must be (str,) and its ctype "
                                       "int32_t (the choice's index)")
        if self.ctype is not None and self.ctype not in C_PARAM_TYPES:
            raise InvalidArgumentError(f"param {self.name!r}: ctype {self.ctype!r} is not one of "
                                       f"{', '.join(C_PARAM_TYPES)}")
        if self.allow_none and self.ctype is not None and self.c_none is None:
            raise InvalidArgumentError(f"param {self.name!r} may be None: its C ABI needs c_none, the C value "
                                       "that stands for None")


@dataclass(frozen=True)
class TensorCase:
    """One input of a case: logical shape and memory layout; ``dtype``, for an index input only (one of its
    ``OpSpec.index_inputs`` dtypes), the integer dtype it has in this case (None: the first one declared)."""

    shape: tuple[int, ...]
    layout: Layout = "contiguous"
    dtype: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", check_shape(self.shape))
        if self.layout not in LAYOUTS:
            raise InvalidArgumentError(f"unknown layout {self.layout!r}; valid: {', '.join(LAYOUTS)}")
        if self.layout == "transposed" and len(self.shape) < 2:
            raise InvalidArgumentError("a transposed layout needs at least 2 dims")
        if self.dtype is not None and self.dtype not in INDEX_DTYPES:
            raise InvalidArgumentError(f"a case input's own dtype must be an index dtype "
                                       f"({', '.join(INDEX_DTYPES)}), got {self.dtype!r}")

    @property
    def strides(self) -> tuple[int, ...]:
        """Its strides in elements, as :func:`make_tensor` lays it out (the layout's view of its base buffer)."""
        shape = self.shape
        if not shape:
            return ()
        if self.layout == "transposed":
            base = contiguous_strides(shape[:-2] + (shape[-1], shape[-2]))
            return base[:-2] + (base[-1], base[-2])
        if self.layout == "step2":
            return contiguous_strides(shape[:-1] + (2 * shape[-1],))[:-1] + (2,)
        if self.layout == "reversed":
            return contiguous_strides(shape)[:-1] + (-1,)
        if self.layout == "broadcast0":
            return (0,) + contiguous_strides(shape)[1:]
        return contiguous_strides(shape)  # contiguous, offset1


@dataclass(frozen=True)
class Case:
    """One benchmark/correctness case of an op: inputs, params and data distribution.

    ``data`` picks the value distribution: ``uniform`` in [-1, 1), ``large`` for
    magnitudes where a naive exp overflows (per dtype, see OpSpec.make_inputs).
    """

    op: str
    name: str
    inputs: tuple[TensorCase, ...]
    params: tuple[tuple[str, Any], ...] = ()
    data: str = "uniform"

    @property
    def param_dict(self) -> dict[str, Any]:
        return dict(self.params)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.inputs[0].shape

    @property
    def shape_str(self) -> str:
        return ",".join(format_shape(t.shape) for t in self.inputs)

    @property
    def numel(self) -> int:
        return math.prod(self.inputs[0].shape)

    def __str__(self) -> str:
        return f"{self.op}/{self.name}"


@dataclass(frozen=True)
class Budget:
    """Allowed error: |out - ref| <= atol + rtol * |ref|, elementwise."""

    rtol: float
    atol: float


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    max_abs_err: float
    max_rel_err: float  # max |out - ref| / max |ref| (normwise): a reference near 0 does not inflate it
    message: str = ""


@dataclass(frozen=True)
class Output:
    """One output of an op: its name (the C argument's and the op function's), its shape and what it may alias.

    ``shape_fn(shapes, params)``: the output's shape from the inputs' (None: the op's ``output_shape_fn``, else the
    first input's shape). ``inplace``: the inputs this output may be exactly (the same memory, shape, strides and
    dtype): the op writes it in place over that input; any other overlap with an input, and any overlap of two
    outputs, is refused. ``tolerance_fn(dtype, inputs64, ref, params) -> (atol, rtol)``: this output's budget
    (None: the op's ``tolerance_fn``, else its ``budgets``)."""

    name: str
    shape_fn: Callable[..., tuple[int, ...]] | None = None
    inplace: tuple[str, ...] = ()
    tolerance_fn: Callable[..., tuple[Any, float]] | None = None
    doc: str = ""


def empty_output(backend: Any, op: str, name: str, shape: Sequence[int], dtype: str) -> Any:
    """``backend.empty(shape, dtype)`` for output ``name`` of ``op``; a plain MemoryError of the allocation (numpy's
    for a huge host array) becomes a :class:`~oprt_core.errors.DeviceOutOfMemoryError` naming the op, the output
    and the bytes asked for."""
    try:
        return backend.empty(shape, dtype)
    except MemoryError as exc:
        if isinstance(exc, OprtError):  # the backend's own, already worded
            raise
        shape = tuple(int(n) for n in shape)
        nbytes = math.prod(shape) * get_dtype(dtype, index=True).itemsize
        raise DeviceOutOfMemoryError(
            getattr(backend, "name", type(backend).__name__), None,
            f"{op}: cannot allocate {name} of shape {shape} {dtype}: {nbytes} bytes ({_size(nbytes)})") from None


def _size(nbytes: int) -> str:
    """``nbytes`` in the largest binary unit it fills: "4.0 TiB"."""
    size = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024:
            return f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} EiB"


def as_outputs(out: Any) -> tuple[Any, ...]:
    """An op's output(s) as a tuple: a multi-output op's tuple (or list) as is, a single output as a 1-tuple."""
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


@dataclass
class OpSpec:
    """Everything oprt knows about one operator, independent of any backend.

    An op has one output (``out``) unless it declares ``outputs``: then its reference returns one array per output,
    in order, each checked against its own budget (:class:`Output`), backends take and fill a tuple of outputs, the
    op function returns a tuple, and its C ABI takes one pointer per output (:mod:`oprt_core.cdecl`)."""

    name: str
    doc: str
    n_inputs: int
    input_names: tuple[str, ...]
    reference_fn: Callable[..., Any]  # one float64 array, or a tuple of one per output
    bytes_fn: Callable[[Case, DType], int]
    flops_fn: Callable[[Case], int]
    budgets: Mapping[str, Budget]
    case_sets: Mapping[str, Sequence[Case]]
    params: tuple[Param, ...] = ()
    dtypes: tuple[str, ...] = tuple(DTYPES)
    output_shape_fn: Callable[..., tuple[int, ...]] | None = None
    tolerance_fn: Callable[..., tuple[Any, float]] | None = None
    param_check_fn: Callable[[list[tuple[int, ...]], dict[str, Any]], None] | None = None
    custom_case_fn: Callable[[tuple[int, ...], dict[str, Any]], Case] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: The inputs ``out`` may be exactly (the same memory, shape, strides and dtype): the op runs in place on them.
    #: Any other overlap of ``out`` and an input is refused (:func:`oprt_core.validate.check_overlap`, and
    #: oprt_validate.h's ``oprt_check_alias`` for compiled backends). Default: none.
    inplace: tuple[str, ...] = ()
    # the op function oprt_core.ops.<name>: its docstring (summary and Args; ops adds the common paragraphs)
    api_doc: str = ""
    #: Inputs of integer dtype (indices: class ids, positions): name -> the index dtypes it
    #: accepts (of ``INDEX_DTYPES``; the first is what cases use unless a TensorCase names another). Every other
    #: input, and the output, has the op's value dtype (one of ``dtypes``): a report's dtype column.
    index_inputs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: ``index_fn(case, name, count, rng)``: ``count`` valid values (an int64 array) for index input ``name`` of
    #: ``case`` (e.g. class ids in [0, V)); required with ``index_inputs``.
    index_fn: Callable[[Case, str, int, np.random.Generator], np.ndarray] | None = None

    #: The op's outputs, in order (:class:`Output`); empty: one output named ``out``, whose shape is
    #: ``output_shape_fn``'s and which may alias the inputs named by ``inplace``.
    outputs: tuple[Output, ...] = ()
    #: Inputs a call may leave out: the last ``len(optional_inputs)`` of ``input_names``, in their order (matmul's
    #: ``c``). A call gives the required inputs and then a prefix of these (``n_inputs`` counts them all): its
    #: shapes and inputs lists are shorter by the ones left out, the reference is called without them (its
    #: parameters for them need defaults), the op function takes them as keywords defaulting to None, and the C
    #: ABI passes NULL for an absent one's tensor descriptor and pointer (oprt_validate.h's checks treat it as
    #: empty). The op's ``param_check_fn`` decides what their absence means for the params.
    optional_inputs: tuple[str, ...] = ()
    #: Mixed dtypes: a row dtype (the inputs') -> the dtype of the outputs, and of the inputs the outputs may be
    #: (``inplace``: matmul's c), where they differ (matmul: ``{"e4m3": "bf16"}``). A row's dtype (a report's dtype
    #: column) stays the inputs'; the outputs are made (:meth:`new_outputs`) and checked (the budget's rounding
    #: term) in the output dtype, and ``bytes_fn`` counts each array in its own. Every other mix is refused.
    output_dtypes: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.n_inputs != len(self.input_names):
            raise InvalidArgumentError(f"{self.name}: n_inputs is {self.n_inputs} but input_names names "
                                       f"{len(self.input_names)} ({', '.join(self.input_names)})")
        self.optional_inputs = tuple(self.optional_inputs)
        k = len(self.optional_inputs)
        if k and (k >= self.n_inputs or self.input_names[-k:] != self.optional_inputs):
            raise InvalidArgumentError(f"{self.name}: optional_inputs {', '.join(map(repr, self.optional_inputs))} "
                                       f"must be the last inputs, in order, after at least one required one "
                                       f"(inputs: {', '.join(self.input_names)})")
        for what, names in (("inplace", self.inplace), ("index_inputs", self.index_inputs)):
            unknown = [name for name in names if name not in self.input_names]
            if unknown:
                raise InvalidArgumentError(f"{self.name}: {what} names {', '.join(map(repr, unknown))}, which are not "
                                           f"inputs (inputs: {', '.join(self.input_names)})")
        for name, dts in self.index_inputs.items():
            if not dts or any(d not in INDEX_DTYPES for d in dts):
                raise InvalidArgumentError(f"{self.name}: index input {name!r} must declare dtypes of "
                                           f"{', '.join(INDEX_DTYPES)}, got {dts!r}")
        for row, odt in self.output_dtypes.items():
            if row not in self.dtypes or get_dtype(odt).name != odt:
                raise InvalidArgumentError(f"{self.name}: output_dtypes maps {row!r} to {odt!r}: the key must be one "
                                           f"of the op's dtypes ({', '.join(self.dtypes)}), the value a dtype name")
        if self.index_inputs and self.index_fn is None:
            raise InvalidArgumentError(f"{self.name}: index inputs need an index_fn to make their values")
        if not self.outputs:
            self.outputs = (Output("out", inplace=tuple(self.inplace)),)
        elif self.inplace and (len(self.outputs) > 1 or set(self.outputs[0].inplace) != set(self.inplace)):
            # (a copy of a spec, dataclasses.replace, carries both, in agreement)
            raise InvalidArgumentError(f"{self.name}: declare in-place inputs per output (Output.inplace), not with "
                                       "inplace, when the op declares its outputs")
        out_names = [o.name for o in self.outputs]
        if len(set(out_names)) != len(out_names) or set(out_names) & set(self.input_names):
            raise InvalidArgumentError(f"{self.name}: output names {', '.join(out_names)} must differ from each other "
                                       f"and from the inputs ({', '.join(self.input_names)})")
        for o in self.outputs:
            bad = [name for name in o.inplace if name not in self.input_names]
            if bad:
                raise InvalidArgumentError(f"{self.name}: output {o.name!r} may alias {', '.join(map(repr, bad))}, "
                                           f"which are not inputs (inputs: {', '.join(self.input_names)})")

    def input_dtypes(self, name: str) -> tuple[str, ...]:
        """The dtypes input ``name`` accepts: its index dtypes, or the op's value dtypes; an output's (``out``), and
        an input's that an output may be (matmul's c), are those in :meth:`output_dtype` (bf16 where e4m3 maps to
        it)."""
        if name in self.index_inputs:
            return tuple(self.index_inputs[name])
        if name in self.output_names or any(name in o.inplace for o in self.outputs):
            return tuple(dict.fromkeys(self.output_dtype(d).name for d in self.dtypes))
        return tuple(self.dtypes)

    def output_dtype(self, dtype: str | DType) -> DType:
        """The dtype of the outputs (and of the inputs they may be) in a row of ``dtype``: ``output_dtypes``'
        where it maps ``dtype``, else ``dtype`` itself."""
        dt = get_dtype(dtype)
        return get_dtype(self.output_dtypes[dt.name]) if dt.name in self.output_dtypes else dt

    def value_dtype(self, i: int, dtype: str | DType) -> DType:
        """The dtype of value input ``i`` in a row of ``dtype``: the output dtype for an input an output may be
        (``inplace``), else ``dtype``."""
        name = self.input_names[i] if i < len(self.input_names) else ""
        inplace = {n for o in self.outputs for n in o.inplace}
        return self.output_dtype(dtype) if name in inplace else get_dtype(dtype)

    def is_index(self, i: int) -> bool:
        """Whether input ``i`` is an index input."""
        return i < len(self.input_names) and self.input_names[i] in self.index_inputs

    def inputs64(self, inputs: Sequence[Any]) -> list[np.ndarray]:
        """The inputs as the reference takes them: value inputs in float64, index inputs in int64 (a copy: small,
        and the caller may mark it read-only without touching the input)."""
        return [np.array(x, np.int64) if self.is_index(i) else to_float64(x) for i, x in enumerate(inputs)]

    @property
    def min_inputs(self) -> int:
        """How many inputs a call must give: all but the optional ones."""
        return self.n_inputs - len(self.optional_inputs)

    def inputs_wording(self) -> str:
        """The inputs a call takes, in words: ``"2 input(s) (a, b)"``, ``"2 or 3 inputs (a, b, optionally c)"``."""
        req = ", ".join(self.input_names[:self.min_inputs])
        if not self.optional_inputs:
            return f"{self.n_inputs} input(s) ({req})"
        counts = " or ".join(str(n) for n in range(self.min_inputs, self.n_inputs + 1))
        return f"{counts} inputs ({req}, optionally {', '.join(self.optional_inputs)})"

    def check_input_count(self, n: int) -> None:
        """InvalidArgumentError unless a call of ``n`` inputs fits: the required ones, then some optional ones."""
        if not self.min_inputs <= n <= self.n_inputs:
            raise InvalidArgumentError(f"{self.name} takes {self.inputs_wording()}, got {n}")

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.outputs)

    @property
    def n_outputs(self) -> int:
        return len(self.outputs)

    @property
    def multi_output(self) -> bool:
        """Whether the op has several outputs: its backends, reference and op function then deal in tuples."""
        return len(self.outputs) > 1

    @property
    def has_c_abi(self) -> bool:
        """Whether the op has a C ABI: every param declares its C type (``Param.ctype``)."""
        return all(p.ctype is not None for p in self.params)

    # -- params -----------------------------------------------------------------
    def validate_params(self, params: Mapping[str, Any] | None = None, shapes: Sequence[Sequence[int]] | None = None
                        ) -> dict[str, Any]:
        """Fill defaults and check every param's name, type and (given shapes) value."""
        if params is not None and not isinstance(params, Mapping):
            raise InvalidArgumentError(f"{self.name}: params must be a mapping of name to value, "
                                       f"got {type(params).__name__}")
        params = dict(params or {})
        known = {p.name: p for p in self.params}
        for key in params:
            if key not in known:
                raise UnknownNameError(f"param of {self.name}", key, known)
        out: dict[str, Any] = {}
        for p in self.params:
            value = params.get(p.name, p.default)
            if value is None and p.allow_none:
                out[p.name] = None
                continue
            if isinstance(value, bool) and bool not in p.types:
                raise InvalidArgumentError(f"{self.name}: param {p.name!r} must be {_type_names(p)}, got bool")
            if isinstance(value, np.generic):
                value = value.item()
            if not isinstance(value, p.types):
                raise InvalidArgumentError(
                    f"{self.name}: param {p.name!r} must be {_type_names(p)}, got {type(value).__name__} {value!r}"
                )
            if p.choices and value not in p.choices:
                raise InvalidArgumentError(f"{self.name}: param {p.name!r} must be one of "
                                           f"{', '.join(map(repr, p.choices))}, got {value!r}")
            if float in p.types and isinstance(value, (int, float)) and not math.isfinite(value):
                raise InvalidArgumentError(f"{self.name}: param {p.name!r} must be finite, got {value!r}")
            if p.ctype == "int32_t" and isinstance(value, int) and not INT32_MIN <= value <= INT32_MAX:
                # the C ABI takes it as an int32_t: every backend refuses what C could not take (a bool fits)
                raise InvalidArgumentError(f"{self.name}: param {p.name!r} does not fit a C int32: got {value}, "
                                           f"valid {INT32_MIN}..{INT32_MAX}")
            out[p.name] = value
        if shapes is not None and self.param_check_fn is not None:
            self.param_check_fn([tuple(s) for s in shapes], out)
        return out

    # -- shapes and reference -------------------------------------------------------
    def output_shape(self, shapes: Sequence[Sequence[int]], params: Mapping[str, Any]) -> Any:
        """The output's shape; for a multi-output op the tuple of every output's shape (:meth:`output_shapes`)."""
        shapes_ = self.output_shapes(shapes, params)
        return shapes_ if self.multi_output else shapes_[0]

    def output_shapes(self, shapes: Sequence[Sequence[int]], params: Mapping[str, Any]) -> tuple[tuple[int, ...], ...]:
        """Every output's shape, in order (one for a single-output op)."""
        dims = [tuple(s) for s in shapes]
        self.check_input_count(len(dims))
        params = self.validate_params(params, dims)
        result = []
        for o in self.outputs:
            fn = o.shape_fn or self.output_shape_fn
            result.append(tuple(fn(dims, params)) if fn is not None else dims[0])
        return tuple(result)

    def new_outputs(self, backend: Any, shapes: Sequence[Sequence[int]], params: Mapping[str, Any],
                    dtype: str) -> Any:
        """Uninitialised outputs from ``backend.empty``: one array, or a tuple of them for a multi-output op; in
        the output dtype of a row of ``dtype`` (:meth:`output_dtype`)."""
        odt = self.output_dtype(dtype).name
        arrays = tuple(empty_output(backend, self.name, name, s, odt)
                       for name, s in zip(self.output_names, self.output_shapes(shapes, params)))
        return arrays if self.multi_output else arrays[0]

    def reference(self, inputs: Sequence[np.ndarray], params: Mapping[str, Any] | None = None) -> Any:
        """The float64 reference result of the op on ``inputs`` (cast to float64 first); for a multi-output op a
        tuple of one array per output."""
        params = self.validate_params(params, [np.shape(x) for x in inputs])
        return self._reference64(self.inputs64(inputs), params)

    def _reference64(self, inputs64: Sequence[np.ndarray], params: Mapping[str, Any]) -> Any:
        result = self.reference_fn(*inputs64, **params)
        if not self.multi_output:
            return np.asarray(result, dtype=np.float64)
        refs = tuple(np.asarray(r, dtype=np.float64) for r in as_outputs(result))
        if len(refs) != self.n_outputs:
            raise InvalidArgumentError(f"{self.name}: the reference returned {len(refs)} array(s) for "
                                       f"{self.n_outputs} outputs ({', '.join(self.output_names)})")
        return refs

    # -- cost model ---------------------------------------------------------------------
    def bytes_moved(self, case: Case, dtype: str | DType) -> int:
        """Bytes an ideal kernel moves: each input read once, each output written once."""
        return int(self.bytes_fn(case, get_dtype(dtype)))

    def flops(self, case: Case) -> int:
        return int(self.flops_fn(case))

    # -- cases --------------------------------------------------------------------------
    def cases(self, case_set: str) -> list[Case]:
        if case_set not in self.case_sets:
            raise UnknownNameError(f"case set of {self.name}", case_set, self.case_sets)
        return list(self.case_sets[case_set])

    def custom_case(self, shape: Sequence[int], params: Mapping[str, Any] | None = None) -> Case:
        """A contiguous case of the given shape (the CLI's ``--shape``)."""
        shape = check_shape(shape)
        params = self.validate_params(params, [shape] * self.n_inputs)
        if self.custom_case_fn is not None:
            return self.custom_case_fn(shape, params)
        return Case(self.name, format_shape(shape), tuple(TensorCase(shape) for _ in range(self.n_inputs)),
                    tuple(sorted(params.items())))

    def make_inputs(self, case: Case, dtype: str | DType, rng: np.random.Generator) -> list[np.ndarray]:
        """Fresh random inputs in ``dtype`` with the case's layouts (never zeros); index inputs in their own
        dtype, with the values ``index_fn`` gives; an input an output may be in the output dtype
        (:meth:`value_dtype`)."""
        dt = get_dtype(dtype)
        out = []
        for i, t in enumerate(case.inputs):
            if self.is_index(i):
                name = self.input_names[i]
                idt = INDEX_DTYPES[t.dtype or self.index_inputs[name][0]]
                out.append(make_tensor(t, idt, rng, values=self._index_values(case, name, rng)))
            else:
                out.append(make_tensor(t, self.value_dtype(i, dt), rng, case.data))
        return out

    def _index_values(self, case: Case, name: str, rng: np.random.Generator) -> Callable[[int], np.ndarray]:
        fn = self.index_fn
        assert fn is not None  # __post_init__: index inputs have one
        return lambda count: fn(case, name, count, rng)

    # -- checking ---------------------------------------------------------------------
    def tolerance(self, dtype: str | DType, inputs64: Sequence[np.ndarray], ref: np.ndarray,
                  params: Mapping[str, Any], output: int = 0) -> tuple[Any, float]:
        """(atol, rtol) of output number ``output`` (its own ``Output.tolerance_fn``, else the op's) in a row of
        ``dtype`` (the inputs'; a tolerance_fn of an op with ``output_dtypes`` rounds to :meth:`output_dtype`)."""
        dt = get_dtype(dtype)
        fn = self.outputs[output].tolerance_fn or self.tolerance_fn
        if fn is not None:
            return fn(dt, inputs64, ref, params)
        b = self.budgets[dt.name]
        return b.atol, b.rtol

    def check(self, out: Any, inputs: Sequence[np.ndarray], dtype: str | DType,
              params: Mapping[str, Any] | None = None, ref: Any = None,
              inputs64: Sequence[np.ndarray] | None = None) -> CheckResult:
        """Compare a backend's output (host array) with the float64 reference within budget. A NaN output
        matches a NaN reference (so a test of NaN inputs must poison its output with something else).
        ``inputs64``: the inputs already in float64 (a caller checking several outputs converts them once).

        A multi-output op's ``out`` and ``ref`` are tuples: each output is checked against its own budget; the
        result holds the largest errors of all, and the message of the first output outside its budget, named."""
        dt = get_dtype(dtype)
        params = self.validate_params(params, [np.shape(x) for x in inputs])
        if inputs64 is None:
            inputs64 = self.inputs64(inputs)
        if ref is None:
            ref = self._reference64(inputs64, params)
        if not self.multi_output:
            return self._check_one(out, ref, dt, inputs64, params, 0)
        outs, refs = as_outputs(out), as_outputs(ref)
        if len(outs) != self.n_outputs:
            return CheckResult(False, math.inf, math.inf, f"{len(outs)} output(s) given for the {self.n_outputs} of "
                                                          f"{self.name} ({', '.join(self.output_names)})")
        results = [self._check_one(o, r, dt, inputs64, params, k) for k, (o, r) in enumerate(zip(outs, refs))]
        bad = [(o.name, r) for o, r in zip(self.outputs, results) if not r.ok]
        return CheckResult(not bad, max(r.max_abs_err for r in results), max(r.max_rel_err for r in results),
                           f"{bad[0][0]}: {bad[0][1].message}" if bad else "")

    def _check_one(self, out: Any, ref: np.ndarray, dt: DType, inputs64: Sequence[np.ndarray],
                   params: Mapping[str, Any], output: int) -> CheckResult:
        out64 = to_float64(out)
        # one layout for both (a reference of a transposed view is transposed too): mixed-order elementwise
        # passes below would otherwise walk one operand across the cache, several times slower
        ref, out64 = np.ascontiguousarray(ref), np.ascontiguousarray(out64)
        if out64.shape != ref.shape:
            return CheckResult(False, math.inf, math.inf,
                               f"output shape {out64.shape} differs from reference shape {ref.shape}")
        if ref.size == 0:
            return CheckResult(True, 0.0, 0.0)
        atol, rtol = self.tolerance(dt, inputs64, ref, params, output)
        atol = np.asarray(atol, dtype=np.float64)
        if atol.ndim:  # per output element (reduce_sum)
            atol = np.ascontiguousarray(np.broadcast_to(atol, ref.shape)).reshape(-1)
        flat_ref, flat_out = ref.reshape(-1), out64.reshape(-1)
        # compared in cache-sized chunks (~15 elementwise passes over whole float64 arrays cost seconds and
        # several times the output's memory), spans of chunks on threads for large outputs (numpy releases the GIL)
        spans = _spans(flat_ref.size)
        if len(spans) == 1:
            parts = [_compare(flat_ref, flat_out, atol, rtol, *spans[0])]
        else:
            with ThreadPoolExecutor(len(spans), thread_name_prefix="oprt-check") as pool:
                parts = list(pool.map(lambda span: _compare(flat_ref, flat_out, atol, rtol, *span), spans))
        abs_max = [p.abs_max for p in parts]
        nbad, worst, worst_at = 0, -np.inf, -1
        for part in parts:  # in index order, ranked as within a span: the first of equal excesses, NaN first
            nbad += part.nbad
            if part.nbad and (worst_at < 0 or not part.worst <= worst):
                worst, worst_at = part.worst, part.worst_at
        max_abs = float(np.max(abs_max))
        # normwise: relative to the reference's magnitude scale, so an element whose reference is near 0 (a
        # cancellation, a small dot product) does not inflate it; 0 where the reference is all 0
        scale = max(p.ref_max for p in parts)
        max_rel = max_abs / scale if scale > 0 else 0.0
        if nbad == 0:
            return CheckResult(True, max_abs, max_rel)
        idx = np.unravel_index(worst_at, ref.shape)
        return CheckResult(
            False, max_abs, max_rel,
            f"{nbad} of {ref.size} elements outside budget (rtol={rtol:.3g}); worst at {tuple(int(i) for i in idx)}: "
            f"got {out64[idx]!r}, expected {ref[idx]!r}",
        )


_CHUNK = 1 << 16  # elements compared at once: a few float64 arrays of it stay in the L2
_PARALLEL_MIN = 1 << 22  # outputs from this many elements are checked on several threads


def _spans(n: int) -> list[tuple[int, int]]:
    """[lo, hi) element spans of whole chunks, one per thread (a single span below ``_PARALLEL_MIN``)."""
    if n < _PARALLEL_MIN:
        return [(0, n)]
    threads = min(os.cpu_count() or 1, 16, n // (_PARALLEL_MIN // 4))
    step = -(-n // threads // _CHUNK) * _CHUNK
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


@dataclass
class _Compared:
    abs_max: float
    ref_max: float  # the largest finite |ref|
    nbad: int
    worst: float
    worst_at: int


def _compare(flat_ref: np.ndarray, flat_out: np.ndarray, atol: np.ndarray, rtol: float, lo: int,
             hi: int) -> _Compared:
    """The error statistics of elements [lo, hi) (see :meth:`OpSpec.check`)."""
    abs_max, ref_max, nbad, worst, worst_at = [0.0], [0.0], 0, -np.inf, -1
    for start in range(lo, hi, _CHUNK):
        stop = min(hi, start + _CHUNK)
        r, o = flat_ref[start:stop], flat_out[start:stop]
        a = atol[start:stop] if atol.ndim else atol
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.abs(o - r)
            err[np.isnan(o) & ~np.isnan(r)] = np.inf
            # inf == inf and NaN where the reference is NaN (a NaN input propagated) are exact
            same_inf = (np.isinf(r) & (o == r)) | (np.isnan(r) & np.isnan(o))
            err[same_inf] = 0.0
            abs_r = np.abs(r)
            allowed = a + rtol * abs_r
            bad = ~(err <= allowed) & ~same_inf  # inf == inf is exact even where rtol * inf is nan
            abs_max.append(np.max(err))
            ref_max.append(np.max(abs_r, where=np.isfinite(abs_r), initial=0.0))
            n = int(np.count_nonzero(bad))
            if n:
                nbad += n
                excess = np.where(bad, err - allowed, -np.inf)
                j = int(np.argmax(excess))
                if worst_at < 0 or not excess[j] <= worst:  # NaN ranks first, as np.argmax does
                    worst, worst_at = excess[j], start + j
    return _Compared(float(np.max(abs_max)), float(np.max(ref_max)), nbad, worst, worst_at)


def to_float64(x: Any) -> np.ndarray:
    """``x`` as a float64 array (its layout kept; no copy when it is one already). 16-bit floats go through
    float32 (exact; bfloat16 ~10x faster than ml_dtypes' direct cast); large contiguous arrays convert on threads."""
    a = np.asarray(x)
    if a.dtype == np.float64:
        return a
    spans = _spans(a.size) if a.flags.c_contiguous else [(0, a.size)]
    if len(spans) == 1:
        return _f64(a)
    out = np.empty(a.shape, np.float64)
    src, dst = a.reshape(-1), out.reshape(-1)

    def convert(span: tuple[int, int]) -> None:
        dst[span[0]:span[1]] = _f64(src[span[0]:span[1]])

    with ThreadPoolExecutor(len(spans), thread_name_prefix="oprt-f64") as pool:
        list(pool.map(convert, spans))
    return out


def _f64(a: np.ndarray) -> np.ndarray:
    # 16-bit floats through float32: exact, and numpy / ml_dtypes convert to float32 several times faster
    if a.dtype.itemsize == 2 and a.dtype.kind in "fV":
        return a.astype(np.float32).astype(np.float64)
    return a.astype(np.float64)


def _type_names(p: Param) -> str:
    names = " or ".join(t.__name__ for t in p.types)
    return names + (" or None" if p.allow_none else "")


def _values(n: int, dt: DType, rng: np.random.Generator, data: str) -> np.ndarray:
    if data == "uniform":
        v = rng.uniform(-1.0, 1.0, n)
        # keep exact zeros out: a zero input hides sign and scaling bugs
        v[v == 0.0] = 0.5
        if dt.opt_in:  # e4m3 rounds |v| < 2^-10 to 0 (its smallest subnormal is 2^-9): those become 0.5 too
            v[np.abs(v) < dt.smallest_subnormal] = 0.5
        return v
    if data == "large":
        # Magnitudes where exp(x) overflows the dtype unless the max is subtracted first.
        hi = {"f32": 1000.0, "f16": 60000.0, "bf16": 1.0e30}[dt.name]
        lo = {"f32": 90.0, "f16": 20000.0, "bf16": 1.0e29}[dt.name]
        return rng.choice([-1.0, 1.0], n) * rng.uniform(lo, hi, n)
    raise InvalidArgumentError(f"unknown data distribution {data!r}; valid: uniform, large")


def make_tensor(t: TensorCase, dt: DType, rng: np.random.Generator, data: str = "uniform",
                values: Callable[[int], np.ndarray] | None = None) -> np.ndarray:
    """A random host array of logical shape ``t.shape`` laid out as ``t.layout``; ``values(count)``: its
    elements (an index input's), else random ones of the ``data`` distribution."""
    shape = tuple(t.shape)
    if t.layout == "contiguous":
        base_shape = shape
    elif t.layout == "transposed":
        base_shape = shape[:-2] + (shape[-1], shape[-2])
    elif t.layout == "step2":
        base_shape = shape[:-1] + (2 * shape[-1],) if shape else shape
    elif t.layout == "offset1":
        base_shape = (math.prod(shape) + 1,)
    elif t.layout == "reversed":
        base_shape = shape
    else:  # broadcast0
        base_shape = (1,) + shape[1:] if shape else shape
    count = math.prod(base_shape)
    base = (values(count) if values is not None else _values(count, dt, rng, data)).astype(dt.numpy).reshape(base_shape)
    if t.layout == "transposed":
        return np.swapaxes(base, -1, -2)
    if t.layout == "step2":
        return base[..., ::2] if shape else base
    if t.layout == "offset1":
        return base[1:].reshape(shape)
    if t.layout == "reversed":
        return base[..., ::-1] if shape else base
    if t.layout == "broadcast0":
        return np.broadcast_to(base, shape) if shape else base
    return base
