// softmax_rows.cuh: softmax over contiguous, 16-byte aligned rows of a uniform row stride (the common
// case: the last axis of a dense tensor), with the row shape a compile-time configuration.
//
// softmax.cu picks the configuration (fast_rows_config) and falls back to its generic kernels for
// everything else; scripts/tune/tune.cu includes this header to time other configurations of the same
// kernel. Measured on the H200 (results/h200/tune/): the generic group kernel spent ~42 registers on
// index bookkeeping (an Indexer, a row loop, per-pack bounds), which capped occupancy where these rows
// need it most; this kernel has one row per group, no loop and no division, and reaches 96-100% of
// cudaMemcpy on the tuned shapes.
#pragma once

#include "common.cuh"

namespace oprt_nv {

// Row r of x starts at x + r * xrs, of out at out + r * ors (elements; each 16-byte aligned).
struct FastRowsArgs {
    int64_t rows, L, xrs, ors;
};

// Max (kMax) or sum over the G threads of a row: shuffles within a warp for G <= kWarp (groups of G
// consecutive lanes), through shared memory for a block row (G == blockDim.x, a multiple of kWarp).
template <int G, bool kMax> __device__ __forceinline__ float fast_row_reduce(float v, float *smem) {
    constexpr int kLanes = G < kWarp ? G : kWarp;
#pragma unroll
    for (int o = kLanes / 2; o > 0; o >>= 1) {
        const float w = __shfl_xor_sync(kFullMask, v, o, kLanes);
        v = kMax ? fmaxf(v, w) : v + w;
    }
    if constexpr (G > kWarp) {
        if (threadIdx.x % kWarp == 0) smem[threadIdx.x / kWarp] = v;
        __syncthreads();
        v = smem[0];
#pragma unroll
        for (int k = 1; k < G / kWarp; ++k) v = kMax ? fmaxf(v, smem[k]) : v + smem[k];
        __syncthreads();
    }
    return v;
}

// G threads per row, P packs of V elements per thread (a row of up to G * P * V elements, all of it in
// registers between the max, the sum and the scaling: one read, one write), kBlock / G rows per block,
// one row per group. kFull: every row is exactly G * P * V long (no bounds checks). kRaw keeps the
// loaded packs (4 registers per pack in every dtype) and computes exp twice instead of keeping P * V
// floats: for 16-bit rows too long for their floats to fit.
// Groups past the last row (G < kWarp only: they share a warp with live rows) load nothing, take part
// in the shuffles and store nothing.
template <typename T, int G, int P, int kBlock, bool kFull, bool kRaw>
__global__ void __launch_bounds__(kBlock, (kBlock <= 1024 ? 1024 / kBlock : 1))
softmax_fast_rows_kernel(T *__restrict__ out, const T *__restrict__ x, FastRowsArgs a) {
    static_assert(G <= kWarp ? (G & (G - 1)) == 0 : G == kBlock && G % kWarp == 0, "G: lanes of a warp or the block");
    constexpr int V = Pack<T>::N;
    __shared__ float smem[G > kWarp ? G / kWarp : 1];
    const int gl = threadIdx.x % G;
    const int64_t row = (int64_t)blockIdx.x * (kBlock / G) + threadIdx.x / G;
    const bool live = row < a.rows;
    if (G >= kWarp && !live) return;  // a whole warp (or block) past the end: nothing to share with
    // this thread's first element of the row; pack p is p * G * V elements further (a constant offset)
    const T *px = x + (live ? row : 0) * a.xrs + gl * V;
    T *po = out + row * a.ors + gl * V;
    const int64_t rem = a.L - (int64_t)gl * V;  // elements of the row from px on
    auto ok = [&](int p) { return live && (kFull || p * G * V < rem); };

    Pack<T> raw[kRaw ? P : 1];
    float v[kRaw ? 1 : P][V];
    float m = -INFINITY;
#pragma unroll
    for (int p = 0; p < P; ++p) {
        Pack<T> q = ok(p) ? load_pack(px + p * G * V) : zero_pack<T>();
        if constexpr (kRaw) raw[p] = q;
#pragma unroll
        for (int e = 0; e < V; ++e) {
            const float f = ok(p) ? to_f(q.v[e]) : -INFINITY;
            if constexpr (!kRaw) v[p][e] = f;
            m = fmaxf(m, f);
        }
    }
    m = fast_row_reduce<G, true>(m, smem);
    float s = 0.f;
#pragma unroll
    for (int p = 0; p < P; ++p) {
        if (!ok(p)) continue;
#pragma unroll
        for (int e = 0; e < V; ++e) {
            const float ex = expf((kRaw ? to_f(raw[p].v[e]) : v[p][e]) - m);
            if constexpr (!kRaw) v[p][e] = ex;
            s += ex;
        }
    }
    const float inv = 1.f / fast_row_reduce<G, false>(s, smem);
#pragma unroll
    for (int p = 0; p < P; ++p) {
        if (!ok(p)) continue;
        Pack<T> q;
#pragma unroll
        for (int e = 0; e < V; ++e) q.v[e] = from_f<T>((kRaw ? expf(to_f(raw[p].v[e]) - m) : v[p][e]) * inv);
        store_pack(po + p * G * V, q);
    }
}

// Launches one configuration; the grid has a block per kBlock / G rows (the caller checks it fits).
template <typename T, int G, int P, int kBlock, bool kRaw = false>
void launch_fast_rows(cudaStream_t stream, T *out, const T *x, const FastRowsArgs &a) {
    constexpr int64_t kRowsPerBlock = kBlock / G;
    const unsigned grid = (unsigned)((a.rows + kRowsPerBlock - 1) / kRowsPerBlock);
    if (a.L == (int64_t)G * P * Pack<T>::N)
        softmax_fast_rows_kernel<T, G, P, kBlock, true, kRaw><<<grid, kBlock, 0, stream>>>(out, x, a);
    else
        softmax_fast_rows_kernel<T, G, P, kBlock, false, kRaw><<<grid, kBlock, 0, stream>>>(out, x, a);
}

}  // namespace oprt_nv
