"""matmul on the GPU against the float64 reference (skips without a GPU): the tiled kernel (matmul_tiled, forced by
OPRT_NVIDIA_MATMUL=tiled) in every dtype on odd M, N and K (past and short of the 64 x 64 x 16 tiles), transposed,
stepped and reversed operands, batched products (a transposed weight among them), alpha, K = 0 and an empty output; the
epilogue's beta * c with c in every layout, c given with beta 0 (NaN in it, not read), in place over c and a partial
overlap refused; and, where the library has the CUTLASS sm_90 kernels and the device is sm_90, that they take the
aligned products (the tile configuration docs/matmul.md's rule names; stream-K, swizzle and raster order where the
environment sets them), that everything else falls back to the tiled kernel, and their results, e4m3 among them (K-major
a and b taken, the rest declined); e4m3 inputs with a bf16 out on the tiled kernel (those cases, with c too, the smoke
and edge sets, and the decode of every e4m3 code). The case sets' smoke and edge cases (c among them) of the default
dtypes run in test_nvidia_ops.py's test_case_sets."""

from __future__ import annotations

import numpy as np
import pytest

import oprt_core.errors as E
from oprt_core.device_array import DeviceArray
from oprt_core.dtypes import DTYPES
from oprt_core.operators.matmul import SPEC as MATMUL
from oprt_core.operators.matmul import matmul_case


def _run(b, case, dtype, rng, out_column_major=False):
    inputs = MATMUL.make_inputs(case, dtype, rng)
    params = MATMUL.validate_params(case.param_dict)
    dev = [b.to_device(x) for x in inputs]
    out = MATMUL.new_outputs(b, [x.shape for x in inputs], params, dtype)
    if out_column_major:  # the same shape, the last two dims' strides swapped
        host = np.zeros(out.shape, np.float32).astype(out.dtype)  # out's dtype: bf16 for e4m3 inputs
        out = b.to_device(np.swapaxes(np.ascontiguousarray(np.swapaxes(host, -1, -2)), -1, -2))
    b.fill_nan(out)
    b.prepare("matmul", dev, out, params)()
    b.synchronize()
    return MATMUL.check(b.to_host(out), inputs, dtype, params), b.to_host(out), inputs


_CASES = [
    matmul_case(64, 64, 16),                                       # one tile, one k step
    matmul_case(65, 63, 17),                                       # one past / short of a tile on every dim
    matmul_case(1, 1, 1), matmul_case(1, 300, 77), matmul_case(300, 1, 77),
    matmul_case(129, 200, 1000),                                   # many k steps
    matmul_case(257, 130, 96, a_layout="transposed"),              # a column-major
    matmul_case(257, 130, 96, b_layout="transposed"),              # b column-major (x @ W.T)
    matmul_case(77, 45, 33, a_layout="transposed", b_layout="transposed"),
    matmul_case(41, 39, 70, a_layout="step2", b_layout="reversed"),
    matmul_case(40, 50, 60, a_layout="offset1", b_layout="offset1"),
    matmul_case(33, 71, 45, batch=5),
    matmul_case(70, 31, 129, batch=3, b_layout="transposed", alpha=-0.75),
    matmul_case(17, 19, 23, batch=2, a_layout="transposed", alpha=2.0),
    matmul_case(100, 90, 513, allow_tf32=True),
    # out = alpha * a @ b + beta * c: c in every layout, batched, K = 0 (out = beta * c)
    matmul_case(65, 63, 17, beta=1.0),
    matmul_case(257, 130, 96, b_layout="transposed", c_layout="transposed", alpha=0.5, beta=-1.5),
    matmul_case(41, 39, 70, a_layout="step2", c_layout="step2", beta=0.25),
    matmul_case(40, 50, 60, c_layout="offset1", beta=2.0),
    matmul_case(33, 71, 45, batch=5, c_layout="reversed", alpha=-0.75, beta=0.5),
    matmul_case(70, 31, 129, batch=3, b_layout="transposed", beta=-1.0),
    matmul_case(9, 7, 0, beta=3.0),
]


def _tiled_only(monkeypatch):
    """Every descriptor created from here to the test's end keeps its products on the tiled kernel (the CUTLASS
    kernels, where built, would take the aligned ones)."""
    monkeypatch.setenv("OPRT_NVIDIA_MATMUL", "tiled")


