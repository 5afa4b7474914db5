// oprt_warp.h: the warp-level primitives of the kernels (xor-butterfly all-reduces over a warp, over groups of
// consecutive lanes and over lanes of a stride; the online (max, sum) pair of softmax; lane arithmetic), written once
// as __host__ __device__ templates over a warp policy. A policy has the lane count kWidth (a power of two) and
// `shfl_xor(v, offset, width)`, the value of lane (lane ^ offset) within segments of `width` lanes. The kernels
// use common.cuh's DeviceWarp (the vendor's shuffle, vendor.h's warp width); tests/oprt_metax/warp_emulation.cpp
// runs the same templates on the host with 32- and 64-lane emulated warps. Plain C++17 besides the qualifier: no
// vendor header, no intrinsic.
#pragma once

#include <math.h>

#if defined(__CUDACC__) || defined(OPRT_VENDOR_MACA)
#define OPRT_HD __host__ __device__ __forceinline__
#else
#define OPRT_HD inline
#endif

namespace oprt_warp {

struct SumOp {
    OPRT_HD float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
    OPRT_HD float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Lane arithmetic of threads in warps of kWidth lanes (a block's thread index t).
template <int kWidth> struct Lanes {
    static_assert(kWidth >= 1 && (kWidth & (kWidth - 1)) == 0, "a power of two");
    static OPRT_HD int lane(int t) { return t % kWidth; }
    static OPRT_HD int warp(int t) { return t / kWidth; }
    static OPRT_HD int warps(int threads) { return (threads + kWidth - 1) / kWidth; }
    // groups of g consecutive lanes (g a power of two <= kWidth): a lane's group within its warp, and its place in it
    static OPRT_HD int group(int t, int g) { return t % kWidth / g; }
    static OPRT_HD int group_lane(int t, int g) { return t % kWidth % g; }
};

// Every lane of each group of kGroup consecutive lanes gets op over its group (kGroup a power of two <= the warp).
#pragma nv_exec_check_disable
template <int kGroup, typename Warp, typename T, typename Op> OPRT_HD T group_allreduce(const Warp &w, T v, Op op) {
    static_assert(kGroup >= 1 && kGroup <= Warp::kWidth && (kGroup & (kGroup - 1)) == 0, "kGroup: a power of two <= the warp");
#pragma unroll
    for (int offset = kGroup / 2; offset > 0; offset >>= 1) v = op(v, w.shfl_xor(v, offset, kGroup));
    return v;
}

// Every lane gets op over the whole warp.
#pragma nv_exec_check_disable
template <typename Warp, typename T, typename Op> OPRT_HD T warp_allreduce(const Warp &w, T v, Op op) {
#pragma unroll
    for (int offset = Warp::kWidth / 2; offset > 0; offset >>= 1) v = op(v, w.shfl_xor(v, offset, Warp::kWidth));
    return v;
}

// Every lane gets op over the lanes of the warp that share its lane % kStride (kStride a power of two <= the warp):
// the columns kernels' row lanes of a column.
#pragma nv_exec_check_disable
template <int kStride, typename Warp, typename T, typename Op> OPRT_HD T strided_allreduce(const Warp &w, T v, Op op) {
    static_assert(kStride >= 1 && kStride <= Warp::kWidth && (kStride & (kStride - 1)) == 0, "a power of two <= the warp");
#pragma unroll
    for (int d = kStride; d < Warp::kWidth; d *= 2) v = op(v, w.shfl_xor(v, d, Warp::kWidth));
    return v;
}

// Online softmax state: running max m and sum s of exp(x - m).
struct MaxSum {
    float m, s;
};
OPRT_HD MaxSum maxsum_combine(MaxSum a, MaxSum b) {
    float m = fmaxf(a.m, b.m);
    float s = (a.s == 0.f ? 0.f : a.s * expf(a.m - m)) + (b.s == 0.f ? 0.f : b.s * expf(b.m - m));
    return {m, s};
}
OPRT_HD MaxSum maxsum_add(MaxSum a, float x) {
    if (x == -INFINITY) return a;  // adds exp(-inf) = 0; computed, it is a NaN while a.m is still -inf
    if (x > a.m) return {x, a.s * expf(a.m - x) + 1.f};
    return {a.m, a.s + expf(x - a.m)};
}
#pragma nv_exec_check_disable
template <typename Warp> OPRT_HD MaxSum warp_allreduce_maxsum(const Warp &w, MaxSum v) {
#pragma unroll
    for (int offset = Warp::kWidth / 2; offset > 0; offset >>= 1) {
        MaxSum o{w.shfl_xor(v.m, offset, Warp::kWidth), w.shfl_xor(v.s, offset, Warp::kWidth)};
        v = maxsum_combine(v, o);
    }
    return v;
}

}  // namespace oprt_warp
