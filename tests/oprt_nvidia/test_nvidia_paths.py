"""Shapes that reach each kernel path of the nvidia backend's core-op kernels and their edges (skips without a GPU).

- contiguous elementwise: one tile per block (kBlock x kUnroll packs), the last partial tile, the
  scalar head/tail of pointers sharing a misalignment, the all-scalar tiles of differing misalignments;
  contiguous copies through cudaMemcpyAsync (up to 64 MiB) and, with OPRT_NVIDIA_COPY=kernel, the copy kernel;
- transpose: 64 x 64 tiles in every dtype (128 x 64 for 2-byte pairs on views of >= 8 waves of them), partial
  edge tiles, batched, 2-byte element pairs and the views that cannot take them;
- softmax fast rows (softmax_rows.cuh: contiguous aligned rows of one row stride, up to 16384 elements):
  every configuration of row packs (1..4096, full and partial rows), padded and reversed row strides;
- softmax shifted fast rows (rows of any width and 16-byte phase: odd widths, odd row strides, offset views; the
  first and last pack of a row element by element) and fast cluster rows spread over up to 16 blocks for 1-8 rows;
  the tune switches (OPRT_NVIDIA_SOFTMAX_SHIFT, _SPREAD, _ROWS16, _RAW16, _SHORT, _PERSIST, _PUSH) reach their
  alternatives;
- softmax and reduce_sum short columns (a leading or middle axis of up to 64 values a thread, packs or single
  elements, views, -inf and NaN);
- softmax rows in registers: kGroup lanes per row (several rows per warp) for rows of up to one pack per
  lane, a whole warp beyond, rows counts that leave a warp's last groups empty, misaligned starts
  (element path), strided rows;
- softmax block rows (512 threads, up to 32 values a thread) and cluster rows (a thread-block cluster per
  row of up to 8 x 16384 elements on sm_90, maxima and sums exchanged through distributed shared memory;
  longer rows, unaligned rows and devices without clusters take the online kernel);
- softmax columns (softmax_cols.cuh: a leading axis split across a cluster, 16-byte packs across the inner
  dim): the on-chip kernel (segments of up to 1024 rows held in registers and shared memory, clusters of up
  to 16) and, with OPRT_NVIDIA_SOFTMAX_COLS=stash, the stash kernel it falls back to (2048-row segments,
  clusters of up to 8): axis lengths around the segments, partial strips, outer dims, extremes in one
  segment, sliced and reversed views, and the cases the generic columns kernel keeps (the on-chip
  kernel's blocks push their (max, sum) pairs into each other's shared memory, kXPush); f32 axes of more than
  8192 rows also have the on-chip kernel without clusters (ticketed blocks exchanging through the
  workspace), the fallback where the cluster does not launch, first under OPRT_NVIDIA_SOFTMAX_COLS=group: 9 to
  16 blocks a strip, partial strips, outer dims, more blocks than the device holds at once, -inf and NaN in
  one block's segment;
- reduce_sum: 8 packs in flight per thread with one predicated trip, unsplit f32 rows of whole trips (a block
  per row at two an SM), split rows (block-wide finishing pass), split columns (4-way finishing pass), wide
  columns in ~1 long 1-D block an SM (16 rows in flight), columns of >= 128 MiB in band-ordered tiles.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from oprt_core import operators
from oprt_core.compiled import DeviceArray
from oprt_core.dtypes import DTYPES

ALL_DTYPES = list(DTYPES)


@functools.cache
def _sm_count(backend):
    return backend.device_properties()["sm_count"]


def _launched(backend, expected, any_device=False):
    """The kernels the last op call launched (oprt_nvidia.last_launch, the launchers' note_launch names) are the ones
    the test was written for. any_device: the choice depends on layout and alignment only (contiguous packs or
    scalar tiles, the copy driver, transposed pairs), asserted on every GPU; otherwise it follows size rules worked out
    for the H200 (reduce_sum's plan: 132 SMs of 2048 threads; the wide transposed pairs' waves; clusters of 16) and is
    asserted there only, the results being checked on every device."""
    from oprt_nvidia import last_launch

    got = last_launch()
    if not any_device and _sm_count(backend) != 132:
        return
    assert got == expected, f"launched {got!r}; the test was written for {expected!r}"


def _check(backend, op, inputs, params, dtype):
    spec = operators.spec(op)
    params = spec.validate_params(params)
    out = backend.empty(spec.output_shape([x.shape for x in inputs], params), dtype)
    backend.fill_nan(out)
    backend.prepare(op, [backend.to_device(x) for x in inputs], out, params)()
    backend.synchronize()
    result = spec.check(backend.to_host(out), inputs, dtype, params)
    assert result.ok, result.message


def _view(backend, base: DeviceArray, offset: int, shape) -> DeviceArray:
    """A contiguous view of ``shape`` starting ``offset`` elements into ``base``."""
    strides, run = [], 1
    for n in reversed(shape):
        strides.append(run)
        run *= n
    return DeviceArray(
        backend,
        base.ptr + offset * base.itemsize,
        shape,
        tuple(reversed(strides)),
        base.dtype_info,
        owner=base,
        cuda_interop=True,
    )


def _check_offsets(backend, rng, op, shapes, params, dtype, in_off, out_off, scale=1.0):
    """Inputs start in_off (+k for input k) elements and the output out_off elements into their buffers."""
    spec = operators.spec(op)
    np_dtype = DTYPES[dtype].numpy
    params = spec.validate_params(params)
    host = [rng.uniform(-scale, scale, s).astype(np_dtype) for s in shapes]
    ins = []
    for k, x in enumerate(host):
        off = in_off + (k if in_off else 0)
        base = backend.to_device(np.concatenate([np.ones(off, np_dtype), x.ravel()]))
        ins.append(_view(backend, base, off, x.shape))
    out_shape = spec.output_shape(shapes, params)
    out_base = backend.empty((math.prod(out_shape) + out_off,), dtype)
    out = _view(backend, out_base, out_off, out_shape)
    backend.fill_nan(out)
    backend.prepare(op, ins, out, params)()
    backend.synchronize()
    result = spec.check(backend.to_host(out), host, dtype, params)
    assert result.ok, result.message


# ---- contiguous elementwise ------------------------------------------------------------------------------

# kBlock x kUnroll packs per tile (256 x 1: 1024 f32 / 2048 f16 elements; 4096 / 8192 under the earlier, larger
# tile); sizes around one and several tiles of either, and tiny ones
EW_SIZES = [1, 5, 8, 9, 1023, 1024, 1025, 2051, 4096, 4097, 8192, 8193, 3 * 8192 + 5, (1 << 20) + 3]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", EW_SIZES)
@pytest.mark.parametrize("op", ["copy", "relu", "vector_add"])
def test_contig_tiles(nvidia_backend, rng, op, n, dtype):
    shapes = [(n,), (n,)] if op == "vector_add" else [(n,)]
    params = {"negative_slope": 0.25} if op == "relu" else {}
    inputs = [rng.uniform(-1, 1, s).astype(DTYPES[dtype].numpy) for s in shapes]
    _check(nvidia_backend, op, inputs, params, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", [3, 4097, 8193, (1 << 18) + 7])
@pytest.mark.parametrize("op", ["copy", "relu", "vector_add"])
@pytest.mark.parametrize("offsets", [(1, 1), (3, 3), (1, 0), (0, 3)], ids=lambda o: f"in{o[0]}-out{o[1]}")
def test_contig_misaligned(nvidia_backend, rng, monkeypatch, op, n, dtype, offsets):
    """Equal offsets: packs after a scalar head; different ones (vector_add's b is one further): scalar tiles."""
    monkeypatch.delenv("OPRT_NVIDIA_COPY", raising=False)  # copies of these sizes go to the driver
    shapes = [(n,), (n,)] if op == "vector_add" else [(n,)]
    params = {"negative_slope": 0.25} if op == "relu" else {}
    _check_offsets(nvidia_backend, rng, op, shapes, params, dtype, offsets[0], offsets[1])
    same = offsets[0] == offsets[1] and op != "vector_add"  # vector_add's b starts one element past a
    _launched(nvidia_backend, "cudaMemcpyAsync" if op == "copy" else "ew_contig" if same else "ew_contig_scalar",
              any_device=True)


# contiguous copies of up to 64 MiB go to cudaMemcpyAsync (copy.cu kDriverCopyMaxBytes);
# OPRT_NVIDIA_COPY=kernel keeps them on the copy kernel: both, over tile edges and misaligned starts
@pytest.mark.gpu
@pytest.mark.parametrize("path", ["driver", "kernel"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", [1, 9, 2051, 8193, (1 << 20) + 3])
@pytest.mark.parametrize("offsets", [(0, 0), (1, 1), (1, 0), (0, 3)], ids=lambda o: f"in{o[0]}-out{o[1]}")
def test_copy_driver_and_kernel(nvidia_backend, rng, monkeypatch, path, n, dtype, offsets):
    if path == "kernel":
        monkeypatch.setenv("OPRT_NVIDIA_COPY", "kernel")
    else:
        monkeypatch.delenv("OPRT_NVIDIA_COPY", raising=False)
    _check_offsets(nvidia_backend, rng, "copy", [(n,)], {}, dtype, offsets[0], offsets[1])
    # the kernel: 16-byte packs after a scalar head where both pointers share a misalignment, else scalar tiles
    kernel = "ew_contig" if offsets[0] == offsets[1] else "ew_contig_scalar"
    _launched(nvidia_backend, "cudaMemcpyAsync" if path == "driver" else kernel, any_device=True)


# ---- transpose -----------------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(64, 64), (65, 130), (1, 100), (100, 2), (129, 63), (3, 70, 45)])
def test_transpose_tiles(nvidia_backend, rng, shape, dtype):
    base = rng.uniform(-1, 1, shape).astype(DTYPES[dtype].numpy)
    view = base.T if base.ndim == 2 else base.transpose(0, 2, 1)
    _check(nvidia_backend, "copy", [view], {}, dtype)
    _check(nvidia_backend, "relu", [view], {"negative_slope": 0.5}, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_transpose_pairs_wide(nvidia_backend, rng, dtype):
    """2-byte pairs in 128 x 64 tiles, taken where those make >= 8 waves of 6 blocks an SM (elementwise.cuh,
    kTransposeWidePairsWaves; 6336 tiles on 132 SMs): 65 x 98 tiles here, partial along both dims; on a device with
    more than 132 SMs the 64 x 64 tiles run instead (the check holds either way)."""
    base = (rng.random((6270, 8194), dtype=np.float32) * 2 - 1).astype(DTYPES[dtype].numpy)
    _check(nvidia_backend, "copy", [base.T], {}, dtype)
    _launched(nvidia_backend, "ew_transpose_pairs_wide")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize(
    "shape, offset, width, pairs",
    [
        ((130, 66), 0, None, True),  # even extents: element pairs (2-byte dtypes), partial edge tiles
        ((300, 258), 0, None, True),  # pairs: full and partial tiles along both dims
        ((128, 256), 0, None, True),  # pairs: interior tiles only
        ((4, 70, 46), 0, None, True),  # batched pairs
        ((64, 68), 1, None, False),  # 2-byte misaligned start: element by element
        ((64, 68), 2, None, True),  # 4-byte aligned, not 16: pairs
        ((64, 67), 0, 64, False),  # even extents, odd cross stride: element by element
        ((66, 70), 0, 64, True),  # even extents, even cross stride of a sliced base: pairs
    ],
)
def test_transpose_pairs(nvidia_backend, rng, shape, offset, width, pairs, dtype):
    """The transposed copy's 2-byte pairs path and the conditions that send a view back to single elements."""
    np_dtype = DTYPES[dtype].numpy
    base = rng.uniform(-1, 1, shape).astype(np_dtype)
    dev = nvidia_backend.to_device(np.concatenate([np.ones(offset, np_dtype), base.ravel()]))
    host = base if width is None else base[..., :width]
    host = host.T if host.ndim == 2 else host.transpose(0, 2, 1)
    strides = tuple(st // base.itemsize for st in host.strides)
    view = DeviceArray(
        nvidia_backend,
        dev.ptr + offset * base.itemsize,
        host.shape,
        strides,
        dev.dtype_info,
        owner=dev,
        cuda_interop=True,
    )
    for op, params in (("copy", {}), ("relu", {"negative_slope": 0.5})):
        spec = operators.spec(op)
        params = spec.validate_params(params)
        out = nvidia_backend.empty(host.shape, dtype)
        nvidia_backend.fill_nan(out)
        nvidia_backend.prepare(op, [view], out, params)()
        _launched(nvidia_backend, "ew_transpose_pairs" if pairs and dtype != "f32" else "ew_transpose", any_device=True)
        nvidia_backend.synchronize()
        result = spec.check(nvidia_backend.to_host(out), [np.ascontiguousarray(host)], dtype, params)
        assert result.ok, f"{op}: {result.message}"


# ---- softmax: several rows per warp -------------------------------------------------------------------------

ROW_LENGTHS = [
    1,
    2,
    3,
    7,
    8,
    9,
    15,
    16,
    17,
    31,
    32,
    33,
    63,
    64,
    65,
    127,
    128,
    129,
    255,
    256,
    257,
    511,
    1023,
    1024,
    1025,
]


def _cluster_rows_path(span, v, rows, shift, persist=True, sms=132):
    """The kernel softmax.cu's launch_fast_cluster takes for rows of `span` elements (512 x 8 packs a block), or None:
    where rows x blocks a row leave SMs idle, launched clusters of up to 16 (OPRT_NVIDIA_SOFTMAX_SPREAD's default);
    else persistent clusters of up to 16 (OPRT_NVIDIA_SOFTMAX_PERSIST's default); else (persist False) launched
    clusters of up to 8."""
    nb = -(-span // (512 * 8 * v))
    tail = "_shift" if shift else ""
    if rows * nb < sms and nb <= 16:
        return "softmax_rows_fast_cluster" + tail
    if persist and nb <= 16:
        return "softmax_rows_persist" + tail
    return "softmax_rows_fast_cluster" + tail if nb <= 8 else None


def _rows_path(length, dtype, packs=True, shift=None, rows=3, persist=True):
    """The kernel softmax.cu's launch_softmax takes for rows of `length` with one row stride (packs: unit-stride,
    16-byte aligned rows and row strides, so that whole packs are possible; shift: unit-stride rows whose output rows
    have the input rows' 16-byte phase, by default as packs: contiguous rows of any length): fast rows up to 16384
    elements in whole packs; other rows that shift, the shifted fast rows while the row and up to a pack before it
    fit 16384 elements, then the shifted fast clusters; else a warp-group row up to 1024 elements, a 512-thread block
    row up to 16384; longer rows in whole packs a fast or persistent cluster (_cluster_rows_path), then the older
    cluster kernel (8 blocks of 16384), then the online kernel, which also takes longer rows of single elements."""
    v = 4 if dtype == "f32" else 8
    shift = packs if shift is None else shift
    whole = packs and length % v == 0
    if whole and length <= 16384:
        return "softmax_rows_fast"
    if shift and not whole:
        if length + v - 1 <= 16384:
            return "softmax_rows_fast_shift"
        path = _cluster_rows_path(length + v - 1, v, rows, True, persist)
        if path:
            return path
    if length <= 16384:
        return "softmax_rows_group" if length <= 1024 else "softmax_rows_regs"
    if not whole:
        return "softmax_rows_online"
    path = _cluster_rows_path(length, v, rows, False, persist)
    if path:
        return path
    return "softmax_rows_cluster" if -(-length // 16384) <= 8 else "softmax_rows_online_vec"


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("length", ROW_LENGTHS)
def test_softmax_row_groups(nvidia_backend, rng, length, dtype):
    # 37 rows: with 2..32 rows per warp the last warp has empty groups
    x = rng.uniform(-6, 6, (37, length)).astype(DTYPES[dtype].numpy)
    _check(nvidia_backend, "softmax", [x], {"axis": -1}, dtype)
    _launched(nvidia_backend, _rows_path(length, dtype), any_device=True)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("rows, length", [(1, 128), (1, 4), (2, 64), (5, 8), (4096, 128), (3001, 16), (1000, 1)])
def test_softmax_row_counts(nvidia_backend, rng, rows, length, dtype):
    x = rng.uniform(-6, 6, (rows, length)).astype(DTYPES[dtype].numpy)
    _check(nvidia_backend, "softmax", [x], {"axis": -1}, dtype)
    _launched(nvidia_backend, _rows_path(length, dtype), any_device=True)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("length", [8, 16, 64, 128, 256])
@pytest.mark.parametrize("offsets", [(1, 0), (0, 1), (3, 3)], ids=lambda o: f"in{o[0]}-out{o[1]}")
def test_softmax_row_groups_misaligned(nvidia_backend, rng, length, dtype, offsets):
    _check_offsets(
        nvidia_backend, rng, "softmax", [(33, length)], {"axis": -1}, dtype, offsets[0], offsets[1], scale=6.0
    )
    # a misaligned start or output: the shifted fast rows where both are misaligned alike, else the element path
    same_phase = (offsets[0] - offsets[1]) * DTYPES[dtype].itemsize % 16 == 0
    _launched(nvidia_backend, _rows_path(length, dtype, packs=False, shift=same_phase), any_device=True)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("length", [3, 16, 128, 300])
def test_softmax_row_groups_strided(nvidia_backend, rng, length, dtype):
    base = rng.uniform(-6, 6, (41, 2 * length)).astype(DTYPES[dtype].numpy)
    _check(nvidia_backend, "softmax", [base[:, ::2]], {"axis": -1}, dtype)  # strided rows
    _launched(nvidia_backend, _rows_path(length, dtype, packs=False, shift=False), any_device=True)
    _check(nvidia_backend, "softmax", [base[::-1, :length]], {"axis": -1}, dtype)  # reversed rows, 16 B aligned or not


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_softmax_row_groups_extremes(nvidia_backend, dtype):
    """Large magnitudes and equal values in short rows: the group max must be the row's own."""
    np_dtype = DTYPES[dtype].numpy
    x = np.zeros((64, 16), np.float32)
    x[::2] = 30.0
    x[1::2, 3] = -30.0
    x[5] = np.arange(16) * 2.0 - 15.0
    _check(nvidia_backend, "softmax", [x.astype(np_dtype)], {"axis": -1}, dtype)


# ---- softmax: block rows, cluster rows, online rows -----------------------------------------------------------

# 1025..16384: a 512-thread block per row (1 to 32 values a thread); 16385..131072 with rows of whole 16-byte
# packs: a cluster of ceil(L / 16384) blocks (1 slot short of a full block, exactly 8 blocks, one block's
# worth of padding); beyond, or unaligned: the online kernel.
LONG_ROWS = [1032, 2048, 4096, 6000, 8192, 8200, 16384, 16392, 32768, 40000, 65536, 98312, 131072, 131080, 16385, 70001]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("length", LONG_ROWS)
def test_softmax_long_rows(nvidia_backend, rng, length, dtype):
    rows = 3 if length > 16384 else 5
    x = rng.uniform(-8, 8, (rows, length)).astype(DTYPES[dtype].numpy)
    _check(nvidia_backend, "softmax", [x], {"axis": -1}, dtype)
    # rows up to 16384 choose by layout alone; the cluster kernels need a device that launches clusters
    _launched(nvidia_backend, _rows_path(length, dtype, rows=rows), any_device=length <= 16384)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("length", [8, 64, 128, 200, 1024, 2048, 4096, 16384])
@pytest.mark.parametrize("pad", [8, 24])
def test_softmax_fast_rows_padded(nvidia_backend, rng, length, pad, dtype):
    """Aligned rows whose stride is not their length (a column slice of a wider buffer): the fast rows
    kernel's row stride; 19 rows leave groups past the last row in the warp-group configurations."""
    base = rng.uniform(-8, 8, (19, length + pad)).astype(DTYPES[dtype].numpy)
    _check(nvidia_backend, "softmax", [base[:, :length]], {"axis": -1}, dtype)
    _launched(nvidia_backend, "softmax_rows_fast", any_device=True)
    _check(nvidia_backend, "softmax", [base[::-1, pad:]], {"axis": -1}, dtype)  # reversed, aligned or not


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_softmax_cluster_rows_extremes(nvidia_backend, dtype):
    """The row max lies in one block of the cluster only; other blocks see values 60 below it."""
    x = np.full((4, 65536), -30.0, np.float32)
    x[0, 65535] = 30.0  # last block
    x[1, 0] = 30.0  # first block
    x[2, 20000:20010] = 30.0  # second block
    x[3] = np.linspace(-30, 30, 65536)
    _check(nvidia_backend, "softmax", [x.astype(DTYPES[dtype].numpy)], {"axis": -1}, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("length", [16384, 65536, 40000])
def test_softmax_16bit_rows_wide_range(nvidia_backend, rng, length, dtype):
    """16-bit rows keep exp(x - max) rounded to the dtype between the sum and the scaling (kRawExp): inputs
    spread over 40 units put most exps far below f16's normal range (6.1e-5), where the rounding is absolute;
    the error budget (f16 atol 6e-8, bf16 rtol 2 eps) must still hold, and every output must be finite."""
    x = rng.uniform(-35.0, 5.0, (6, length)).astype(np.float32)
    x[1, :] = rng.uniform(-1.0, 1.0, length)  # a row of near-equal exps: every output ~1 / length
    x[2, ::97] = 5.0  # a few maxima, everything else 0..40 below them
    _check(nvidia_backend, "softmax", [x.astype(DTYPES[dtype].numpy)], {"axis": -1}, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_softmax_cluster_rows_misaligned_and_batched(nvidia_backend, rng, dtype):
    _check_offsets(nvidia_backend, rng, "softmax", [(3, 32768)], {"axis": -1}, dtype, 1, 0, scale=6.0)
    x = rng.uniform(-6, 6, (2, 3, 24576)).astype(DTYPES[dtype].numpy)
    _check(nvidia_backend, "softmax", [x], {"axis": -1}, dtype)
    _check(nvidia_backend, "softmax", [x[:, ::2]], {"axis": -1}, dtype)  # strided kept dims, aligned rows


# ---- softmax: rows of any 16-byte phase (kShift), few rows spread over clusters of up to 16 ---------------------

# widths that break 16-byte packs (GPT-2's vocabulary, CLIP's 77 tokens, ViT's 197 and 577) and vocabulary widths that
# take clusters: each row is read from the 16-byte boundary before it, its head and tail masked
SHIFT_WIDTHS = [3, 77, 197, 577, 1001, 4099, 16383, 50257, 128256, 151936]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("length", SHIFT_WIDTHS)
def test_softmax_shifted_rows(nvidia_backend, rng, length, dtype):
    rows = 2 if length > 16384 else 37
    x = rng.uniform(-8, 8, (rows, length)).astype(DTYPES[dtype].numpy)
    x[0, 0] = 12.0  # a row's max in its masked head pack, and one in its tail pack
    x[-1, -1] = 12.0
    _check(nvidia_backend, "softmax", [x], {"axis": -1}, dtype)
    path = _rows_path(length, dtype, rows=rows)
    # the cluster and persistent kernels need a device with clusters (and the H200's SM count) for them
    _launched(nvidia_backend, path, any_device="cluster" not in path and "persist" not in path)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("length", [77, 577, 5000, 50257])
def test_softmax_shifted_rows_strides_and_offsets(nvidia_backend, rng, length, dtype):
    """Odd row strides (a column slice of a buffer one element wider), rows reversed, and inputs and outputs that
    start 3 elements into their buffers (same phase: shifted); an output one element off the input's phase takes the
    generic kernels."""
    base = rng.uniform(-8, 8, (5, length + 1)).astype(DTYPES[dtype].numpy)
    _check(nvidia_backend, "softmax", [base[:, :length]], {"axis": -1}, dtype)
    _check(nvidia_backend, "softmax", [base[::-1, 1:]], {"axis": -1}, dtype)
    _check_offsets(nvidia_backend, rng, "softmax", [(3, length)], {"axis": -1}, dtype, 3, 3, scale=8.0)
    path = _rows_path(length, dtype, packs=False, shift=True)
    _launched(nvidia_backend, path, any_device="cluster" not in path and "persist" not in path)
    _check_offsets(nvidia_backend, rng, "softmax", [(3, length)], {"axis": -1}, dtype, 3, 2, scale=8.0)
    _launched(nvidia_backend, _rows_path(length, dtype, packs=False, shift=False), any_device=True)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("rows, length", [(1, 256000), (1, 50257), (3, 151936), (8, 128256), (1, 20000), (2, 65536)])
def test_softmax_few_rows_spread(nvidia_backend, rng, rows, length, dtype):
    """1-8 rows of a vocabulary: each row spread over up to 16 blocks with fewer packs a thread (one row of 256000
    f32 is 16 blocks of 512 x 8 packs; 16-bit rows take 4, 2 or 1 packs a thread); the max in the last block only."""
    x = rng.uniform(-8, 8, (rows, length)).astype(DTYPES[dtype].numpy)
    x[:, -1] = 14.0
    _check(nvidia_backend, "softmax", [x], {"axis": -1}, dtype)
    _launched(nvidia_backend, _rows_path(length, dtype, rows=rows))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_softmax_rows_switches(nvidia_backend, rng, monkeypatch, dtype):
    """The tune switches reach their alternatives and stay correct: OPRT_NVIDIA_SOFTMAX_SHIFT=0 (odd widths on the
    generic kernels), OPRT_NVIDIA_SOFTMAX_SPREAD=1 (few rows in clusters of up to 8), OPRT_NVIDIA_SOFTMAX_ROWS16=1
    (many rows of 9-16 blocks in clusters of 16), OPRT_NVIDIA_SOFTMAX_CLUSTER_P=4 and _CLUSTER_G=256 (smaller blocks,
    more of them a row), OPRT_NVIDIA_SOFTMAX_RAW16=0 (16-bit rows near 16384 in floats)."""
    np_dtype = DTYPES[dtype].numpy
    monkeypatch.setenv("OPRT_NVIDIA_SOFTMAX_PERSIST", "0")  # the switches below are the launched clusters'
    monkeypatch.setenv("OPRT_NVIDIA_SOFTMAX_SHIFT", "0")
    _check(nvidia_backend, "softmax", [rng.uniform(-8, 8, (9, 577)).astype(np_dtype)], {"axis": -1}, dtype)
    _launched(nvidia_backend, "softmax_rows_group", any_device=True)
    monkeypatch.delenv("OPRT_NVIDIA_SOFTMAX_SHIFT")
    monkeypatch.setenv("OPRT_NVIDIA_SOFTMAX_SPREAD", "1")
    _check(nvidia_backend, "softmax", [rng.uniform(-8, 8, (2, 50257)).astype(np_dtype)], {"axis": -1}, dtype)
    _launched(nvidia_backend, "softmax_rows_fast_cluster_shift")
    monkeypatch.delenv("OPRT_NVIDIA_SOFTMAX_SPREAD")
    monkeypatch.setenv("OPRT_NVIDIA_SOFTMAX_ROWS16", "1")
    _check(nvidia_backend, "softmax", [rng.uniform(-8, 8, (40, 151936)).astype(np_dtype)], {"axis": -1}, dtype)
    _launched(nvidia_backend, "softmax_rows_fast_cluster")
    monkeypatch.delenv("OPRT_NVIDIA_SOFTMAX_ROWS16")
    for name, value in (("OPRT_NVIDIA_SOFTMAX_CLUSTER_P", "4"), ("OPRT_NVIDIA_SOFTMAX_CLUSTER_G", "256")):
        monkeypatch.setenv(name, value)  # 40 rows of 65536: 8 blocks a row (f32), 4 (16-bit)
        x = rng.uniform(-8, 8, (40, 65536)).astype(np_dtype)
        x[::3, 40000] = 15.0
        _check(nvidia_backend, "softmax", [x], {"axis": -1}, dtype)
        _launched(nvidia_backend, "softmax_rows_fast_cluster")
        odd = np.ascontiguousarray(x[:, 3:])  # 65533 wide: shifted rows
        _check(nvidia_backend, "softmax", [odd], {"axis": -1}, dtype)
        _launched(nvidia_backend, "softmax_rows_fast_cluster_shift")
        monkeypatch.delenv(name)
    monkeypatch.setenv("OPRT_NVIDIA_SOFTMAX_RAW16", "0")
    _check(nvidia_backend, "softmax", [rng.uniform(-8, 8, (9, 16000)).astype(np_dtype)], {"axis": -1}, dtype)
    _launched(nvidia_backend, "softmax_rows_fast", any_device=True)


# (rows, width): more rows than co-resident clusters (each cluster takes several rows, both register sets in turn), an
# odd count of rows a cluster, vocabulary widths whole and shifted, rows of 9-16 blocks (f32: the non-portable size)
PERSIST_CASES = [(300, 50257), (257, 65536), (150, 128256), (133, 151936), (70, 256000), (140, 20000)]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("rows, length", PERSIST_CASES)
def test_softmax_persistent_rows(nvidia_backend, rng, monkeypatch, rows, length, dtype):
    """OPRT_NVIDIA_SOFTMAX_PERSIST (on by default, set here too): many long rows on persistent clusters, the next row
    loading while the cluster works on this one; maxima in the first and last block of rows, a row of only -inf
    (NaN), -inf beside the masked head, and in place (out is x)."""
    monkeypatch.setenv("OPRT_NVIDIA_SOFTMAX_PERSIST", "1")
    x = rng.uniform(-8, 8, (rows, length)).astype(np.float32)
    x[0, 0] = 14.0
    x[1, -1] = 14.0
    x[2, :] = -np.inf
    x[3, :7] = -np.inf
    x = x.astype(DTYPES[dtype].numpy)
    _check(nvidia_backend, "softmax", [x], {"axis": -1}, dtype)
    v = 4 if dtype == "f32" else 8
    _launched(nvidia_backend, "softmax_rows_persist" if length % v == 0 else "softmax_rows_persist_shift")
    spec = operators.spec("softmax")
    params = spec.validate_params({"axis": -1})
    both = nvidia_backend.to_device(x)
    nvidia_backend.prepare("softmax", [both], both, params)()
    nvidia_backend.synchronize()
    result = spec.check(nvidia_backend.to_host(both), [x], dtype, params)
    assert result.ok, result.message


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("rows, length", [(40, 65536), (9, 50257), (1, 256000), (3, 151936), (200, 20000)])
def test_softmax_cluster_rows_pushed(nvidia_backend, rng, monkeypatch, rows, length, dtype):
    """OPRT_NVIDIA_SOFTMAX_PUSH=1: the fast cluster rows exchange their (max, sum) by pushes onto mbarriers (clusters of
    2-8 blocks, few rows spread over up to 16, shifted rows, clusters of one block that push nothing); maxima in the
    first and last block, a row of only -inf, -inf beside the masked head."""
    monkeypatch.setenv("OPRT_NVIDIA_SOFTMAX_PUSH", "1")
    monkeypatch.setenv("OPRT_NVIDIA_SOFTMAX_PERSIST", "0")  # the launched clusters (many rows would be persistent)
    x = rng.uniform(-8, 8, (rows, length)).astype(np.float32)
    x[0, 0] = 14.0
    x[-1, -1] = 14.0
    if rows > 2:
        x[1, :] = -np.inf
        x[2, :7] = -np.inf
    _check(nvidia_backend, "softmax", [x.astype(DTYPES[dtype].numpy)], {"axis": -1}, dtype)
    path = _rows_path(length, dtype, rows=rows, persist=False)
    _launched(nvidia_backend, path + "_push" if "fast_cluster" in path else path)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_softmax_shifted_rows_extremes(nvidia_backend, dtype):
    """-inf beside the masked head and tail, a row of only -inf (NaN, as the reference), NaN in one row only."""
    x = np.full((4, 50257), -3.0, np.float32)
    x[0, :5] = -np.inf
    x[0, -5:] = -np.inf
    x[1] = -np.inf
    x[2, 30000] = np.nan
    x[3, 1] = 40.0
    _check(nvidia_backend, "softmax", [x.astype(DTYPES[dtype].numpy)], {"axis": -1}, dtype)


# ---- softmax and reduce_sum: short columns (a leading or middle axis of up to 64 values a thread) -------------

# (shape, axis): 3 channels of an image batch (packs across 224-like inner extents), a middle axis between kept dims
# with an odd inner extent (single elements: 50 columns), the longest short axes (f32 packs 16 rows, 16-bit 8,
# single elements 64) and one past them, an axis with inner dims that merge
SHORT_COLS_CASES = [
    ((8, 3, 24, 40), 1),
    ((7, 50, 9, 50), 1),
    ((6, 16, 96), 1),
    ((6, 8, 96), 1),
    ((5, 64, 33), 1),
    ((5, 65, 33), 1),
    ((3, 48), 0),
]


def _short_cols_path(shape, axis, dtype, op):
    inner = math.prod(shape[axis + 1:])
    v = 4 if dtype == "f32" else 8
    vv = v if inner % v == 0 else 1
    if op == "softmax":
        return ("softmax_cols_short_vec" if vv > 1 else "softmax_cols_short") if shape[axis] * vv <= 64 else None
    return ("reduce_cols_short_vec" if vv > 1 else "reduce_cols_short") if shape[axis] <= 64 else None


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize(
    "shape, axis", SHORT_COLS_CASES, ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v)
)
@pytest.mark.parametrize("op", ["softmax", "reduce_sum"])
def test_short_cols(nvidia_backend, rng, op, shape, axis, dtype):
    x = rng.uniform(-8, 8, shape).astype(DTYPES[dtype].numpy)
    params = {"axis": axis} if op == "softmax" else {"axis": axis, "keepdims": False}
    _check(nvidia_backend, op, [x], params, dtype)
    path = _short_cols_path(shape, axis, dtype, op)
    if path is not None:
        _launched(nvidia_backend, path, any_device=True)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", ["softmax", "reduce_sum"])
def test_short_cols_views_and_extremes(nvidia_backend, rng, monkeypatch, op, dtype):
    """Non-contiguous views over a short middle axis (a sliced inner dim, reversed outer dim, a misaligned start: no
    packs), -inf and NaN in one column, a column of only -inf; and the block kernels under the switches that turn the
    short kernels off (OPRT_NVIDIA_SOFTMAX_SHORT=0, OPRT_NVIDIA_REDUCE_SHORT=0)."""
    params = {"axis": 1} if op == "softmax" else {"axis": 1, "keepdims": False}
    base = rng.uniform(-8, 8, (6, 5, 10, 48)).astype(np.float32)
    base[0, :, 0, 0] = -np.inf
    base[1, 2, 3, 4] = np.nan
    base[2, 0, 1, 2] = -np.inf
    xb = base.astype(DTYPES[dtype].numpy)
    for view in (xb[:, :, :, 8:], xb[::-1, :, 2:, :], xb[:, :, :, 1:41]):
        _check(nvidia_backend, op, [view], params, dtype)
    _check_offsets(nvidia_backend, rng, op, [(4, 6, 40)], params, dtype, 1, 0, scale=8.0)
    _launched(nvidia_backend, "softmax_cols_short" if op == "softmax" else "reduce_cols_short", any_device=True)
    monkeypatch.setenv("OPRT_NVIDIA_SOFTMAX_SHORT" if op == "softmax" else "OPRT_NVIDIA_REDUCE_SHORT", "0")
    _check(nvidia_backend, op, [xb], params, dtype)
    from oprt_nvidia import last_launch

    assert "short" not in last_launch()


# ---- softmax: cluster columns (a leading axis, 16-byte packs across the unit-stride kept dim) -------------------

# (shape, axis): axis lengths around one segment (2048 rows) and several (clusters of up to 8 blocks), the
# longest a cluster takes (16384) and one past it (the generic columns kernel, softmax_cols), partial strips
# (64 columns a strip: 16 lanes of 4 f32, 8 lanes of 8 16-bit), outer dims beside the inner one. In the stash
# kernel each thread keeps its first rows in shared memory (up to 13 of them): short axes are stashed whole, a full
# segment (64 f32 / 32 16-bit rows a thread) in part. Axes of up to 16384 rows take the on-chip kernel by
# default (test_softmax_cluster_cols), the stash kernel under OPRT_NVIDIA_SOFTMAX_COLS=stash.
COLS_CASES = [
    ((1, 64), 0),  # an axis of one row: planned as rows of one element (no columns kernel; _cols_path)
    ((7, 40), 0),
    ((2047, 24), 0),
    ((2048, 16), 0),
    ((2049, 48), 0),
    ((5000, 72), 0),
    ((16384, 16), 0),
    ((16385, 16), 0),
    ((16383, 136), 0),  # a short last segment, a partial third strip
    ((3, 2100, 40), 1),
    ((2100, 3, 40), 0),
    # the on-chip kernel: 32 rows a thread over 32 row lanes, 1024 rows a block, f32 strips of 32
    # columns and 16-bit of 64: one block's rows exactly, one past it, a thread with rows in registers only
    # (<= 16 f32 / 12 16-bit), a cluster of 9 (a non-portable size) with a partial strip
    ((1024, 8), 0),
    ((1025, 8), 0),
    ((300, 72), 0),
    ((9000, 200), 0),
    ((3, 1500, 96), 1),
]


def _cols_path(axis_len, fast, dtype=None):
    """The kernel a COLS_CASES case launches: `fast` up to 16384 rows, the generic columns kernel (softmax_cols)
    past them; an axis of one row is planned as rows of one element (rows that are not whole packs: the shifted
    fast rows kernel; (1, 64) over axis 0 never reaches a columns kernel). dtype (where no columns kernel is
    forced): axes of up to 64 values a thread in 16-byte packs (f32 16 rows, 16-bit 8; every COLS_CASES case has
    packs) take the short columns kernel."""
    if axis_len == 1:
        return "softmax_rows_fast_shift"
    if dtype is not None and axis_len * (4 if dtype == "f32" else 8) <= 64:
        return "softmax_cols_short_vec"
    return fast if axis_len <= 16384 else "softmax_cols"


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize(
    "shape, axis", COLS_CASES, ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v)
)
def test_softmax_cluster_cols(nvidia_backend, rng, shape, axis, dtype):
    x = rng.uniform(-8, 8, shape).astype(DTYPES[dtype].numpy)
    _check(nvidia_backend, "softmax", [x], {"axis": axis}, dtype)
    _launched(nvidia_backend, _cols_path(shape[axis], "softmax_cols_onchip", dtype))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize(
    "shape, axis", COLS_CASES, ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v)
)
def test_softmax_stash_cols(nvidia_backend, rng, monkeypatch, shape, axis, dtype):
    """The stash kernel, which the on-chip kernel falls back to where its clusters do not launch."""
    monkeypatch.setenv("OPRT_NVIDIA_SOFTMAX_COLS", "stash")
    x = rng.uniform(-8, 8, shape).astype(DTYPES[dtype].numpy)
    _check(nvidia_backend, "softmax", [x], {"axis": axis}, dtype)
    _launched(nvidia_backend, _cols_path(shape[axis], "softmax_cols_stash"))


# the columns kernels of an axis of up to 16384 rows: the on-chip kernel in clusters (the default), the same
# kernel without clusters for f32 over more than 8192 rows (OPRT_NVIDIA_SOFTMAX_COLS=group; the f32 fallback
# where the cluster does not launch) and the stash kernel (OPRT_NVIDIA_SOFTMAX_COLS=stash; the fallback
# otherwise)
COLS_KERNELS = ["onchip", "group", "stash"]


def _use_cols_kernel(monkeypatch, kernel):
    if kernel in ("stash", "group"):
        monkeypatch.setenv("OPRT_NVIDIA_SOFTMAX_COLS", kernel)
    else:
        monkeypatch.delenv("OPRT_NVIDIA_SOFTMAX_COLS", raising=False)


# f32 axes of more than 8192 rows: strips of 32 columns, 9 to 16 blocks a strip that wait for
# each other's (max, sum) in the workspace; a strip's blocks are consecutive tickets, in chunks of 2 strips
GROUP_CASES = [
    ((8193, 8), 0),  # 9 blocks of 928 rows, the last of 769
    ((16384, 16), 0),  # 16 full blocks, half a strip
    ((12345, 100), 0),  # 13 blocks, a partial fourth strip
    ((2, 9000, 72), 1),  # an outer dim: 2 x 3 strips
    ((9000, 3, 40), 0),  # inner dims that merge (120 columns)
    ((8500, 4096), 0),  # 128 strips x 9 blocks: more blocks than the device holds at once
]


@pytest.mark.gpu
@pytest.mark.parametrize("cols_kernel", ["onchip", "group"])
@pytest.mark.parametrize(
    "shape, axis", GROUP_CASES, ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v)
)
def test_softmax_group_cols(nvidia_backend, rng, monkeypatch, cols_kernel, shape, axis):
    _use_cols_kernel(monkeypatch, cols_kernel)
    x = rng.uniform(-8, 8, shape).astype(np.float32)
    _check(nvidia_backend, "softmax", [x], {"axis": axis}, "f32")
    _launched(nvidia_backend, f"softmax_cols_{cols_kernel}")


@pytest.mark.gpu
def test_softmax_group_cols_views_and_repeats(nvidia_backend, rng):
    """Sliced and reversed views over a long axis (the workspace is sized from the shape), and one prepared
    launcher run three times on fresh data: the ticket and the slots start over at each launch."""
    base = rng.uniform(-8, 8, (9001, 48)).astype(np.float32)
    _check(nvidia_backend, "softmax", [base[:, :40]], {"axis": 0}, "f32")
    _check(nvidia_backend, "softmax", [base[::-1, 8:]], {"axis": 0}, "f32")
    shape = (10000, 64)
    run = nvidia_backend.prepare(
        "softmax", [nvidia_backend.to_device(np.zeros(shape, np.float32))],
        nvidia_backend.to_device(np.zeros(shape, np.float32)), {"axis": 0})
    assert run.workspace_size > 0
    for _ in range(3):
        xh = rng.uniform(-8, 8, shape).astype(np.float32)
        out = nvidia_backend.to_device(np.full(shape, 7.0, np.float32))
        run.run([nvidia_backend.to_device(xh)], out)
        nvidia_backend.synchronize()
        got = nvidia_backend.to_host(out)
        softmax = operators.spec("softmax")
        result = softmax.check(got, [xh], "f32", softmax.validate_params({"axis": 0}))
        assert result.ok, result.message


@pytest.mark.gpu
@pytest.mark.parametrize("cols_kernel", COLS_KERNELS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_softmax_cluster_cols_extremes_and_views(nvidia_backend, rng, monkeypatch, cols_kernel, dtype):
    """The column max in one block's segment only; a sliced inner dim (row stride != inner extent); a
    misaligned start (the generic columns kernel, softmax_cols)."""
    _use_cols_kernel(monkeypatch, cols_kernel)
    np_dtype = DTYPES[dtype].numpy
    x = np.full((6000, 32), -30.0, np.float32)
    x[4500, :] = 30.0  # third block of the cluster
    x[0, 3] = 40.0  # first block, one column
    x[:, 7] = np.linspace(-30, 30, 6000)
    _check(nvidia_backend, "softmax", [x.astype(np_dtype)], {"axis": 0}, dtype)
    base = rng.uniform(-8, 8, (3000, 48)).astype(np_dtype)
    _check(nvidia_backend, "softmax", [base[:, :40]], {"axis": 0}, dtype)
    _check(nvidia_backend, "softmax", [base[::-1, 8:]], {"axis": 0}, dtype)  # reversed axis
    _check_offsets(nvidia_backend, rng, "softmax", [(3000, 40)], {"axis": 0}, dtype, 1, 0, scale=6.0)


@pytest.mark.gpu
@pytest.mark.parametrize("cols_kernel", COLS_KERNELS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_softmax_cluster_cols_wide_range_and_moving_max(nvidia_backend, rng, monkeypatch, cols_kernel, dtype):
    """Axis 0 over a whole cluster (16384 rows: the on-chip kernel's 16 blocks of 1024, the stash kernel's 8
    of 2048): 16-bit takes its exps through ex2.approx.ftz (exp_t); the stash kernel's pass 1 rescales a
    column's running sum only on trips where some lane of the warp saw its max grow. Strips (64 columns)
    where the max grows on every trip (an ascending column), and strips where it grows on a block's first
    trip only (every column descending: the skip path), one of them with a single late spike, one -inf for
    its first rows; inputs 40 units wide and one column 125 wide (exps that flush to zero below f32's normal
    range)."""
    _use_cols_kernel(monkeypatch, cols_kernel)
    n_rows, n_cols = 16384, 256
    x = rng.uniform(-35.0, 5.0, (n_rows, n_cols)).astype(np.float32)
    x[:, 1] = np.linspace(-35.0, 5.0, n_rows)  # first strip: the max grows on every trip
    x[:, 5] = rng.uniform(-120.0, 5.0, n_rows)  # exps down to e^-125
    x[:, 128:] = np.linspace(5.0, -35.0, n_rows)[:, None] + rng.uniform(0.0, 0.5, (1, n_cols - 128))
    x[15000, 200] = 9.0  # a descending column's max, late in the last block
    x[:3000, 230] = -np.inf  # a descending column that starts with -inf rows
    _check(nvidia_backend, "softmax", [x.astype(DTYPES[dtype].numpy)], {"axis": 0}, dtype)
    # the group launch is f32's (16-bit under OPRT_NVIDIA_SOFTMAX_COLS=group keeps the on-chip clusters)
    _launched(nvidia_backend, f"softmax_cols_{'onchip' if cols_kernel == 'group' and dtype != 'f32' else cols_kernel}")


# (shape, axis, where -inf goes): every softmax path with -inf entries, including runs of them long enough
# that a thread, a pack, a block of a cluster row or a segment of a cluster column sees nothing else (its
# running max still -inf: exp(-inf - -inf) must count as 0, not NaN); no row or column is -inf throughout
NEG_INF_CASES = [
    ((19, 8), -1, np.s_[:, ::3]),  # fast rows, warp groups
    ((19, 128), -1, np.s_[1, :64]),
    ((7, 4096), -1, np.s_[2, :2048]),  # fast block rows
    ((3, 16384), -1, np.s_[0, :8192]),
    ((3, 65536), -1, np.s_[0, :8192]),  # fast cluster rows: -inf in part of the first block
    ((3, 65536), -1, np.s_[0, :16384]),  # ... the first block all -inf (f32: 16384 elements a block)
    ((3, 65536), -1, np.s_[0, :32768]),  # ... (16-bit: 32768 exps a block)
    ((2, 70001), -1, np.s_[1, 32768:65536]),  # a partial cluster row, a middle 16-bit block all -inf
    ((2, 200000), -1, np.s_[0, :50000]),  # f32: online rows, 16-byte packs; 16-bit: a cluster of 7 blocks
    ((2, 140001), -1, np.s_[0, :1000]),  # online rows, elements (maxsum_add)
    ((100, 16), 0, np.s_[0, 0]),  # cluster columns: one thread's only row
    ((6000, 32), 0, np.s_[:2048, 5]),  # cluster columns: a whole segment of a column
    ((3000, 37), 0, np.s_[:10, 3]),  # the older columns kernel (inner not a multiple of a pack)
    ((9000, 40), 0, np.s_[:1000, 3]),  # f32 without clusters: a whole block's segment of a column
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize(
    "shape, axis, where", NEG_INF_CASES, ids=lambda v: str(v) if not isinstance(v, tuple) else None
)
def test_softmax_negative_infinity(nvidia_backend, rng, shape, axis, where, dtype):
    x = rng.uniform(-8, 8, shape).astype(np.float32)
    x[where] = -np.inf
    _check(nvidia_backend, "softmax", [x.astype(DTYPES[dtype].numpy)], {"axis": axis}, dtype)


# (shape, axis, where NaN goes, which output rows / columns must be NaN throughout): a block of a cluster row
# or a segment of a cluster column holding only NaN (with -inf beside it in one case) has a max of -inf
# (fmaxf skips NaN); its NaN sum must still reach the whole row / column, as in numpy and torch
NAN_CASES = [
    ((2, 65536), -1, np.s_[0, :32768], np.s_[0]),  # f32: the first two blocks of 16384; 16-bit: the first block
    ((2, 65536), -1, np.s_[1, 32768:], np.s_[1]),  # the last blocks, merged after finite ones
    ((6000, 32), 0, np.s_[:2048, 5], np.s_[:, 5]),  # cluster columns: a whole segment of a column
    ((16384, 40), 0, np.s_[5000:6024, 5], np.s_[:, 5]),  # f32 without clusters: a block's whole segment
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape, axis, where, nan_out", NAN_CASES, ids=["rows-first", "rows-last", "cols", "cols-long"])
def test_softmax_nan_block_reaches_the_whole_row(nvidia_backend, rng, shape, axis, where, nan_out, dtype):
    x = rng.uniform(-8, 8, shape).astype(np.float32)
    x[where] = np.nan
    if axis == -1:
        x[0, 40000:40100] = -np.inf  # -inf beside finite values elsewhere
    xt = x.astype(DTYPES[dtype].numpy)
    out = nvidia_backend.to_device(np.full(shape, 7.0, DTYPES[dtype].numpy))  # not NaN: the kernel must write it
    nvidia_backend.prepare("softmax", [nvidia_backend.to_device(xt)], out, {"axis": axis})()
    nvidia_backend.synchronize()
    got = nvidia_backend.to_host(out).astype(np.float64)
    assert np.isnan(got[nan_out]).all()
    keep = np.ones(shape, bool)
    keep[nan_out] = False
    rest = got[keep].reshape(-1, shape[-1]) if axis == -1 else got[keep].reshape(shape[0], -1)
    ref_in = xt[keep].reshape(rest.shape)
    softmax = operators.spec("softmax")
    result = softmax.check(rest, [ref_in], dtype, softmax.validate_params({"axis": axis}))
    assert result.ok, result.message


@pytest.mark.gpu
@pytest.mark.parametrize("cols_kernel", COLS_KERNELS)
@pytest.mark.parametrize("special", [np.nan, np.inf], ids=["nan", "posinf"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_softmax_cols_special_beside_negative_infinity(nvidia_backend, rng, monkeypatch, cols_kernel, special, dtype):
    """Axis 0, 100 rows: a thread of 32 row lanes holds rows r, r + 32, r + 64, r + 96. Column 5 is -inf but
    for one NaN / +inf in row 0, so every thread but one sees only -inf; column 12 is finite but for that NaN /
    +inf in row 0 and -inf in the rows of one thread (1, 33, 65, 97). Both must come out NaN throughout
    (numpy: the max is NaN / +inf, the sum NaN). Column 9 is -inf below row 2, so threads that see only -inf
    must write 0 beside a finite sum. 16-bit on-chip keeps exp(x - its thread's max) and scales it after: a
    scale forced to 0 for threads that saw only -inf once wrote 0s into such NaN columns."""
    _use_cols_kernel(monkeypatch, cols_kernel)
    np_dtype = DTYPES[dtype].numpy
    shape = (100, 16)
    x = rng.uniform(-8, 8, shape).astype(np.float32)
    x[1:, 5] = -np.inf
    x[0, 5] = special
    x[2:, 9] = -np.inf
    x[1::32, 12] = -np.inf
    x[0, 12] = special
    xt = x.astype(np_dtype)
    out = nvidia_backend.to_device(np.full(shape, 7.0, np_dtype))  # not NaN: the kernel must write it
    nvidia_backend.prepare("softmax", [nvidia_backend.to_device(xt)], out, {"axis": 0})()
    nvidia_backend.synchronize()
    got = nvidia_backend.to_host(out).astype(np.float64)
    assert np.isnan(got[:, [5, 12]]).all()
    keep = [c for c in range(shape[1]) if c not in (5, 12)]
    assert (got[2:, 9] == 0).all()
    spec = operators.spec("softmax")
    result = spec.check(got[:, keep], [xt[:, keep]], dtype, spec.validate_params({"axis": 0}))
    assert result.ok, result.message


# ---- reduce_sum ------------------------------------------------------------------------------------------


_SPLIT_ROWS = "reduce_rows_vec_ldg+reduce_rows_finish"
_SPLIT_COLS = "reduce_cols_vec+reduce_cols_finish"


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize(
    "shape, axis, path, path16",  # the kernels launched (last_launch) for f32 and for 16-bit (None: the same)
    [
        # one row split into 256 chunks of 16384 (the split is capped by size, ceil(n / kMinChunk), below the 2 waves
        # of blocks it aims for): block-wide finishing pass
        ((1 << 22,), None, _SPLIT_ROWS, None),
        ((3, 300001), -1, _SPLIT_ROWS, None),  # few long rows: split (19 chunks), odd length
        ((512, 8192), -1, "reduce_rows_trips", None),  # a block per row, full trips only
        # a block per row, 8 packs a thread (f32) or 4 (16-bit): a full trip, then a predicated one
        ((300, 9000), -1, "reduce_rows_vec", None),
        # a block per row, one predicated trip; 16-bit rows of up to 16 KB (kWarpRowBytes) a warp
        ((2048, 5000), -1, "reduce_rows_vec", "reduce_rows_vec_warp"),
        # a block per row (4097 > kWarpRowMax; one chunk: rows of at most kMinChunk = 16384 elements are not split),
        # predicated trips; 16-bit: a warp
        ((7, 4097), -1, "reduce_rows_vec", "reduce_rows_vec_warp"),
        # narrow columns split over many chunks (f32: 12, the finishing pass's 8 loads + 4; 16-bit 6)
        ((200003, 8), 0, _SPLIT_COLS, None),
        ((8192, 1024), 0, _SPLIT_COLS, None),  # columns, 16-byte packs, 8 chunks
        # columns, no packs (130 % pack != 0), 19 chunks
        ((20000, 130), 0, "reduce_cols+reduce_cols_finish", None),
        # f32: 1-D column blocks (rows of >= 4096 packs), one chunk; 16-bit: 32 x 8 blocks
        ((600, 16384), 0, "reduce_cols_vec_1d", "reduce_cols_vec"),
        # 1-D column blocks in every dtype: two chunks, a predicated trip, a partial tile
        ((1031, 32776), 0, "reduce_cols_vec_1d+reduce_cols_finish", None),
    ],
)
def test_reduce_paths(nvidia_backend, rng, shape, axis, path, path16, dtype):
    x = rng.uniform(-1, 1, shape).astype(DTYPES[dtype].numpy)
    _check(nvidia_backend, "reduce_sum", [x], {"axis": axis, "keepdims": False}, dtype)
    _launched(nvidia_backend, path16 if path16 and dtype != "f32" else path)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("pad", [0, 8, 1])
def test_reduce_rows_whole_trips(nvidia_backend, rng, pad, dtype):
    """Unsplit rows of whole 8192-element trips (reduce_sum's reduce_rows_trips_kernel: f32 rows of k x 8192 and 16-bit
    rows of exactly 8192 from 16-byte aligned starts; longer 16-bit rows and rows of misaligned starts take the general
    kernel): 2 trips a row,
    a row stride `pad` elements wider (8: aligned; 1: f32 rows start misaligned), the rows reversed, an outer dim
    that does not merge (kept offsets through the indexer)."""
    np_dtype = DTYPES[dtype].numpy
    base = rng.uniform(-1, 1, (37, 16384 + pad)).astype(np_dtype)
    _check(nvidia_backend, "reduce_sum", [base[:, :16384]], {"axis": -1, "keepdims": False}, dtype)
    _check(nvidia_backend, "reduce_sum", [base[::-1, pad:pad + 8192]], {"axis": -1, "keepdims": False}, dtype)
    outer = rng.uniform(-1, 1, (3, 5, 8192 + pad)).astype(np_dtype)[:, :, :8192].transpose(1, 0, 2)
    _check(nvidia_backend, "reduce_sum", [outer], {"axis": 2, "keepdims": False}, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("width", [1000, 8192, 8200])
def test_reduce_rows_tensor_core_sums(nvidia_backend, rng, dtype, width):
    """16-bit rows of exactly 8192 elements from 16-byte aligned starts take reduce_rows_trips_kernel with each pack
    summed across the warp on the tensor cores (reduce_sum.cu, common.cuh warp_pack_sum: one mma a pack, B all ones, a
    quarter of the total taken after); the other widths here take the general kernel beside it: a warp a row (1000)
    and a row stride one element wider than the row (8200 columns of a 8201-wide buffer: row r starts 2r bytes past
    a 16-byte boundary, mod 16). NaN; +inf; +inf beside -inf in one mma (columns 3 and 11: A's row 8 of the warp's
    first mma) and in two warps (columns 3 and the last), NaN both; a row and its negation (0 within the reduction's
    budget); subnormals only (flushed inputs would sum to 0; f16 2^-24 multiples, bf16 2^-133 multiples); random
    rows; against the float64 reference, the output filled with 7 first so that an unwritten row fails."""
    np_dtype = DTYPES[dtype].numpy
    rows = 40
    base = rng.uniform(-1, 1, (rows, width + (1 if width == 8200 else 0))).astype(np.float32)
    x = base[:, :width]
    x[1, 7] = np.nan
    x[2, width // 2] = np.inf
    x[3, 3], x[3, 11] = np.inf, -np.inf
    x[6, 3], x[6, width - 1] = np.inf, -np.inf
    half = width // 2
    x[4, half:2 * half] = -x[4, :half]
    if width % 2:
        x[4, -1] = 0.0
    tiny = 2.0 ** -24 if dtype == "f16" else 2.0 ** -133
    x[5] = tiny * rng.integers(1, 8, width)
    xt = base.astype(np_dtype)[:, :width]
    spec = operators.spec("reduce_sum")
    params = spec.validate_params({"axis": -1, "keepdims": False})
    be = nvidia_backend
    out = be.to_device(np.full((rows,), 7.0, np_dtype))
    xd = be.to_device(xt if width != 8200 else xt.base)
    if width == 8200:
        xd = DeviceArray(be, xd.ptr, (rows, width), (width + 1, 1), xd.dtype_info, owner=xd, cuda_interop=True)
    be.prepare("reduce_sum", [xd], out, params)()
    _launched(be, {1000: "reduce_rows_vec_warp", 8192: "reduce_rows_trips", 8200: "reduce_rows_vec"}[width])
    be.synchronize()
    got = be.to_host(out).astype(np.float64)
    assert np.isnan(got[[1, 3, 6]]).all() and got[2] == np.inf
    exact5 = np.sum(xt[5].astype(np.float64))
    assert exact5 > 0 and abs(got[5] - exact5) <= 2 * DTYPES[dtype].eps * exact5
    keep = [r for r in range(rows) if r not in (1, 2, 3, 6)]
    result = spec.check(be.to_host(out)[keep], [np.ascontiguousarray(xt[keep])], dtype, params)
    assert result.ok, result.message


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("outer", [(), (3,)], ids=["2d", "3d"])
def test_reduce_wide_columns(nvidia_backend, rng, outer, dtype):
    """Rows of >= 2048 packs with >= 512 rows for each of ~2 blocks an SM take 1-D column blocks in long chunks at
    ~1 block an SM, 16 rows in flight a thread (reduce_sum.cu, kColWidePacks, kColWideUnroll): ~540 MB, a partial column
    tile (2050 packs) and a short last chunk; with an outer dim (3, 5501 rows: 4 chunks of 1376 rows on 132 SMs) and
    without (16411 rows: 8 chunks of 2052)."""
    inner = 8200 if dtype == "f32" else 16400
    shape = (*outer, 5501 if outer else 16411, inner)
    x = rng.uniform(-1, 1, shape).astype(DTYPES[dtype].numpy)
    _check(nvidia_backend, "reduce_sum", [x], {"axis": len(outer), "keepdims": False}, dtype)
    _launched(nvidia_backend, "reduce_cols_deep+reduce_cols_finish")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("case", ["full", "partial", "3d", "strided"])
def test_reduce_band_columns(nvidia_backend, rng, case, dtype):
    """Column reductions of >= 128 MiB that the 1-D wide blocks do not take read in band-ordered tiles of 128 rows x
    16 packs and a finishing kernel (reduce_sum.cu, kBandMinBytes; reduce_cols.cuh, reduce_cols_band_kernel): whole
    tiles and bands (8192^2); a partial last band and a partial column tile (f32 8000 x 8200, 16-bit 8257 x 8200:
    2050 / 1025 packs, not a multiple of 16); an outer dim (3 x 2731 x 8200); a row stride wider than the row and the
    rows reversed (a column slice of 8192^2 out of 8192 x 8200). Twice each: the same bits both times (the partial
    sums are added in a fixed order)."""
    np_dtype = DTYPES[dtype].numpy
    rows = 8000 if dtype == "f32" else 8257
    if case == "full":
        x, axis = rng.uniform(-1, 1, (8192, 8192)).astype(np_dtype), 0
    elif case == "partial":
        x, axis = rng.uniform(-1, 1, (rows, 8200)).astype(np_dtype), 0
    elif case == "3d":
        x, axis = rng.uniform(-1, 1, (3, 2731, 8200)).astype(np_dtype), 1
    else:
        x, axis = rng.uniform(-1, 1, (8192, 8200)).astype(np_dtype)[::-1, :8192], 0
    spec = operators.spec("reduce_sum")
    params = spec.validate_params({"axis": axis, "keepdims": False})
    be = nvidia_backend
    xd = be.to_device(np.ascontiguousarray(x) if case != "strided" else x.base)
    if case == "strided":  # the view of the device copy of the whole 8192 x 8200 buffer, as the host view is of x.base
        xd = DeviceArray(be, xd.ptr + 8191 * 8200 * xd.itemsize, (8192, 8192), (-8200, 1), xd.dtype_info, owner=xd,
                         cuda_interop=True)
    results = []
    for _ in range(2):
        out = be.empty(spec.output_shape([x.shape], params), dtype)
        be.fill_nan(out)
        be.prepare("reduce_sum", [xd], out, params)()
        _launched(be, "reduce_cols_band+reduce_cols_band_finish")
        be.synchronize()
        results.append(be.to_host(out))
    result = spec.check(results[0], [np.asarray(x)], dtype, params)
    assert result.ok, result.message
    assert results[0].tobytes() == results[1].tobytes()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape, axis", [(((1 << 20) + 3,), None), ((5, 70001), -1), ((3000, 64), 0)])
@pytest.mark.parametrize("offset", [1, 3])
def test_reduce_paths_misaligned(nvidia_backend, rng, shape, axis, dtype, offset):
    _check_offsets(nvidia_backend, rng, "reduce_sum", [shape], {"axis": axis, "keepdims": False}, dtype, offset, 0)