@pytest.mark.gpu
@pytest.mark.parametrize("case", _CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_matmul_tiled(nvidia_backend, monkeypatch, rng, case, dtype):
    _tiled_only(monkeypatch)
    result, got, _ = _run(nvidia_backend, case, dtype, rng)
    assert result.ok, result.message
    assert np.isfinite(got.astype(np.float32)).all()  # every element written over the NaN fill
    launched = nvidia_backend.last_launch()
    assert launched is None or launched == "matmul_tiled", launched  # None: a backend that cannot say (metax)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_matmul_k0_gives_zeros_and_empty_output_launches_nothing(nvidia_backend, rng, dtype):
    result, got, _ = _run(nvidia_backend, matmul_case(9, 7, 0), dtype, rng)
    assert result.ok, result.message
    assert got.shape == (9, 7) and not got.astype(np.float32).any()  # written over the NaN fill: zeros
    result, got, _ = _run(nvidia_backend, matmul_case(0, 7, 5), dtype, rng)
    assert result.ok and got.shape == (0, 7)
    launched = nvidia_backend.last_launch()
    assert launched is None or launched == "none", launched


@pytest.mark.gpu
def test_matmul_wrong_kernel_is_caught(nvidia_backend, monkeypatch, rng):
    """The check these tests rely on fails on a result one product term off (here: alpha applied twice)."""
    _tiled_only(monkeypatch)
    case = matmul_case(65, 63, 17, alpha=0.5)
    result, got, inputs = _run(nvidia_backend, case, "f32", rng)
    assert result.ok, result.message
    assert not MATMUL.check(got * 0.5, inputs, "f32", {"alpha": 0.5}).ok


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_matmul_c_with_beta_zero_is_not_read(nvidia_backend, rng, dtype):
    """c given, beta 0: the kernel does not read it (a NaN there would reach every output element otherwise)."""
    b = nvidia_backend
    case = matmul_case(65, 70, 33, c_layout="contiguous")
    a, w, c = MATMUL.make_inputs(case, dtype, rng)
    c[...] = np.nan
    out = b.empty((65, 70), dtype)
    b.fill_nan(out)
    b.prepare("matmul", [b.to_device(x) for x in (a, w, c)], out, MATMUL.validate_params({}))()
    b.synchronize()
    got = b.to_host(out)
    assert np.isfinite(got.astype(np.float32)).all()
    assert MATMUL.check(got, [a, w], dtype).ok


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_matmul_in_place_over_c_and_partial_overlap_refused(nvidia_backend, rng, dtype):
    """out = c itself (C = A @ B + beta C: each element's c read by the thread that then writes it), over several
    tiles and a transposed c; out one row into c's memory is refused at launch (OPRT_STATUS_OVERLAP)."""
    b = nvidia_backend
    case = matmul_case(130, 70, 40, c_layout="transposed", beta=-0.5)
    a, w, c = MATMUL.make_inputs(case, dtype, rng)
    params = MATMUL.validate_params(case.param_dict)
    da, dw = b.to_device(a), b.to_device(w)
    dc = b.to_device(c)
    assert dc.strides_elements == (1, 130)  # the transposed layout reached the device
    b.prepare("matmul", [da, dw, dc], dc, params)()
    b.synchronize()
    got = b.to_host(dc)
    res = MATMUL.check(got, [a, w, c], dtype, params)
    assert res.ok, res.message
    assert not MATMUL.check(got, [a, w], dtype, {}).ok
    item = DTYPES[dtype].itemsize
    buf = b.empty((131, 70), dtype)
    c_view = DeviceArray(b, buf.ptr, (130, 70), (70, 1), dtype, buf)
    out_view = DeviceArray(b, buf.ptr + 70 * item, (130, 70), (70, 1), dtype, buf)
    with pytest.raises(E.OverlapError, match="matmul: out overlaps input c"):
        b.prepare("matmul", [da, dw, c_view], out_view, params)()


# ---- the CUTLASS sm_90 kernels (operators/matmul/sm90/; built where the build found the CUTLASS headers) --------
# nvidia only: tests/oprt_metax/test_metax_matmul.py leaves out every test_cutlass_* (CUTLASS_TESTS)

@pytest.fixture
def cute_backend(nvidia_backend):
    """The backend, skipping where its library lacks the CUTLASS kernels or the device is not sm_90 (the kernels'
    sm_90a code runs nowhere else: such a device runs the tiled kernel, test_cutlass_falls_back_off_sm90)."""
    archs = nvidia_backend.library_info()["architectures"]
    if "cute sm_90a" not in archs:
        pytest.skip(f"oprt-nvidia was built without the CUTLASS kernels (architectures: {archs}; docs/building.md)")
    props = nvidia_backend.device_properties()
    if (props["compute_major"], props["compute_minor"]) != (9, 0):
        pytest.skip(f"the CUTLASS kernels run on sm_90 only; this device is sm_{props['compute_major']}"
                    f"{props['compute_minor']}")
    return nvidia_backend


def _tile(backend, m, n, batch=1, swapped=False, tf32=False, e4m3=False, copy_b=False):
    """The name docs/matmul.md's rule gives (the kernel's M and N are N and M where out is column-major); copy_b: B
    copied K-major first (TF32, e4m3 with an N-major b)."""
    if swapped:
        m, n = n, m
    sms = backend.device_properties()["sm_count"]
    k = "32" if tf32 else "128" if e4m3 else "64"
    suffix = "_tf32" if tf32 else "_e4m3" if e4m3 else ""
    if m <= 64:
        name = f"cutlass_sm90_64x128x{k}_pingpong{suffix}"
    elif -(-m // 128) * -(-n // 256) * batch >= sms:
        name = "cutlass_sm90_128x128x128_2x1_ws_e4m3" if e4m3 else f"cutlass_sm90_128x256x{k}_ws{suffix}"
    else:
        name = f"cutlass_sm90_128x128x{k}_ws{suffix}"
    return ("matmul_transpose_b+" if copy_b else "") + name


# (case, out column-major): every product here qualifies for the CUTLASS kernels
_CUTE_CASES = [
    (matmul_case(4096, 4096, 1024), False),                                      # large tiles
    (matmul_case(512, 384, 256), False),                                         # mid tiles
    (matmul_case(16, 1024, 512, b_layout="transposed"), False),                  # small M, x @ W.T
    (matmul_case(1, 512, 256, b_layout="transposed"), False),                    # one token
    (matmul_case(200, 136, 72, b_layout="transposed"), False),                   # edges of every tile
    (matmul_case(256, 384, 128, a_layout="transposed", b_layout="transposed"), True),  # out^T = b^T a^T
    (matmul_case(384, 64, 136, b_layout="transposed"), True),
    (matmul_case(96, 264, 520, batch=6, alpha=-0.75), False),                    # batched, alpha
    (matmul_case(64, 2048, 1024, batch=3, b_layout="transposed", alpha=2.0), False),
]


def _case_id(item):
    case, col = item
    return case.name + ("-out_colmajor" if col else "")


@pytest.mark.gpu
@pytest.mark.parametrize("item", _CUTE_CASES, ids=_case_id)
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_cutlass_takes_aligned_products(cute_backend, rng, item, dtype):
    case, col = item
    result, got, inputs = _run(cute_backend, case, dtype, rng, out_column_major=col)
    assert result.ok, result.message
    assert np.isfinite(got.astype(np.float32)).all()
    m, n = inputs[0].shape[-2], inputs[1].shape[-1]
    batch = inputs[0].shape[0] if inputs[0].ndim == 3 else 1
    assert cute_backend.last_launch() == _tile(cute_backend, m, n, batch, swapped=col)


@pytest.mark.gpu
@pytest.mark.parametrize("case", [
    matmul_case(1024, 1024, 512, b_layout="transposed", allow_tf32=True),
    matmul_case(48, 256, 264, b_layout="transposed", allow_tf32=True),
    matmul_case(136, 200, 64, batch=3, b_layout="transposed", allow_tf32=True, alpha=0.5),
], ids=lambda c: c.name)
def test_cutlass_tf32(cute_backend, rng, case):
    result, _, inputs = _run(cute_backend, case, "f32", rng)
    assert result.ok, result.message
    m, n = inputs[0].shape[-2], inputs[1].shape[-1]
    batch = inputs[0].shape[0] if inputs[0].ndim == 3 else 1
    assert cute_backend.last_launch() == _tile(cute_backend, m, n, batch, tf32=True)


@pytest.mark.gpu
@pytest.mark.parametrize("case,dtype", [
    (matmul_case(256, 256, 256), "f32"),                                     # f32 without allow_tf32
    (matmul_case(256, 256, 100), "bf16"),                                    # K not a multiple of 8
    (matmul_case(256, 252, 256), "bf16"),                                    # N not a multiple of 8
    (matmul_case(256, 256, 256, a_layout="transposed"), "bf16"),             # a M-major, out row-major
    (matmul_case(128, 128, 128, a_layout="step2"), "f16"),                   # no unit stride
    (matmul_case(128, 128, 128, b_layout="reversed"), "f16"),                # negative stride
    (matmul_case(128, 128, 128, a_layout="offset1"), "bf16"),                # a 2 bytes past 16-byte alignment
], ids=lambda v: v.name if hasattr(v, "name") else v)
def test_cutlass_falls_back_to_the_tiled_kernel(cute_backend, rng, case, dtype):
    result, _, _ = _run(cute_backend, case, dtype, rng)
    assert result.ok, result.message
    assert cute_backend.last_launch() == "matmul_tiled"


@pytest.mark.gpu
def test_cutlass_falls_back_off_sm90(nvidia_backend, rng):
    """A library with the CUTLASS kernels on a device other than sm_90 runs the tiled kernel (the run-time check)."""
    if "cute sm_90a" not in nvidia_backend.library_info()["architectures"]:
        pytest.skip("oprt-nvidia was built without the CUTLASS kernels")
    props = nvidia_backend.device_properties()
    if (props["compute_major"], props["compute_minor"]) == (9, 0):
        pytest.skip("an sm_90 device: test_cutlass_takes_aligned_products covers it")
    result, _, _ = _run(nvidia_backend, matmul_case(512, 512, 512), "bf16", rng)
    assert result.ok, result.message
    assert nvidia_backend.last_launch() == "matmul_tiled"


# (case, dtype, settings, kernel column suffix): stream-K on the large tile (a fractional last wave: 2.4 waves of
# 128 x 256 tiles on 132 SMs; a long K; b K-major; batched), the swizzle and raster order on every configuration
_SCHEDULER_CASES = [
    (matmul_case(2048, 5120, 1024), "bf16", {"STREAMK": "1"}, "_streamk"),
    (matmul_case(2048, 5120, 4096, b_layout="transposed"), "f16", {"STREAMK": "1"}, "_streamk"),
    (matmul_case(1024, 2048, 520, batch=3, alpha=-0.5, beta=0.75), "bf16", {"STREAMK": "1"}, "_streamk"),
    (matmul_case(4096, 4096, 1024), "bf16", {"SWIZZLE": "8", "RASTER": "m"}, "_swizzle8_rasterM"),
    (matmul_case(512, 384, 256), "f16", {"SWIZZLE": "2", "RASTER": "n"}, "_swizzle2_rasterN"),
    (matmul_case(16, 1024, 512, b_layout="transposed"), "bf16", {"SWIZZLE": "4"}, "_swizzle4"),
    # the 256 x 128 tile in a 1 x 2 cluster (its name replaces the large tile's): a row-major and a K-major b, batched
    (matmul_case(4096, 4096, 1024), "bf16", {"TILE": "256x128"}, "256x128"),
    (matmul_case(2048, 5120, 4096, b_layout="transposed"), "f16", {"TILE": "256x128", "SWIZZLE": "8"},
     "256x128_swizzle8"),
    (matmul_case(1024, 2048, 520, batch=3, beta=0.5), "bf16", {"TILE": "256x128"}, "256x128"),
]


@pytest.mark.gpu
@pytest.mark.parametrize("item", _SCHEDULER_CASES, ids=lambda v: f"{v[0].name}-{v[1]}{v[3]}")
def test_cutlass_scheduler_settings(cute_backend, monkeypatch, rng, item):
    """OPRT_NVIDIA_MATMUL_STREAMK / _SWIZZLE / _RASTER (read when the descriptor is made): the kernel column names
    them, and the results stay within the budget (stream-K's partial sums reduced in the workspace, c and alpha too)."""
    case, dtype, settings, suffix = item
    for name, value in settings.items():
        monkeypatch.setenv(f"OPRT_NVIDIA_MATMUL_{name}", value)
    result, got, inputs = _run(cute_backend, case, dtype, rng)
    assert result.ok, result.message
    assert np.isfinite(got.astype(np.float32)).all()
    m, n = inputs[0].shape[-2], inputs[1].shape[-1]
    batch = inputs[0].shape[0] if inputs[0].ndim == 3 else 1
    if suffix.startswith("256x128"):
        assert cute_backend.last_launch() == "cutlass_sm90_256x128x64_1x2_ws" + suffix[len("256x128"):]
    else:
        assert cute_backend.last_launch() == _tile(cute_backend, m, n, batch) + suffix


@pytest.mark.gpu
def test_cutlass_can_be_turned_off(cute_backend, monkeypatch, rng):
    _tiled_only(monkeypatch)
    result, _, _ = _run(cute_backend, matmul_case(512, 512, 512), "bf16", rng)
    assert result.ok, result.message
    assert cute_backend.last_launch() == "matmul_tiled"


@pytest.mark.gpu
def test_cutlass_wrong_result_is_caught(cute_backend, rng):
    """The check these tests rely on fails on the CUTLASS kernel's result with alpha applied twice."""
    case = matmul_case(256, 256, 256, alpha=0.5)
    result, got, inputs = _run(cute_backend, case, "bf16", rng)
    assert result.ok, result.message
    assert cute_backend.last_launch().startswith("cutlass_sm90_")
    assert not MATMUL.check((got.astype(np.float32) * 0.5).astype(got.dtype), inputs, "bf16", {"alpha": 0.5}).ok


# (case, out column-major): e4m3 a and b, both K-major (x @ W.T), which the CUTLASS e4m3 kernels take
_CUTE_E4M3_CASES = [
    (matmul_case(4096, 4096, 1024, b_layout="transposed"), False),               # large configuration
    (matmul_case(512, 384, 256, b_layout="transposed"), False),                  # mid
    (matmul_case(16, 1024, 512, b_layout="transposed"), False),                  # small M
    (matmul_case(1, 512, 256, b_layout="transposed"), False),                    # one token
    (matmul_case(200, 264, 272, b_layout="transposed"), False),                  # edges of every tile, N % 16 = 8
    (matmul_case(384, 64, 144, b_layout="transposed"), True),                    # out^T = b^T a^T: both K-major
    (matmul_case(96, 256, 512, batch=4, b_layout="transposed", alpha=-0.75), False),
    (matmul_case(300, 512, 1024, b_layout="transposed", c_layout="contiguous", alpha=0.5, beta=-1.5), False),
]


@pytest.mark.gpu
@pytest.mark.parametrize("item", _CUTE_E4M3_CASES, ids=_case_id)
def test_cutlass_takes_k_major_e4m3(cute_backend, rng, item):
    """e4m3 a and b (a bf16 out) with K-major a and b run on fp8 tensor cores, within the e4m3 budget."""
    case, col = item
    result, got, inputs = _run(cute_backend, case, "e4m3", rng, out_column_major=col)
    assert result.ok, result.message
    assert got.dtype.name == "bfloat16" and np.isfinite(got.astype(np.float32)).all()
    m, n = inputs[0].shape[-2], inputs[1].shape[-1]
    batch = inputs[0].shape[0] if inputs[0].ndim == 3 else 1
    assert cute_backend.last_launch() == _tile(cute_backend, m, n, batch, swapped=col, e4m3=True)


# (case, dtype, out column-major): TF32 and e4m3 products with an N-major b in the kernel's view, which the kernel
# reads through a K-major copy of b in the workspace
_COPY_B_CASES = [
    (matmul_case(512, 384, 256), "e4m3", False),                             # b N-major (x @ W)
    (matmul_case(96, 264, 512, batch=6), "e4m3", False),                     # ... batched; N not a multiple of 16
    (matmul_case(4096, 4096, 1024), "e4m3", False),                          # the large tile
    (matmul_case(16, 1024, 512), "e4m3", False),                             # small M
    (matmul_case(130, 96, 64, b_layout="offset1"), "e4m3", False),           # b 1 byte past 16-byte alignment
    (matmul_case(256, 384, 128, a_layout="transposed", b_layout="transposed"), "e4m3", True),  # its B is a^T
    (matmul_case(256, 256, 256, allow_tf32=True), "f32", False),             # TF32
    (matmul_case(136, 200, 64, batch=3, allow_tf32=True, alpha=0.5), "f32", False),
]


@pytest.mark.gpu
@pytest.mark.parametrize("item", _COPY_B_CASES, ids=lambda v: f"{v[0].name}-{v[1]}" + ("-out_colmajor" if v[2] else ""))
def test_cutlass_reads_an_n_major_b_through_its_k_major_copy(cute_backend, rng, item):
    """TF32 and fp8 WGMMA read both operands K-major: an N-major b is copied transposed into the workspace at each
    launch, and the result is the product's, within the budget."""
    case, dtype, col = item
    result, got, inputs = _run(cute_backend, case, dtype, rng, out_column_major=col)
    assert result.ok, result.message
    m, n = inputs[0].shape[-2], inputs[1].shape[-1]
    batch = inputs[0].shape[0] if inputs[0].ndim == 3 else 1
    assert cute_backend.last_launch() == _tile(cute_backend, m, n, batch, swapped=col, tf32=dtype == "f32",
                                               e4m3=dtype == "e4m3", copy_b=True)


@pytest.mark.gpu
@pytest.mark.parametrize("case", [
    matmul_case(96, 256, 512, batch=4, b_layout="broadcast0"),               # b broadcast over the batch
    matmul_case(256, 256, 136, b_layout="transposed"),                       # K not a multiple of 16
    matmul_case(256, 252, 256, b_layout="transposed"),                       # N not a multiple of 8
    matmul_case(256, 256, 256, a_layout="transposed", b_layout="transposed"),  # a M-major, out row-major
    matmul_case(128, 128, 128, a_layout="offset1", b_layout="transposed"),   # a 1 byte past 16-byte alignment
], ids=lambda c: c.name)
def test_cutlass_declines_other_e4m3(cute_backend, rng, case):
    """Every other e4m3 product runs on the tiled kernel (fp8 WGMMA reads both operands K-major; TMA's alignment)."""
    result, _, _ = _run(cute_backend, case, "e4m3", rng)
    assert result.ok, result.message
    assert cute_backend.last_launch() == "matmul_tiled"


@pytest.mark.gpu
def test_cutlass_e4m3_wrong_result_is_caught(cute_backend, rng):
    """The e4m3 budget refuses the CUTLASS e4m3 kernel's result with alpha applied twice."""
    case = matmul_case(256, 256, 256, b_layout="transposed", alpha=0.5)
    result, got, inputs = _run(cute_backend, case, "e4m3", rng)
    assert result.ok, result.message
    assert cute_backend.last_launch().endswith("_e4m3")
    assert not MATMUL.check((got.astype(np.float32) * 0.5).astype(got.dtype), inputs, "e4m3", {"alpha": 0.5}).ok


CUTLASS_TESTS = tuple(name for name in list(globals()) if name.startswith("test_cutlass_"))


# -- fp8: e4m3 a and b, a bf16 out (and c); the loads decoded to f32 (cuda_fp8.h on NVIDIA, a bit decode on MetaX) --

@pytest.mark.gpu
@pytest.mark.parametrize("case", [*_CASES, matmul_case(37, 29, 41, beta=0.5), matmul_case(9, 11, 13, batch=3,
                                                                                            c_layout="transposed",
                                                                                            beta=-1.0)],
                         ids=lambda c: c.name)
def test_matmul_tiled_e4m3(nvidia_backend, monkeypatch, rng, case):
    _tiled_only(monkeypatch)
    result, got, _ = _run(nvidia_backend, case, "e4m3", rng)
    assert result.ok, result.message
    assert got.dtype.name == "bfloat16" and np.isfinite(got.astype(np.float32)).all()
    launched = nvidia_backend.last_launch()
    assert launched is None or launched == "matmul_tiled", launched


@pytest.mark.gpu
@pytest.mark.parametrize("case_set", ["smoke", "edge"])
def test_matmul_case_sets_e4m3(nvidia_backend, case_set):
    for case in MATMUL.cases(case_set):
        result, _, _ = _run(nvidia_backend, case, "e4m3", np.random.default_rng(33))
        assert result.ok, f"{case}: {result.message}"


@pytest.mark.gpu
def test_matmul_e4m3_decodes_every_finite_code_exactly(nvidia_backend):
    """a holds each finite e4m3 code (NaN 0x7f and 0xff aside), b = 1: out is each value exactly (e4m3 is a subset
    of bf16), subnormals and +-448 among them; a wrong result here is the decode, not the sum."""
    import ml_dtypes

    b = nvidia_backend
    codes = np.array([c for c in range(256) if c & 0x7F != 0x7F], np.uint8)
    a = codes.view(ml_dtypes.float8_e4m3fn).reshape(-1, 1)
    one = np.ones((1, 1), ml_dtypes.float8_e4m3fn)
    out = b.empty((codes.size, 1), "bf16")
    b.prepare("matmul", [b.to_device(a), b.to_device(one)], out, {})()
    b.synchronize()
    got = b.to_host(out).astype(np.float64).ravel()
    assert np.array_equal(got, a.astype(np.float64).ravel())
    assert got.max() == 448.0 and got.min() == -448.0 and got[1] == 2.0 ** -9
