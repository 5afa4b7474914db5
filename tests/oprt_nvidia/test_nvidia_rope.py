"""rope on the GPU against the float64 reference (skips without a GPU): both kernel paths (16-byte packs, strided)
of both styles in every dtype with i32 and i64 positions, in place, views of a fused qkv buffer, few tokens of many
heads (the head groups), NaN for a position out of range. The case sets' smoke and edge cases run in
test_nvidia_ops.py's test_case_sets."""

from __future__ import annotations

import numpy as np
import pytest

from oprt_core.compiled import DeviceArray
from oprt_core.dtypes import DTYPES
from oprt_core.operators.rope import ROPE_STYLES, rope_case
from oprt_core.operators.rope import SPEC as ROPE


def _run(b, case, dtype, rng, in_place=False):
    inputs = ROPE.make_inputs(case, dtype, rng)
    params = ROPE.validate_params(case.param_dict)
    dev = [b.to_device(x) for x in inputs]
    if in_place:
        outs = (dev[0], dev[1])
    else:
        outs = ROPE.new_outputs(b, [x.shape for x in inputs], params, dtype)
        for o in outs:
            b.fill_nan(o)
    b.prepare("rope", dev, outs, params)()
    b.synchronize()
    return ROPE.check(tuple(b.to_host(o) for o in outs), inputs, dtype, params)


def _path_cases():
    for style in ROPE_STYLES:
        for pos in ("i64", "i32"):
            yield pytest.param(rope_case(37, 32, 8, 128, style, positions=50, pos_dtype=pos), f"rope_{style}_packed",
                               id=f"{style}-{pos}-packed-d128")
            yield pytest.param(rope_case(9, 5, 3, 256, style, pos_dtype=pos), f"rope_{style}_packed",
                               id=f"{style}-{pos}-packed-d256-odd-heads")
            yield pytest.param(rope_case(9, 3, 1, 64, style, pos_dtype=pos, q_layout="offset1"),
                               f"rope_{style}_strided", id=f"{style}-{pos}-strided-misaligned")
            yield pytest.param(rope_case(9, 3, 2, 6, style, pos_dtype=pos), f"rope_{style}_strided",
                               id=f"{style}-{pos}-strided-d6")
            yield pytest.param(rope_case(9, 3, 2, 64, style, pos_dtype=pos, k_layout="transposed",
                                         cs_layout="step2", pos_layout="reversed"),
                               f"rope_{style}_strided", id=f"{style}-{pos}-strided-views")
            yield pytest.param(rope_case(2, 64, 8, 128, style, positions=4096, pos_dtype=pos),
                               f"rope_{style}_packed", id=f"{style}-{pos}-decode-head-groups")


@pytest.mark.gpu
@pytest.mark.parametrize("case, kernel", list(_path_cases()))
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_rope_paths(nvidia_backend, rng, case, kernel, dtype):
    result = _run(nvidia_backend, case, dtype, rng)
    assert result.ok, result.message
    launched = nvidia_backend.last_launch()
    assert launched is None or launched == kernel, launched  # None: a backend that cannot say (metax)


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["contiguous", "offset1"])  # the packed path and the strided one
@pytest.mark.parametrize("style", ROPE_STYLES)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_rope_in_place(nvidia_backend, rng, layout, style, dtype):
    case = rope_case(33, 28, 4, 128, style, positions=64, q_layout=layout, k_layout=layout)
    result = _run(nvidia_backend, case, dtype, rng, in_place=True)
    assert result.ok, result.message


@pytest.mark.gpu
@pytest.mark.parametrize("style", ROPE_STYLES)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_rope_on_views_of_a_fused_qkv_buffer(nvidia_backend, rng, style, dtype):
    """q and k as views of one (T, (Hq + 2 Hk) D) projection, out of place; v is left as it was."""
    b = nvidia_backend
    t, hq, hk, d = 65, 32, 8, 128
    np_dt = DTYPES[dtype].numpy
    qkv = rng.uniform(-1, 1, (t, (hq + 2 * hk) * d)).astype(np_dt)
    q = qkv[:, :hq * d].reshape(t, hq, d)
    k = qkv[:, hq * d:(hq + hk) * d].reshape(t, hk, d)
    cos, sin = (rng.uniform(-1, 1, (100, d // 2)).astype(np_dt) for _ in range(2))
    pos = rng.integers(0, 100, t)
    dqkv = b.to_device(qkv)
    row, item = (hq + 2 * hk) * d, np.dtype(np_dt).itemsize
    dq = DeviceArray(b, dqkv.ptr, (t, hq, d), (row, d, 1), dtype, dqkv)
    dk = DeviceArray(b, dqkv.ptr + hq * d * item, (t, hk, d), (row, d, 1), dtype, dqkv)
    outs = (b.empty(q.shape, dtype), b.empty(k.shape, dtype))
    params = {"style": style}
    b.prepare("rope", [dq, dk, b.to_device(cos), b.to_device(sin), b.to_device(pos)], outs, params)()
    b.synchronize()
    assert b.last_launch() in (None, f"rope_{style}_packed")  # a token stride of 6144 elements stays packable
    result = ROPE.check(tuple(b.to_host(o) for o in outs), [q, k, cos, sin, pos], dtype, params)
    assert result.ok, result.message
    np.testing.assert_array_equal(b.to_host(dqkv), qkv)


@pytest.mark.gpu
@pytest.mark.parametrize("d", [128, 6])  # packed, strided
def test_rope_nan_for_a_position_out_of_range(nvidia_backend, rng, d):
    b = nvidia_backend
    q, k = (rng.uniform(-1, 1, (3, h, d)).astype(np.float32) for h in (4, 2))
    cos, sin = (rng.uniform(-1, 1, (5, d // 2)).astype(np.float32) for _ in range(2))
    outs = (b.empty(q.shape, "f32"), b.empty(k.shape, "f32"))
    b.prepare("rope", [b.to_device(a) for a in (q, k, cos, sin, np.array([1, 5, -1], np.int32))], outs, {})()
    qo, ko = (b.to_host(o) for o in outs)
    assert np.isfinite(qo[0]).all() and np.isfinite(ko[0]).all()
    assert np.isnan(qo[1:]).all() and np.isnan(ko[1:]).all()
