"""Python-side call validation for backends implemented in Python (numpy, torch, cupy...).

Compiled backends validate in C (oprt_validate.h); this module gives the same
answers and the same exception types for the others, so every backend rejects
bad input alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .device_array import DeviceArray, element_span
from .dtypes import DType, get_dtype
from .errors import InvalidArgumentError, OverlapError, UnsupportedCase
from .spec import OpSpec, as_outputs

__all__ = ["check_call", "check_output_layout", "check_overlap", "memory_layout"]

# (address of element [0, ..., 0], shape, strides in bytes, itemsize)
Layout = tuple[int, tuple[int, ...], tuple[int, ...], int]


def check_call(spec: OpSpec, shapes: Sequence[Sequence[int]], dtypes: Sequence[Any], out_shape: Any,
               out_dtype: Any, params: Mapping[str, Any] | None) -> tuple[DType, dict[str, Any]]:
    """Validate one call of ``spec``; returns (dtype, params with defaults). ``shapes`` and ``dtypes``: the inputs'
    given, the required ones and then any of the optional ones (``spec.optional_inputs``).

    ``out_shape`` and ``out_dtype``: the output's; for a multi-output op a sequence of each output's (one dtype
    for all is accepted too). The dtype returned is the row's: the first input's where the op declares a mix for it
    (``spec.output_dtypes``: matmul's e4m3 a and b with a bf16 out), else out's. Raises InvalidArgumentError
    (count, shape, param, axis, dtype mismatch, an index input of another dtype than it declares) or
    UnsupportedCase (a dtype the op does not define).
    """
    spec.check_input_count(len(shapes))
    names = spec.output_names
    if spec.multi_output:
        out_shapes = [tuple(s) for s in out_shape]
        if len(out_shapes) != len(names):
            raise InvalidArgumentError(f"{spec.name} has {len(names)} outputs ({', '.join(names)}), "
                                       f"got {len(out_shapes)}")
        odts = [get_dtype(d, index=True) for d in out_dtype] if isinstance(out_dtype, (list, tuple)) else \
            [get_dtype(out_dtype, index=True)] * len(names)
    else:
        out_shapes, odts = [tuple(out_shape)], [get_dtype(out_dtype, index=True)]
    dts = [get_dtype(d, index=True) for d in dtypes]
    odt = odts[0]
    first = dts[0] if dts and spec.input_names[0] not in spec.index_inputs else None
    if first is not None and first.name in spec.output_dtypes:  # a declared mix (matmul: e4m3 a and b, bf16 out)
        _check_mixed(spec, first, dts, odts)
        return first, _check_shapes(spec, shapes, out_shapes, params)
    for name, dt in [*zip(names[1:], odts[1:]), *zip(spec.input_names, dts)]:
        if name in spec.index_inputs:  # an integer input of its own dtype (class ids, positions)
            accepted = spec.index_inputs[name]
            if dt.name not in accepted:
                raise InvalidArgumentError(f"{spec.name}: {name} must be an array of {' or '.join(accepted)} "
                                           f"(indices), got {dt}")
            continue
        if dt != odt:
            raise InvalidArgumentError(f"{spec.name}: dtype mismatch: {names[0]} is {odt} but {name} is {dt} "
                                       f"({_mixes(spec)})")
    if odt.name not in spec.dtypes:
        raise UnsupportedCase(f"{spec.name} does not define dtype {odt}; it supports {', '.join(spec.dtypes)}")
    return odt, _check_shapes(spec, shapes, out_shapes, params)


def _mixes(spec: OpSpec) -> str:
    """The mixed dtypes an op takes, in words: "mixed dtypes are not supported" where it declares none."""
    if not spec.output_dtypes:
        return "mixed dtypes are not supported"
    inplace = {n for o in spec.outputs for n in o.inplace}
    rows = " and ".join(n for n in spec.input_names if n not in inplace and n not in spec.index_inputs)
    with_out = " and ".join([*spec.output_names, *(n for n in spec.input_names if n in inplace)])
    mixes = "; ".join(f"{row} {rows} with {out} {with_out}" for row, out in spec.output_dtypes.items())
    return f"the only mixed dtypes it takes: {mixes}"


def _check_mixed(spec: OpSpec, row: DType, dts: Sequence[DType], odts: Sequence[DType]) -> None:
    """A call of a declared mix: every value input of ``row`` (those an output may be of the output dtype), every
    output of the output dtype; InvalidArgumentError naming the first that is not."""
    expected = [(name, spec.value_dtype(i, row), dt) for i, (name, dt) in enumerate(zip(spec.input_names, dts))
                if name not in spec.index_inputs]
    expected += [(name, spec.output_dtype(row), dt) for name, dt in zip(spec.output_names, odts)]
    for name, want, got in expected:
        if got != want:
            raise InvalidArgumentError(f"{spec.name}: dtype mismatch: {spec.input_names[0]} is {row}, so {name} must "
                                       f"be {want}, got {got} ({_mixes(spec)})")


def _check_shapes(spec: OpSpec, shapes: Sequence[Sequence[int]], out_shapes: Sequence[tuple[int, ...]],
                  params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The params with defaults, after checking them and every output's shape."""
    names = spec.output_names
    params = spec.validate_params(params, shapes)
    for name, got, expected in zip(names, out_shapes, spec.output_shapes(shapes, params)):
        if got != tuple(expected):
            raise InvalidArgumentError(f"{spec.name}: shape mismatch: {name} has shape {got}, expected "
                                       f"{tuple(expected)} for inputs {', '.join(map(str, map(tuple, shapes)))}")
    return params


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


def memory_layout(x: Any) -> Layout | None:
    """(address of element ``[0, ..., 0]``, shape, strides in bytes, itemsize) of an array, from what it exposes
    (numpy's ``__array_interface__``, a DeviceArray's fields, a torch tensor's ``data_ptr()``, any
    ``__cuda_array_interface__`` or ``__array_interface__``) without reading its memory; None when it exposes none."""
    if isinstance(x, np.ndarray):
        return x.__array_interface__["data"][0], x.shape, x.strides, x.itemsize
    if isinstance(x, DeviceArray):
        return x.ptr, x.shape, x.strides, x.itemsize
    if callable(getattr(x, "data_ptr", None)) and callable(getattr(x, "element_size", None)):  # torch
        item = int(x.element_size())
        return int(x.data_ptr()), tuple(x.shape), tuple(int(s) * item for s in x.stride()), item
    for name in ("__cuda_array_interface__", "__array_interface__"):
        try:
            iface = getattr(x, name, None)
        except Exception:  # noqa: BLE001 - an interface that refuses to be read: nothing to judge by
            iface = None
        if isinstance(iface, dict) and "data" in iface:
            shape = tuple(int(n) for n in iface["shape"])
            item = np.dtype(iface["typestr"]).itemsize
            strides = iface.get("strides")
            if strides is None:  # row-major
                strides, run = [], item
                for n in reversed(shape):
                    strides.insert(0, run)
                    run *= max(n, 1)
            return int(iface["data"][0] or 0), shape, tuple(int(s) for s in strides), item
    return None


def _byte_span(layout: Layout) -> tuple[int, int] | None:
    """The addresses [lo, hi) an array's elements cover; None when it has none."""
    ptr, shape, strides, item = layout
    if 0 in shape:
        return None
    lo, hi = element_span(shape, strides)
    return ptr + lo, ptr + hi + item


def _rows_span(layout: Layout) -> tuple[int, int, int] | None:
    """``(step, lo, hi)``: an array as rows along its outermost dim (the largest stride of extent > 1, positive),
    its other dims' bytes [lo, hi) from a row's start fitting in one step; None where it is not so laid out."""
    _, shape, strides, item = layout
    dims = [(abs(int(st)), int(st), i) for i, (n, st) in enumerate(zip(shape, strides)) if int(n) > 1]
    if 0 in shape or not dims:
        return None
    _, step, outer = max(dims)
    if step <= 0 or step > 1 << 56:
        return None
    inner = [(n, st) for i, (n, st) in enumerate(zip(shape, strides)) if i != outer]
    lo, hi = element_span(tuple(n for n, _ in inner), tuple(st for _, st in inner))
    hi += item
    return (step, lo, hi) if hi - lo <= step else None


def _rows_disjoint(a: Layout, b: Layout) -> bool:
    """Whether two arrays laid out as rows of one step share no byte (oprt_validate.h's ``oprt_rows_disjoint``): a
    byte of b's rows lies (b - a) mod step from the start of a row of a. False where it cannot tell."""
    ra, rb = _rows_span(a), _rows_span(b)
    if ra is None or rb is None or ra[0] != rb[0]:
        return False
    step = ra[0]
    r = (b[0] - a[0]) % step
    return all(not (rb[1] + r + j * step < ra[2] and ra[1] < rb[2] + r + j * step) for j in range(-2, 3))


def check_overlap(spec: OpSpec, out: Any, inputs: Sequence[Any], backend: str = "python") -> None:
    """Refuse an ``out`` that shares memory with an input, unless it is exactly that input (same address, shape,
    strides on the dims of extent > 1, and itemsize) and ``spec.inplace`` names it: raises
    :class:`~oprt_core.errors.OverlapError`, worded as oprt_validate.h's ``oprt_check_alias`` words it.

    A multi-output op's ``out`` is the tuple of its outputs: each is judged against the inputs by what its own
    :class:`~oprt_core.spec.Output` allows, and two outputs that share memory are refused (as
    ``oprt_check_launch_outputs`` does).

    Decided from address spans (the lowest to the highest byte each array covers), except that two arrays laid out
    as rows of one stride whose rows interleave without sharing a byte are disjoint (q and k of one fused qkv
    buffer, ``t[..., :d]`` and ``t[..., d:]``, ``x[::2]`` and ``x[1::2]``); other interleaved views that share no
    element (``x[::4]`` and ``x[1::2]``: strides differ) are refused. Arrays whose layout cannot be read
    (:func:`memory_layout` is None) are not judged."""
    if spec.multi_output:
        outs = as_outputs(out)
        for k, (o, decl) in enumerate(zip(outs, spec.outputs)):
            _check_out_overlap(spec, o, decl.name, decl.inplace, inputs, backend)
            for j in range(k):
                if _overlap(outs[j], o):
                    raise OverlapError(backend, None, f"{spec.name}: outputs {spec.output_names[j]} and {decl.name} "
                                                      "share memory; use separate outputs")
        return
    _check_out_overlap(spec, out, "out", spec.inplace, inputs, backend)


def _overlap(a: Any, b: Any) -> bool:
    """Whether two arrays' byte spans intersect, rows that interleave without a shared byte aside (unreadable
    layouts: not judged)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and not np.may_share_memory(a, b):
        return False
    la, lb = memory_layout(a), memory_layout(b)
    if la is None or lb is None:
        return False
    sa, sb = _byte_span(la), _byte_span(lb)
    return sa is not None and sb is not None and sa[0] < sb[1] and sb[0] < sa[1] and not _rows_disjoint(la, lb)


def _check_out_overlap(spec: OpSpec, out: Any, out_name: str, inplace: Sequence[str], inputs: Sequence[Any],
                       backend: str) -> None:
    """check_overlap of one output, named ``out_name``, which may be exactly the inputs in ``inplace``."""
    out_layout: Layout | None = None  # read when an input may share memory with out
    o_span: tuple[int, int] | None = None
    names = spec.input_names
    for i, x in enumerate(inputs):
        if x is out:  # one array object: exactly the same memory and layout
            if (names[i] if i < len(names) else "") in inplace:
                continue
        elif isinstance(x, np.ndarray) and isinstance(out, np.ndarray) and not np.may_share_memory(x, out):
            continue  # numpy's own test of the same spans, in C (~5x faster than reading both layouts here)
        if out_layout is None:
            out_layout = memory_layout(out)
            if out_layout is None:
                return
            o_span = _byte_span(out_layout)
        if o_span is None:  # an empty out shares nothing
            return
        x_layout = memory_layout(x)
        x_span = _byte_span(x_layout) if x_layout is not None else None
        if x_layout is None or x_span is None or x_span[1] <= o_span[0] or o_span[1] <= x_span[0]:
            continue
        if _rows_disjoint(out_layout, x_layout):  # interleaved rows that share no byte
            continue
        o_ptr, o_shape, o_strides, o_item = out_layout
        name = names[i] if i < len(names) else f"input {i}"
        allowed = name in inplace
        x_ptr, x_shape, x_strides, x_item = x_layout
        same = x_ptr == o_ptr
        exact = same and x_shape == o_shape and x_item == o_item and all(
            a == b for n, a, b in zip(o_shape, o_strides, x_strides) if n > 1)
        if exact and allowed:
            continue
        if exact:
            msg = (f"{spec.name}: {out_name} is input {name} itself, and {spec.name} cannot run in place; use a "
                   "separate output" if out_name == "out" else f"{spec.name}: {out_name} is input {name} itself, and "
                   f"{spec.name} cannot write {out_name} over {name}; use a separate output")
        else:
            how = "the same memory in another layout" if same else "partial overlap of the same memory"
            hint = f", or {name} itself as {out_name} (in place)" if allowed else ""
            msg = f"{spec.name}: {out_name} overlaps input {name} ({how}); use a separate output{hint}"
        raise OverlapError(backend, None, msg)
