// rope.cu: oprt.h's rope (entry points from oprt_entry.h around a plan and a launch).
//
// A thread per (token, unit of pairs, group of heads): it reads the token's position and the unit's cos / sin once
// and rotates that unit in every head of its group, q's heads then k's (the groups split a token's Hq + Hk heads
// only where tokens x units alone would not fill the GPU: decoding a few tokens). cos and sin are thus read once
// per token and group from DRAM / L2, q and k once each.
//  - packed (rope_kernel<T, S, true>): every element stride 1, every other stride a multiple of the pack and every
//    base 16-byte aligned, D/2 a multiple of the pack: a unit is one 16-byte pack of pairs (8 of f16/bf16, 4 of
//    f32). neox: the pack at i and the pack at i + D/2 of each head; gptj: the two packs at 2i (its pairs
//    interleaved). One pack of cos and one of sin a thread.
//  - strided (rope_kernel<T, S, false>): any strides, a unit is one pair, scalar loads.
// Each thread reads a pair's elements before it writes them and no other thread touches them: in place
// (q_out == q, k_out == k) is safe. A position outside [0, P) writes NaN for its token (no cos / sin is read).
#include "common.cuh"
#include "oprt_entry.h"

using namespace oprt_kernels;

namespace {

struct RopeArgs {
    int64_t t, hq, hk, d, p;
    int64_t units;   // units of pairs per head (packs or pairs)
    int64_t groups;  // groups of heads per token
    int64_t hpg;     // heads per group
    int32_t pos_i32;
    int64_t qs[3], ks[3], qos[3], kos[3], cs[2], ss[2], ps;
};

__device__ __forceinline__ float rope_nan() { return __uint_as_float(0x7fc00000u); }

template <typename T, int S, bool kPacked>
__global__ void __launch_bounds__(kBlock)
rope_kernel(T *qo, T *ko, const T *q, const T *k, const T *cos, const T *sin, const void *positions, RopeArgs a) {
    const int64_t total = a.t * a.units * a.groups;
    for (int64_t g = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; g < total; g += (int64_t)gridDim.x * blockDim.x) {
        const int64_t unit = g % a.units, rest = g / a.units;
        const int64_t grp = rest % a.groups, t = rest / a.groups;
        const int64_t pos = a.pos_i32 ? (int64_t) static_cast<const int32_t *>(positions)[t * a.ps]
                                      : static_cast<const int64_t *>(positions)[t * a.ps];
        const bool valid = pos >= 0 && pos < a.p;
        const int64_t h0 = grp * a.hpg;
        const int64_t h1 = h0 + a.hpg < a.hq + a.hk ? h0 + a.hpg : a.hq + a.hk;
        const int64_t half = a.d / 2;
        if constexpr (kPacked) {
            constexpr int V = Pack<T>::N;
            const int64_t i0 = unit * V;
            float c[V], s[V];
            if (valid) {
                pack_to_f(load_pack(cos + pos * a.cs[0] + i0), c);
                pack_to_f(load_pack(sin + pos * a.ss[0] + i0), s);
            } else {
#pragma unroll
                for (int e = 0; e < V; ++e) c[e] = s[e] = rope_nan();
            }
            for (int64_t h = h0; h < h1; ++h) {
                const bool isq = h < a.hq;
                const int64_t hh = isq ? h : h - a.hq;
                const T *x = isq ? q + t * a.qs[0] + hh * a.qs[1] : k + t * a.ks[0] + hh * a.ks[1];
                T *o = isq ? qo + t * a.qos[0] + hh * a.qos[1] : ko + t * a.kos[0] + hh * a.kos[1];
                // neox: x1 the pack at i0, x2 at i0 + D/2; gptj: the packs at 2 i0 and 2 i0 + V, pairs interleaved
                const int64_t at1 = S == OPRT_ROPE_NEOX ? i0 : 2 * i0, at2 = S == OPRT_ROPE_NEOX ? i0 + half : 2 * i0 + V;
                float f1[V], f2[V], r1[V], r2[V];
                pack_to_f(load_pack(x + at1), f1);
                pack_to_f(load_pack(x + at2), f2);
#pragma unroll
                for (int j = 0; j < V; ++j) {
                    float x1, x2;
                    if constexpr (S == OPRT_ROPE_NEOX) {
                        x1 = f1[j];
                        x2 = f2[j];
                    } else {
                        x1 = j < V / 2 ? f1[2 * j] : f2[2 * j - V];
                        x2 = j < V / 2 ? f1[2 * j + 1] : f2[2 * j + 1 - V];
                    }
                    const float y1 = x1 * c[j] - x2 * s[j], y2 = x2 * c[j] + x1 * s[j];
                    if constexpr (S == OPRT_ROPE_NEOX) {
                        r1[j] = y1;
                        r2[j] = y2;
                    } else if (j < V / 2) {
                        r1[2 * j] = y1;
                        r1[2 * j + 1] = y2;
                    } else {
                        r2[2 * j - V] = y1;
                        r2[2 * j + 1 - V] = y2;
                    }
                }
                Pack<T> p1, p2;
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    p1.v[e] = from_f<T>(r1[e]);
                    p2.v[e] = from_f<T>(r2[e]);
                }
                store_pack(o + at1, p1);
                store_pack(o + at2, p2);
            }
        } else {
            const int64_t i = unit;
            const float c = valid ? to_f(cos[pos * a.cs[0] + i * a.cs[1]]) : rope_nan();
            const float s = valid ? to_f(sin[pos * a.ss[0] + i * a.ss[1]]) : rope_nan();
            const int64_t e1 = S == OPRT_ROPE_NEOX ? i : 2 * i, e2 = S == OPRT_ROPE_NEOX ? i + half : 2 * i + 1;
            for (int64_t h = h0; h < h1; ++h) {
                const bool isq = h < a.hq;
                const int64_t hh = isq ? h : h - a.hq;
                const int64_t *xs = isq ? a.qs : a.ks, *os = isq ? a.qos : a.kos;
                const T *x = (isq ? q : k) + t * xs[0] + hh * xs[1];
                T *o = (isq ? qo : ko) + t * os[0] + hh * os[1];
                const float x1 = to_f(x[e1 * xs[2]]), x2 = to_f(x[e2 * xs[2]]);
                o[e1 * os[2]] = from_f<T>(x1 * c - x2 * s);
                o[e2 * os[2]] = from_f<T>(x2 * c + x1 * s);
            }
        }
    }
}

