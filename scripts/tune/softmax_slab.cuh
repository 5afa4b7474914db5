// softmax_slab.cuh (tune-only, session 8): softmax over axis 0 in two passes whose second read is meant to
// hit L2: the columns are cut into slabs small enough to stay in L2 (f32 16384 rows x 128 columns = 8 MB)
// and a persistent grid works through
//   pass A of slab s: tiles of B rows x one 128-byte strip, each writing per-column (max, sum of exps) of
//                     its rows to a partials array and counting itself done for slab s;
//   pass B of slab s: the same tiles again, once every pass-A tile of slab s is done: the strip's partials
//                     merged, the tile re-read (from L2, if the slab is still there) and written.
// Work items are taken in order from one counter: pass A of slab g interleaved with pass B of slab g - lag,
// so each slab's statistics are complete (usually long since) when its pass B starts, and DRAM sees pass A's
// reads beside pass B's writes. A pass-B tile issues its loads before it waits. No deadlock: a pass-B tile
// waits only on pass-A tiles taken before it, which wait on nothing.
//
// Why: every on-chip design so far holds a strip's whole column on chip and waits at the cluster exchange
// for the slowest of 16 blocks (session 8: 40% of a block's cycles); the no-cluster diagnostics ran at 82%
// (strip order) and 90% (band order). Here nothing waits on a sibling while holding data: a slab's tiles are
// independent until pass B, whose data L2 holds instead of the SMs. DRAM bytes: one read, one write, if
// the slabs stay in L2 (the L2 re-read and the partials, 8 bytes a column a band, are extra L2 traffic).
#pragma once

#include "softmax_cols.cuh"

namespace oprt_kernels {

struct SlabArgs {
    int64_t L, N;       // rows (the reduced axis), columns (x's and out's row pitch, in elements)
    int S, B, lag;      // columns of a slab, rows of a band, slab groups between pass A and pass B of a slab
    int slabs, strips, bands;  // N / S, S / W, ceil(L / B)
    unsigned tiles;     // strips * bands: tiles of a slab in one pass
    unsigned *ctr;      // [0]: the next work item; [1 + s]: slab s's finished pass-A tiles (zeroed by the host)
    float2 *part;       // [slab][strip][band][W]: (max, sum of exp(x - max)) of a tile's columns
};

// kK rows a thread (B = 32 * kK); kHintA: pass A loads evict_last; kHintB: pass B loads and stores
// evict_first.
template <typename T, int kK, bool kHintA, bool kHintB>
__global__ void __launch_bounds__(256, 2) softmax_slab_kernel(T *__restrict__ out, const T *__restrict__ x, SlabArgs a) {
    constexpr int kLanes = 8, kThreads = 256, RL = kThreads / kLanes, kWarps = kThreads / kWarp;
    constexpr int V = Pack<T>::N, W = kLanes * V;
    constexpr int G = kThreads / W;  // groups of W threads merging partials (f32 8, 16-bit 4)
    __shared__ float wm[kWarps][W], ws[kWarps][W];
    __shared__ float gm[W], gi[W];
    __shared__ unsigned s_item;
    const int t = threadIdx.x, lane = t % kLanes, rl = t / kLanes;
    const unsigned total = 2u * (unsigned)a.slabs * a.tiles;
    const unsigned lead = (unsigned)a.lag * a.tiles, mid = (unsigned)(a.slabs - a.lag) * 2u * a.tiles;
    const uint64_t pol_last = kHintA ? l2_policy(true) : 0, pol_first = kHintB ? l2_policy(false) : 0;
    for (;;) {
        if (t == 0) s_item = atomicAdd(&a.ctr[0], 1u);
        __syncthreads();
        const unsigned item = s_item;
        __syncthreads();
        if (item >= total) break;
        bool passB;
        int slab;
        unsigned tile;
        if (item < lead) {
            passB = false, slab = (int)(item / a.tiles), tile = item % a.tiles;
        } else if (item - lead < mid) {
            const unsigned i = item - lead, g = (unsigned)a.lag + i / (2u * a.tiles), r = i % (2u * a.tiles);
            passB = r & 1u, tile = r / 2u, slab = passB ? (int)g - a.lag : (int)g;
        } else {
            const unsigned i = item - lead - mid;
            passB = true, slab = a.slabs - a.lag + (int)(i / a.tiles), tile = i % a.tiles;
        }
        const int strip = (int)(tile % (unsigned)a.strips), band = (int)(tile / (unsigned)a.strips);
        const int64_t col = (int64_t)slab * a.S + (int64_t)strip * W + (int64_t)lane * V;
        const int64_t r0 = (int64_t)band * a.B + rl;
        const T *px = x + r0 * a.N + col;
        uint4 raw[kK];
#pragma unroll
        for (int k = 0; k < kK; ++k) {
            const bool ok = r0 + (int64_t)k * RL < a.L;
            const T *p = px + (int64_t)k * RL * a.N;
            raw[k] = !ok ? make_uint4(0u, 0u, 0u, 0u)
                     : (!passB && kHintA) ? ld_policy(p, pol_last)
                     : (passB && kHintB)  ? ld_policy(p, pol_first)
                                          : __ldg(reinterpret_cast<const uint4 *>(p));
        }
        float2 *pp = a.part + ((int64_t)slab * a.strips + strip) * a.bands * W;  // [band][W]
        if (!passB) {
            float m[V], s[V];
#pragma unroll
            for (int e = 0; e < V; ++e) m[e] = -INFINITY, s[e] = 0.f;
#pragma unroll
            for (int k = 0; k < kK; ++k) {
                if (r0 + (int64_t)k * RL >= a.L) break;
                float f[V];
                unpack_floats<T>(raw[k], f);
#pragma unroll
                for (int e = 0; e < V; ++e) m[e] = fmaxf(m[e], f[e]);
            }
            float mu[V];
#pragma unroll
            for (int e = 0; e < V; ++e) mu[e] = m[e] == -INFINITY ? 0.f : m[e];
#pragma unroll
            for (int k = 0; k < kK; ++k) {
                if (r0 + (int64_t)k * RL >= a.L) break;
                float f[V];
                unpack_floats<T>(raw[k], f);
#pragma unroll
                for (int e = 0; e < V; ++e) s[e] += exp_t<T>(f[e] - mu[e]);
            }
#pragma unroll
            for (int d = kLanes; d < kWarp; d *= 2)
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    const float m2 = __shfl_xor_sync(kFullMask, m[e], d), s2 = __shfl_xor_sync(kFullMask, s[e], d);
                    maxsum_merge(m[e], s[e], m2, s2);
                }
            if (t % kWarp < kLanes)
#pragma unroll
                for (int e = 0; e < V; ++e) wm[t / kWarp][lane * V + e] = m[e], ws[t / kWarp][lane * V + e] = s[e];
            __syncthreads();
            if (t < W) {
                float cm = -INFINITY, cs = 0.f;
#pragma unroll
                for (int w = 0; w < kWarps; ++w) maxsum_merge(cm, cs, wm[w][t], ws[w][t]);
                __stcg(&pp[(int64_t)band * W + t], make_float2(cm, cs));
                __threadfence();
            }
            __syncthreads();
            if (t == 0) atomicAdd(&a.ctr[1 + slab], 1u);
        } else {
            if (t == 0) {
                while (*(volatile unsigned *)&a.ctr[1 + slab] < a.tiles) __nanosleep(64);
                __threadfence();
            }
            __syncthreads();
            {
                const int c = t % W, g = t / W;
                float cm = -INFINITY, cs = 0.f;
                for (int b0 = g; b0 < a.bands; b0 += 4 * G) {
                    float2 v[4];
#pragma unroll
                    for (int u = 0; u < 4; ++u) {
                        const int b = b0 + u * G;
                        v[u] = b < a.bands ? __ldcg(&pp[(int64_t)b * W + c]) : make_float2(-INFINITY, 0.f);
                    }
#pragma unroll
                    for (int u = 0; u < 4; ++u) maxsum_merge(cm, cs, v[u].x, v[u].y);
                }
                wm[g][c] = cm, ws[g][c] = cs;  // G <= kWarps
            }
            __syncthreads();
            if (t < W) {
                float cm = -INFINITY, cs = 0.f;
#pragma unroll
                for (int g = 0; g < G; ++g) maxsum_merge(cm, cs, wm[g][t], ws[g][t]);
                gm[t] = cm, gi[t] = 1.f / cs;
            }
            __syncthreads();
            float M[V], inv[V];
#pragma unroll
            for (int e = 0; e < V; ++e) M[e] = gm[lane * V + e], inv[e] = gi[lane * V + e];
            T *po = out + r0 * a.N + col;
#pragma unroll
            for (int k = 0; k < kK; ++k) {
                if (r0 + (int64_t)k * RL >= a.L) break;
                float f[V];
                unpack_floats<T>(raw[k], f);
                Pack<T> p;
#pragma unroll
                for (int e = 0; e < V; ++e) p.v[e] = from_f<T>(exp_t<T>(f[e] - M[e]) * inv[e]);
                if constexpr (kHintB) st_policy(po + (int64_t)k * RL * a.N, p, pol_first);
                else store_pack(po + (int64_t)k * RL * a.N, p);
            }
        }
    }
}

