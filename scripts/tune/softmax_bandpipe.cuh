// softmax_bandpipe.cuh: an EXPERIMENT for issue 6 (softmax over axis 0), timed by tune.cu only; not part of
// the library. Written at the end of session 5, after its last device call: compiled, never run.
//
// Session 5's bands experiment (softmax_bands.cuh) kept a persistent grid and paid ~10 us a band in
// in-kernel barriers. Here kernel boundaries are the barriers: x and out are L x N row-major (N contiguous,
// 16-byte packs), cut into bands of kLanes packs of columns (kLanes x 16 bytes of every row). Launch i
//   stats(band i):     every block reads its chunk of rows of band i from DRAM (loads evict_last), makes a
//                      (max, sum) per column, the cluster's blocks merge theirs through distributed shared
//                      memory and block 0 writes the cluster's partials; the last cluster to finish (an
//                      arrival counter per band) merges every cluster's partials into (max, 1 / sum);
//   apply(band i - 1): every block reads its chunk of band i - 1 again (from L2: two bands of L x kLanes x
//                      16 bytes are in flight, 2 x 16 MB at 16384 rows and 64 packs) and writes
//                      exp(x - max) / sum (loads and stores evict_first).
// Launches 0 and B (B bands) do only one of the two. DRAM sees one read and one write of the data; what
// the boundaries cost is the question (B + 1 launches). kPdl launches each kernel with programmatic
// dependent launch: a launch's stats part does not depend on the previous launch and may start while it
// drains; `griddepcontrol.wait` comes before the apply part (which reads the previous launch's statistics).
// (tune.cu launches on the legacy default stream; if pdl true and false time the same, try a created
// stream.) A review (a helper reading the code) found no correctness bug; its performance points are in:
// the grid is one wave of clusters (cudaOccupancyMaxActiveClusters), and the statistics rescale only where
// a warp's max grew, as the library's columns kernel does.
// Partials and statistics have a slot per band (a few MB at most), so a launch that starts early never
// overwrites what an earlier one still reads.
#pragma once

#include "softmax_cols.cuh"

namespace oprt_kernels {

constexpr int kPipeCluster = 8;  // blocks a cluster

struct PipeArgs {
    int64_t L, N;              // rows (the softmax axis), columns (N % V == 0)
    int64_t chunk;             // rows of a block: ceil(L / gridDim.x)
    int64_t stat_band;         // band whose statistics this launch takes (-1: none)
    int64_t apply_band;        // band this launch writes (-1: none)
    int clusters;              // gridDim.x / kPipeCluster
    float *part_m, *part_s;    // [bands][clusters][W]
    float *fin_m, *fin_inv;    // [bands][W]
    unsigned *count;           // [bands], zero before launch 0
};

__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void grid_dependents_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

template <typename T, int kLanes, int kThreads, int kUnroll, bool kPdl>
__global__ void __launch_bounds__(kThreads, 1024 / kThreads)
softmax_bandpipe_kernel(T *__restrict__ out, const T *__restrict__ x, PipeArgs a) {
    constexpr int V = Pack<T>::N;
    constexpr int W = kLanes * V;          // columns of a band
    constexpr int RL = kThreads / kLanes;  // row lanes
    static_assert(kThreads % kLanes == 0 && kLanes % kWarp == 0, "whole warps across a band row");
    __shared__ float sm[RL][W], ss[RL][W];  // per row lane partials; row 0 ends as the block's
    __shared__ int last;
    const int t = threadIdx.x, lane = t % kLanes, rl = t / kLanes;
    const int64_t r0 = (int64_t)blockIdx.x * a.chunk, r1 = r0 + a.chunk < a.L ? r0 + a.chunk : a.L;
    const int cl = (int)(blockIdx.x / kPipeCluster);
    const uint64_t pol_last = l2_policy(true), pol_first = l2_policy(false);

    if (a.stat_band >= 0) {
        const int64_t b = a.stat_band, col = b * W + (int64_t)lane * V;
        const bool live = col < a.N;
        const T *px = x + col;
        float m[V], s[V];
#pragma unroll
        for (int e = 0; e < V; ++e) m[e] = -INFINITY, s[e] = 0.f;
        for (int64_t r = r0 + rl; r < r1; r += (int64_t)RL * kUnroll) {
            uint4 raw[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int64_t row = r + (int64_t)u * RL;
                raw[u] = live && row < r1 ? ld_policy(px + row * a.N, pol_last) : make_uint4(0u, 0u, 0u, 0u);
            }
            // as softmax_cols_cluster_kernel's pass 1: the running sum is rescaled only where some lane of
            // the warp saw its max grow (warp-uniform), the exps taken against the running max (0 while a
            // column has seen only -inf)
            float tmax[V];
#pragma unroll
            for (int e = 0; e < V; ++e) tmax[e] = -INFINITY;
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                if (!(live && r + (int64_t)u * RL < r1)) continue;
                float f[V];
                unpack_floats<T>(raw[u], f);
#pragma unroll
                for (int e = 0; e < V; ++e) tmax[e] = fmaxf(tmax[e], f[e]);
            }
            bool grow = false;
#pragma unroll
            for (int e = 0; e < V; ++e) grow |= tmax[e] > m[e];
            if (__any_sync(kFullMask, grow)) {
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    const float mn = fmaxf(m[e], tmax[e]);
                    if (mn == -INFINITY) continue;
                    s[e] = s[e] == 0.f ? 0.f : s[e] * exp_t<T>(m[e] - mn);
                    m[e] = mn;
                }
            }
            float mu[V];
#pragma unroll
            for (int e = 0; e < V; ++e) mu[e] = m[e] == -INFINITY ? 0.f : m[e];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                if (!(live && r + (int64_t)u * RL < r1)) continue;
                float f[V];
                unpack_floats<T>(opaque(raw[u]), f);
#pragma unroll
                for (int e = 0; e < V; ++e) s[e] += exp_t<T>(f[e] - mu[e]);
            }
        }