struct RopeState {
    oprt_rope_plan_t plan;
};

template <typename T> bool rope_packable(const oprt_rope_plan_t *p, const void *const *ptrs) {
    constexpr int V = Pack<T>::N;
    if ((p->d / 2) % V != 0) return false;
    for (int i = 0; i < 6; ++i)
        if (!aligned16(ptrs[i])) return false;
    const int64_t *s3[4] = {p->q_strides, p->k_strides, p->qo_strides, p->ko_strides};
    for (int k = 0; k < 4; ++k)
        if (s3[k][2] != 1 || s3[k][0] % V != 0 || s3[k][1] % V != 0) return false;
    const int64_t *s2[2] = {p->cos_strides, p->sin_strides};
    for (int k = 0; k < 2; ++k)
        if (s2[k][1] != 1 || s2[k][0] % V != 0) return false;
    return true;
}

template <typename T, int S>
oprt_status_t launch_rope_style(const oprt_rope_plan_t *p, void *qo, void *ko, const void *q, const void *k,
                                const void *cos, const void *sin, const void *pos, gpuStream_t stream) {
    const void *ptrs[6] = {qo, ko, q, k, cos, sin};
    const bool packed = rope_packable<T>(p, ptrs);
    RopeArgs a{};
    a.t = p->t;
    a.hq = p->hq;
    a.hk = p->hk;
    a.d = p->d;
    a.p = p->p;
    a.units = packed ? p->d / 2 / Pack<T>::N : p->d / 2;
    const int64_t heads = p->hq + p->hk;
    // groups of heads: enough threads to fill the GPU (~2^18: 132 SMs x 2048) where tokens x units fall short
    constexpr int64_t kFill = int64_t(1) << 18;
    const int64_t base = p->t * a.units;
    int64_t groups = base >= kFill ? 1 : (kFill + base - 1) / base;
    if (groups > heads) groups = heads;
    a.hpg = (heads + groups - 1) / groups;
    a.groups = (heads + a.hpg - 1) / a.hpg;
    a.pos_i32 = p->pos_dtype == OPRT_DTYPE_I32;
    for (int i = 0; i < 3; ++i) {
        a.qs[i] = p->q_strides[i];
        a.ks[i] = p->k_strides[i];
        a.qos[i] = p->qo_strides[i];
        a.kos[i] = p->ko_strides[i];
    }
    for (int i = 0; i < 2; ++i) {
        a.cs[i] = p->cos_strides[i];
        a.ss[i] = p->sin_strides[i];
    }
    a.ps = p->pos_stride;
    const unsigned grid = grid_all(p->t * a.units * a.groups, kBlock);
    T *o1 = static_cast<T *>(qo), *o2 = static_cast<T *>(ko);
    const T *x1 = static_cast<const T *>(q), *x2 = static_cast<const T *>(k);
    const T *c = static_cast<const T *>(cos), *s = static_cast<const T *>(sin);
    if (packed) {
        note_launch(S == OPRT_ROPE_NEOX ? "rope_neox_packed" : "rope_gptj_packed");
        rope_kernel<T, S, true><<<grid, kBlock, 0, stream>>>(o1, o2, x1, x2, c, s, pos, a);
    } else {
        note_launch(S == OPRT_ROPE_NEOX ? "rope_neox_strided" : "rope_gptj_strided");
        rope_kernel<T, S, false><<<grid, kBlock, 0, stream>>>(o1, o2, x1, x2, c, s, pos, a);
    }
    return check_launch("rope kernel");
}