// Launches one configuration on a 2-D [L][N] tensor (N % S == 0, S % W == 0); scratch: a caller-owned
// buffer of at least slab_scratch_bytes() bytes. False where the shape does not fit these rules.
inline size_t slab_scratch_bytes(int64_t L, int64_t N, int B) {
    const int64_t bands = (L + B - 1) / B;
    return 4096 + (size_t)(N * bands) * sizeof(float2);
}
template <typename T, int kK, bool kHintA, bool kHintB>
bool launch_softmax_slab(cudaStream_t stream, T *out, const T *x, int64_t L, int64_t N, int S, int lag, void *scratch) {
    constexpr int W = 8 * Pack<T>::N, B = 32 * kK;
    if (S % W != 0 || N % S != 0 || lag < 1 || N / S < lag || N / S > 1000) return false;
    SlabArgs a{};
    a.L = L, a.N = N, a.S = S, a.B = B, a.lag = lag;
    a.slabs = (int)(N / S), a.strips = S / W, a.bands = (int)((L + B - 1) / B);
    a.tiles = (unsigned)a.strips * (unsigned)a.bands;
    a.ctr = static_cast<unsigned *>(scratch);
    a.part = reinterpret_cast<float2 *>(static_cast<char *>(scratch) + 4096);
    auto kernel = softmax_slab_kernel<T, kK, kHintA, kHintB>;
    static int grid = 0;
    if (grid == 0) {
        int dev = 0, sms = 0, per = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, 256, 0);
        grid = sms * (per > 0 ? per : 1);
    }
    if (cudaMemsetAsync(a.ctr, 0, sizeof(unsigned) * (1 + a.slabs), stream) != cudaSuccess) return false;
    kernel<<<grid, 256, 0, stream>>>(out, x, a);
    return cudaGetLastError() == cudaSuccess;
}

}  // namespace oprt_kernels