#pragma unroll
        for (int e = 0; e < V; ++e) sm[rl][lane * V + e] = m[e], ss[rl][lane * V + e] = s[e];
        __syncthreads();
        for (int c = t; c < W; c += kThreads) {
            float cm = -INFINITY, cs = 0.f;
            for (int q = 0; q < RL; ++q) maxsum_merge(cm, cs, sm[q][c], ss[q][c]);
            sm[0][c] = cm;
            ss[0][c] = cs;
        }
        cluster_sync();  // every block's row 0 is final and visible to the cluster
        const int64_t slot = b;
        if (cluster_rank() == 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
            cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
            for (int c = t; c < W; c += kThreads) {
                float cm = -INFINITY, cs = 0.f;
                for (int q = 0; q < kPipeCluster; ++q)
                    maxsum_merge(cm, cs, *cluster.map_shared_rank(&sm[0][c], q), *cluster.map_shared_rank(&ss[0][c], q));
                const int64_t i = (slot * a.clusters + cl) * W + c;
                a.part_m[i] = cm;
                a.part_s[i] = cs;
            }
#endif
        }
        cluster_sync();  // the other blocks' shared memory stays until block 0 has read it
        if (cluster_rank() == 0) {
            // the last cluster of the band to arrive merges every cluster's partials
            __threadfence();
            __syncthreads();
            if (t == 0) last = atomicAdd(&a.count[b], 1u) == (unsigned)a.clusters - 1;
            __syncthreads();
            if (last) {
                __threadfence();
                for (int c = t; c < W; c += kThreads) {
                    float cm = -INFINITY, cs = 0.f;
                    for (int q = 0; q < a.clusters; ++q) {
                        const int64_t i = (slot * a.clusters + q) * W + c;
                        maxsum_merge(cm, cs, __ldcg(&a.part_m[i]), __ldcg(&a.part_s[i]));
                    }
                    a.fin_m[slot * W + c] = cm;
                    a.fin_inv[slot * W + c] = 1.f / cs;
                }
            }
        }
    }
    if constexpr (kPdl) grid_dependents_launch();

    if (a.apply_band >= 0) {
        if constexpr (kPdl) grid_dependency_wait();  // the previous launch (band apply_band's statistics) is done
        const int64_t b = a.apply_band, col = b * W + (int64_t)lane * V;
        if (col >= a.N) return;
        const int64_t slot = b;
        float fm[V], fi[V];
#pragma unroll
        for (int e = 0; e < V; ++e) {
            fm[e] = __ldcg(&a.fin_m[slot * W + lane * V + e]);
            fi[e] = __ldcg(&a.fin_inv[slot * W + lane * V + e]);
        }
        const T *px = x + col;
        T *po = out + col;
        for (int64_t r = r0 + rl; r < r1; r += (int64_t)RL * kUnroll) {
            uint4 raw[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int64_t row = r + (int64_t)u * RL;
                raw[u] = row < r1 ? ld_policy(px + row * a.N, pol_first) : make_uint4(0u, 0u, 0u, 0u);
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int64_t row = r + (int64_t)u * RL;
                if (row >= r1) continue;
                float f[V], o[V];
                unpack_floats<T>(raw[u], f);
#pragma unroll
                for (int e = 0; e < V; ++e) o[e] = exp_t<T>(f[e] - fm[e]) * fi[e];
                const uint4 q = pack_floats<T>(o);
                Pack<T> p;
                memcpy(&p, &q, 16);
                st_policy(po + row * a.N, p, pol_first);
            }
        }
    }
}