oprt_status_t plan_rope(RopeState *s, size_t *workspace, const oprt_tensor_desc_t *q_out,
                        const oprt_tensor_desc_t *k_out, const oprt_tensor_desc_t *q, const oprt_tensor_desc_t *k,
                        const oprt_tensor_desc_t *cos, const oprt_tensor_desc_t *sin,
                        const oprt_tensor_desc_t *positions, int32_t style) {
    *workspace = 0;
    return oprt_plan_rope(&s->plan, q_out, k_out, q, k, cos, sin, positions, style);
}

oprt_status_t run_rope(const RopeState *s, void *, void *q_out, void *k_out, const void *q, const void *k,
                       const void *cos, const void *sin, const void *positions, oprt_stream_t stream) {
    const oprt_rope_plan_t *p = &s->plan;
    if (p->t == 0 || p->hq + p->hk == 0) {
        note_launch("none");
        return OPRT_STATUS_SUCCESS;
    }
    return dispatch_dtype(p->dtype, [&](auto tag) {
        using T = decltype(tag);
        return p->style == OPRT_ROPE_NEOX
                   ? launch_rope_style<T, OPRT_ROPE_NEOX>(p, q_out, k_out, q, k, cos, sin, positions,
                                                         (gpuStream_t)stream)
                   : launch_rope_style<T, OPRT_ROPE_GPTJ>(p, q_out, k_out, q, k, cos, sin, positions,
                                                         (gpuStream_t)stream);
    });
}

}  // namespace

extern "C" {
OPRT_DEFINE_OP(rope, RopeState, plan_rope, run_rope)
}  // extern "C"
