// softmax_persist.cuh (tune-only, session 7, never run): softmax over axis 0 with softmax_cols_onchip_kernel's
// on-chip segments in persistent clusters whose next strip's loads overlap the current strip's writes.
//
// Why: the on-chip kernel (68-70% of cudaMemcpy, f32 16384 x 8192) ran at 82% launched without clusters
// (tune-s7-4/5.log): a cluster's blocks wait at the barrier for its slowest block's loads, and the two
// resident blocks an SM leave little to overlap the wait with. Here a grid of as many clusters as fit stays
// resident; cluster c takes strips c, c + clusters, ...; in the write pass each thread, having stored the
// output of a held row, issues the load of the same row of its next strip into the slot it just emptied
// (registers by __ldg, shared memory by cp.async after the store that consumed the slot's value). When the
// block reaches the next barrier its loads have been in flight for a whole write pass.
//
// kStamps: each block adds the clock64() cycles of its exchanges (from the end of its exp pass to the merged
// statistics: the cluster barriers and the merge, which is short), and the cycles of whole strips, to
// stamps[2 * blockIdx.x + {0, 1}] (the wait's share of the time, per block: what step (2) of
// docs/performance.md's "Next" asks).
#pragma once

#include "softmax_cols.cuh"

namespace oprt_kernels {

template <typename T, int kRegRows, int kSmemRows, bool kStamps>
__global__ void __launch_bounds__(256, 2)
softmax_cols_persist_kernel(T *__restrict__ out, const T *__restrict__ x, ColsClusterArgs a, int64_t clusters,
                            unsigned long long *__restrict__ stamps) {
    constexpr int kLanes = 8, kThreads = 256;
    constexpr int V = Pack<T>::N;
    constexpr int W = kLanes * V;
    constexpr int RL = kThreads / kLanes;
    constexpr int kWarps = kThreads / kWarp;
    __shared__ ColsStats<W, kWarps> st;
    extern __shared__ uint4 held[];  // [kSmemRows][kThreads]
    const int t = threadIdx.x, lane = t % kLanes, rl = t / kLanes;
    const int nb = cluster_blocks(), q = cluster_rank();
    const int64_t c0 = (int64_t)blockIdx.x / nb, total = a.strips;  // a single outer index (tune shapes)
    const int64_t r0 = (int64_t)q * a.seg, end = r0 + a.seg < a.L ? r0 + a.seg : a.L;
    const int64_t left = end > r0 + rl ? (end - r0 - rl + RL - 1) / RL : 0;
    const int nrows = left < kRegRows + kSmemRows ? (int)left : kRegRows + kSmemRows;
    const int64_t xstep = RL * a.xs, ostep = RL * a.os;
    auto rows_of = [&](int64_t strip) {  // rows this thread holds of a strip (0 past the inner extent)
        return strip * W + (int64_t)lane * V < a.inner ? nrows : 0;
    };
    auto xptr = [&](int64_t strip) { return x + strip * W + (int64_t)lane * V + (r0 + rl) * a.xs; };
    unsigned long long wait_cycles = 0, strip_cycles = 0;

    uint4 reg[kRegRows];
    int64_t strip = c0;
    int n = strip < total ? rows_of(strip) : 0;
    if (strip < total) {
        const T *px = xptr(strip);
#pragma unroll
        for (int k = 0; k < kRegRows; ++k)
            reg[k] = k < n ? __ldg(reinterpret_cast<const uint4 *>(px + k * xstep)) : make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
        for (int k = 0; k < kSmemRows; ++k)
            if (kRegRows + k < n) cp_async16(&held[k * kThreads + t], px + (kRegRows + k) * xstep);
    }
    for (int it = 0; strip < total; ++it) {
        const unsigned long long s0 = kStamps ? clock64() : 0;
        float m[V], s[V];
#pragma unroll
        for (int e = 0; e < V; ++e) m[e] = -INFINITY, s[e] = 0.f;
#pragma unroll
        for (int k = 0; k < kRegRows; ++k) {
            if (k >= n) break;
            float f[V];
            unpack_floats<T>(reg[k], f);
#pragma unroll
            for (int e = 0; e < V; ++e) m[e] = fmaxf(m[e], f[e]);
        }
        cp_async_wait_all();
#pragma unroll 4
        for (int k = 0; k < kSmemRows; ++k) {
            if (kRegRows + k >= n) break;
            float f[V];
            unpack_floats<T>(held[k * kThreads + t], f);
#pragma unroll
            for (int e = 0; e < V; ++e) m[e] = fmaxf(m[e], f[e]);
        }
        float mu[V];
#pragma unroll
        for (int e = 0; e < V; ++e) mu[e] = m[e] == -INFINITY ? 0.f : m[e];
#pragma unroll
        for (int k = 0; k < kRegRows; ++k) {
            if (k >= n) break;
            float f[V];
            unpack_floats<T>(opaque(reg[k]), f);
#pragma unroll
            for (int e = 0; e < V; ++e) s[e] += exp_t<T>(f[e] - mu[e]);
        }
#pragma unroll 4
        for (int k = 0; k < kSmemRows; ++k) {
            if (kRegRows + k >= n) break;
            float f[V];
            unpack_floats<T>(held[k * kThreads + t], f);
#pragma unroll
            for (int e = 0; e < V; ++e) s[e] += exp_t<T>(f[e] - mu[e]);
        }
        // cols_merge_stats with this loop's split barrier: wait (the previous strip's st.bm / st.bs read by
        // every block) before this strip's are written
        const unsigned long long w0 = kStamps ? clock64() : 0;
        if (it > 0) cluster_wait();
        cols_merge_stats<kLanes, kThreads>(m, s, st, nb);
        if (kStamps) wait_cycles += clock64() - w0;
        cluster_arrive();
        __syncthreads();
        float inv[V];
#pragma unroll
        for (int e = 0; e < V; ++e) {
            m[e] = st.gm[lane * V + e];
            inv[e] = st.gi[lane * V + e];
        }
        // the write pass; each emptied slot takes the same row of the next strip
        const int64_t next = strip + clusters;
        const int nn = next < total ? rows_of(next) : 0;
        T *po = out + strip * W + (int64_t)lane * V + (r0 + rl) * a.os;
        const T *pn = xptr(next < total ? next : strip);
        auto emit = [&](const uint4 &raw, int k) {
            float f[V];
            unpack_floats<T>(raw, f);
            Pack<T> p;
#pragma unroll
            for (int e = 0; e < V; ++e) p.v[e] = from_f<T>(exp_t<T>(f[e] - m[e]) * inv[e]);
            store_pack(po + k * ostep, p);
        };
#pragma unroll
        for (int k = 0; k < kRegRows; ++k) {
            if (k < n) emit(opaque(reg[k]), k);
            if (k < nn) reg[k] = __ldg(reinterpret_cast<const uint4 *>(pn + k * xstep));
        }
#pragma unroll 4
        for (int k = 0; k < kSmemRows; ++k) {
            // the store consumes the slot's value before the cp.async may overwrite it
            if (kRegRows + k < n) emit(held[k * kThreads + t], kRegRows + k);
            if (kRegRows + k < nn) cp_async16(&held[k * kThreads + t], pn + (kRegRows + k) * xstep);
        }
        if (kStamps) strip_cycles += clock64() - s0;
        strip = next;
        n = nn;
    }
    cluster_wait();  // st.bm / st.bs stay alive until every block of the cluster has read them
    if (kStamps && t == 0) {
        atomicAdd(&stamps[2 * blockIdx.x], wait_cycles);
        atomicAdd(&stamps[2 * blockIdx.x + 1], strip_cycles);
    }
}

// Launches the persistent grid: clusters of ceil(L / 1024) blocks (at most 16), `clusters` of them (0: as many
// as cudaOccupancyMaxActiveClusters reports). False where it does not launch (cols_cluster_refusal says why).
template <typename T, int kRegRows, int kSmemRows, bool kStamps>
bool launch_cols_persist(cudaStream_t stream, T *out, const T *x, ColsClusterArgs a, int64_t clusters,
                         unsigned long long *stamps) {
    constexpr int V = Pack<T>::N;
    constexpr int64_t RL = 32, kCap = RL * (kRegRows + kSmemRows);
    const char *&why = cols_cluster_refusal();
    why = "shape or device";
    if (!cluster_launch_supported() || a.inner % V != 0 || a.L < 1) return false;
    const int64_t nb = (a.L + kCap - 1) / kCap;
    if (nb > 16) return false;
    a.seg = (a.L + nb - 1) / nb;
    a.seg = (a.seg + RL - 1) / RL * RL;
    a.strips = (a.inner + 8 * V - 1) / (8 * V);
    auto kernel = softmax_cols_persist_kernel<T, kRegRows, kSmemRows, kStamps>;
    const size_t dyn = (size_t)kSmemRows * 256 * 16;
    static int allowed16[kAttrDevices], allowed[kAttrDevices];
    if (clusters <= 0) {  // as many as fit: asked once (the launches are timed)
        static int64_t most = -1;
        if (most < 0) {
            cudaError_t err = func_attribute_at_least((const void *)kernel,
                                                      cudaFuncAttributeNonPortableClusterSizeAllowed, 1, allowed16);
            if (err == cudaSuccess)
                err = func_attribute_at_least((const void *)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)dyn, allowed);
            cudaLaunchAttribute attr[2];
            const cudaLaunchConfig_t cfg = cluster_config(nb * 64, 256, nb, dyn, nullptr, attr);
            int n = 0;
            if (err == cudaSuccess) err = cudaOccupancyMaxActiveClusters(&n, (const void *)kernel, &cfg);
            if (err != cudaSuccess) {
                (void)cudaGetLastError();
                why = cudaGetErrorString(err);
                return false;
            }
            most = n;
        }
        clusters = most;
    }
    if (clusters < 1) {
        why = "no cluster fits";
        return false;
    }
    if (clusters > a.strips) clusters = a.strips;
    return launch_cols_clusters(kernel, allowed16, allowed, clusters * nb, 256, nb, dyn, stream, out, x, a, clusters,
                                stamps);
}

}  // namespace oprt_kernels