// Workspace bytes for a grid of `grid` blocks over N columns.
template <typename T, int kLanes>
size_t bandpipe_workspace(int grid, int64_t N) {
    constexpr int W = kLanes * Pack<T>::N;
    const int64_t bands = (N + W - 1) / W;
    return sizeof(float) * (2 * (size_t)bands * (grid / kPipeCluster) * W + 2 * (size_t)bands * W) +
           sizeof(unsigned) * (size_t)bands;
}

// The whole softmax: a memset of the arrival counters, then bands + 1 launches. `ws` holds
// bandpipe_workspace() bytes. False (the error cleared) where the device or the shape refuses.
template <typename T, int kLanes, int kThreads, int kUnroll, bool kPdl>
bool launch_bandpipe(cudaStream_t stream, T *out, const T *x, int64_t L, int64_t N, void *ws, size_t ws_bytes) {
    constexpr int V = Pack<T>::N;
    constexpr int W = kLanes * V;
    auto kernel = softmax_bandpipe_kernel<T, kLanes, kThreads, kUnroll, kPdl>;
    if (N % V != 0 || L < 1 || !cluster_launch_supported()) return false;
    static int built = 0;
    if (!kernel_built_for_sm90((const void *)kernel, built)) return false;
    // one wave of clusters: what the device can hold at once (clusters stay inside a GPC, whose SM counts
    // differ), at most (1024 / kThreads) blocks an SM
    int grid = (1024 / kThreads) * device_limits().sm_count;
    {
        cudaLaunchConfig_t occ = {};
        occ.gridDim = dim3((unsigned)grid, 1, 1);
        occ.blockDim = dim3(kThreads, 1, 1);
        cudaLaunchAttribute ca[1];
        ca[0].id = cudaLaunchAttributeClusterDimension;
        ca[0].val.clusterDim.x = kPipeCluster;
        ca[0].val.clusterDim.y = 1;
        ca[0].val.clusterDim.z = 1;
        occ.attrs = ca;
        occ.numAttrs = 1;
        int clusters = 0;
        if (cudaOccupancyMaxActiveClusters(&clusters, (const void *)kernel, &occ) == cudaSuccess && clusters > 0 &&
            clusters * kPipeCluster < grid)
            grid = clusters * kPipeCluster;
        (void)cudaGetLastError();
    }
    grid -= grid % kPipeCluster;
    if (grid < kPipeCluster) return false;
    PipeArgs a{};
    a.L = L;
    a.N = N;
    a.chunk = (L + grid - 1) / grid;
    a.clusters = grid / kPipeCluster;
    const int64_t bands = (N + W - 1) / W;
    if (bandpipe_workspace<T, kLanes>(grid, N) > ws_bytes) return false;
    float *f = static_cast<float *>(ws);
    a.part_m = f;
    a.part_s = a.part_m + (size_t)bands * a.clusters * W;
    a.fin_m = a.part_s + (size_t)bands * a.clusters * W;
    a.fin_inv = a.fin_m + (size_t)bands * W;
    a.count = reinterpret_cast<unsigned *>(a.fin_inv + (size_t)bands * W);
    if (cudaMemsetAsync(a.count, 0, sizeof(unsigned) * (size_t)bands, stream) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    for (int64_t i = 0; i <= bands; ++i) {
        a.stat_band = i < bands ? i : -1;
        a.apply_band = i - 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3((unsigned)grid, 1, 1);
        cfg.blockDim = dim3(kThreads, 1, 1);
        cfg.stream = stream;
        cudaLaunchAttribute attr[2];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = kPipeCluster;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[1].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = attr;
        cfg.numAttrs = kPdl && i > 0 ? 2 : 1;
        if (cudaLaunchKernelEx(&cfg, kernel, out, x, a) != cudaSuccess) {
            (void)cudaGetLastError();
            return false;
        }
    }
    return true;
}

}  // namespace oprt_kernels
