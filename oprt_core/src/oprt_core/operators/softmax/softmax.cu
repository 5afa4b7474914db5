// softmax.cu: oprt.h's softmax (entry points from oprt_entry.h around a plan and a launch), numerically stable (the
// row max is subtracted; expf, not __expf, except the fast rows and axis-0 cluster kernels' 16-bit outputs: exp_t in
// softmax_rows.cuh).
//
// The layout is canonicalised (layout.cuh) into the softmax axis and the kept dims, then:
//  - fast rows (softmax_rows.cuh): unit-stride axis, at most one kept dim (one row stride), 16-byte aligned
//    rows: a row per G threads with the whole row in registers (one read, one write), up to 16384 elements;
//    longer rows in cluster mode (sm_90: a thread-block cluster of up to 8 blocks a row, maxima and sums
//    exchanged through distributed shared memory); many such rows on persistent clusters that load a row while
//    they work on the one before (OPRT_NVIDIA_SOFTMAX_PERSIST=0: launched clusters);
//  - rows held in registers (generic): other unit-stride or strided rows that fit: a warp per row up to
//    1024 elements, a 512-thread block per row up to 16384;
//  - cluster rows (sm_90, generic): aligned rows of up to kClusterMax x 16384 elements the fast kernels
//    do not take (several kept dims, or longer than their clusters reach);
//  - online rows: longer rows (or no cluster launch): a block per row, pass 1 keeps a running (max, sum)
//    per thread (one read), combined across the block; pass 2 re-reads the row (from L2) and writes;
//  - cols: the axis is strided and a kept dim has unit stride (softmax over a leading axis): with 16-byte
//    packs and an axis of up to 16 x 1024 rows the on-chip kernel (softmax_cols.cuh: the axis split across
//    a cluster of up to 16 blocks, each holding its segment in registers and shared memory: one read), or
//    where its cluster does not launch the stash kernel (clusters of up to 8 x 2048 rows, the second sweep
//    from L2); otherwise (longer axes, no 16-byte packs) threads across that dim, blockDim.y rows in
//    flight, an online (max, sum) per column combined in shared memory, then a second sweep that writes,
//    in reverse order so its first reads hit L2.
// The cluster paths (fast cluster rows, cluster rows, the on-chip, group and stash column kernels) need
// OPRT_HAS_CLUSTERS (the column kernels OPRT_HAS_PTX as well: OPRT_COLS_CLUSTERS); without them the same cases take
// the block kernels (online rows, the generic columns kernel).
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "layout.cuh"
#include "oprt_entry.h"
#include "softmax_cols.cuh"
#include "softmax_rows.cuh"

using namespace oprt_kernels;

namespace {

struct RowsArgs {
    int64_t rows, L, xs, os;
    Indexer<2> kept;  // row -> x offset (0), out offset (1)
};

// An integer tune switch read at each launch (so that one process can compare values): `dflt` where unset.
int env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

constexpr int kWarpRowMax = 1024;
// Block rows: 512 threads and 2 blocks per SM (64 registers a thread), up to 32 values a thread (on the H200, f32
// 32768x4096: 99% of cudaMemcpy, where 1024 threads x 16 values reached 81%).
constexpr int kBlockRowThreads = 512;
constexpr int kBlockRowMinBlocks = 2;
constexpr int kRegsRowMax = 16384;  // kBlockRowThreads * kMaxValues
constexpr int kOnlineThreads = 512;

template <bool kWarpGroup> __device__ __forceinline__ float group_max(float v, float *smem) {
    return kWarpGroup ? warp_reduce(v, MaxOp{}) : block_reduce(v, MaxOp{}, -INFINITY, smem);
}
template <bool kWarpGroup> __device__ __forceinline__ float group_sum(float v, float *smem) {
    return kWarpGroup ? warp_reduce(v, SumOp{}) : block_reduce(v, SumOp{}, 0.f, smem);
}

// A row per warp (kWarpGroup) or per block, kSlots slots of VV elements per thread kept in registers.
template <typename T, bool kVec, int kSlots, bool kWarpGroup>
__global__ void __launch_bounds__(kWarpGroup ? kBlock : kBlockRowThreads, kWarpGroup || !kVec ? 1 : kBlockRowMinBlocks)
softmax_rows_regs_kernel(T *__restrict__ out, const T *__restrict__ x, RowsArgs a) {
    constexpr int VV = kVec ? Pack<T>::N : 1;
    __shared__ float smem[kMaxThreadsPerBlock / kWarp];
    const int lanes = kWarpGroup ? kWarp : blockDim.x;
    const int lane = kWarpGroup ? threadIdx.x % kWarp : threadIdx.x;
    const int64_t per_block = kWarpGroup ? blockDim.x / kWarp : 1;
    const int64_t first = (int64_t)blockIdx.x * per_block + (kWarpGroup ? threadIdx.x / kWarp : 0);
    for (int64_t row = first; row < a.rows; row += (int64_t)gridDim.x * per_block) {
        int64_t off[2];
        a.kept.offsets(row, off);
        const T *px = x + off[0];
        T *po = out + off[1];
        float v[kSlots][VV];
        float m = -INFINITY;
#pragma unroll
        for (int j = 0; j < kSlots; ++j) {
            const int64_t base = ((int64_t)j * lanes + lane) * VV;
            if (kVec) {
                if (base < a.L) {
                    Pack<T> p = load_pack(px + base);
#pragma unroll
                    for (int e = 0; e < VV; ++e) v[j][e] = to_f(p.v[e]);
                } else {
#pragma unroll
                    for (int e = 0; e < VV; ++e) v[j][e] = -INFINITY;
                }
            } else {
                v[j][0] = base < a.L ? to_f(px[base * a.xs]) : -INFINITY;
            }
#pragma unroll
            for (int e = 0; e < VV; ++e) m = fmaxf(m, v[j][e]);
        }
        m = group_max<kWarpGroup>(m, smem);
        float s = 0.f;
#pragma unroll
        for (int j = 0; j < kSlots; ++j) {
            const int64_t base = ((int64_t)j * lanes + lane) * VV;
#pragma unroll
            for (int e = 0; e < VV; ++e) {
                float ex = base < a.L ? expf(v[j][e] - m) : 0.f;
                v[j][e] = ex;
                s += ex;
            }
        }
        s = group_sum<kWarpGroup>(s, smem);
        const float inv = 1.f / s;
#pragma unroll
        for (int j = 0; j < kSlots; ++j) {
            const int64_t base = ((int64_t)j * lanes + lane) * VV;
            if (base >= a.L) continue;
            if (kVec) {
                Pack<T> p;
#pragma unroll
                for (int e = 0; e < VV; ++e) p.v[e] = from_f<T>(v[j][e] * inv);
                store_pack(po + base, p);
            } else {
                po[base * a.os] = from_f<T>(v[j][0] * inv);
            }
        }
    }
}

// Reduces over groups of kGroup consecutive lanes (kGroup a power of two <= kWarp); every lane of a group
// gets its group's result. Called by all lanes of the warp.
template <int kGroup, typename Op> __device__ __forceinline__ float group_reduce(float v, Op op) {
    return oprt_warp::group_allreduce<kGroup>(DeviceWarp{}, v, op);
}

// Rows of up to kWarp * kSlots * VV elements: kGroup lanes per row, kWarp / kGroup rows per warp, so every
// lane of a short row loads a full 16-byte pack (a 128-element f16 row: 16 lanes, 2 rows per warp). The
// row loop runs the same number of trips on every lane of a warp (the shuffles need the whole warp); a
// group past the last row works on an empty row and writes nothing.
// Resident blocks of kBlock a group kernel must allow: these rows are short, so each thread has only its
// slots' bytes in flight and occupancy is what hides the latency. Without a bound the 1-slot f32 kernel
// took 42 registers (5 blocks an SM) and softmax 524288x128 reached 75% of cudaMemcpy, where a
// 30-register version of the same kernel reached 99.6% (H200).
template <typename T, bool kVec, int kSlots> constexpr int group_min_blocks() {
    return kSlots * (kVec ? Pack<T>::N : 1) <= 8 ? 8 : kSlots * (kVec ? Pack<T>::N : 1) <= 16 ? 4 : 1;
}

template <typename T, bool kVec, int kSlots, int kGroup>
__global__ void __launch_bounds__(kBlock, (group_min_blocks<T, kVec, kSlots>()))
softmax_rows_group_kernel(T *__restrict__ out, const T *__restrict__ x, RowsArgs a) {
    static_assert(kGroup >= 1 && kGroup <= kWarp && (kGroup & (kGroup - 1)) == 0, "kGroup: a power of two <= kWarp");
    constexpr int VV = kVec ? Pack<T>::N : 1;
    constexpr int kRowsPerWarp = kWarp / kGroup;
    const int lane = threadIdx.x % kWarp;
    const int g = lane / kGroup, gl = lane % kGroup;
    const int64_t warps_per_block = blockDim.x / kWarp;
    const int64_t wstride = (int64_t)gridDim.x * warps_per_block;
    for (int64_t w = (int64_t)blockIdx.x * warps_per_block + threadIdx.x / kWarp; w * kRowsPerWarp < a.rows;
         w += wstride) {
        const int64_t row = w * kRowsPerWarp + g;
        const bool live = row < a.rows;
        const int64_t L = live ? a.L : 0;
        int64_t off[2] = {0, 0};
        if (live) a.kept.offsets(row, off);
        const T *px = x + off[0];
        T *po = out + off[1];
        float v[kSlots][VV];
        float m = -INFINITY;
#pragma unroll
        for (int j = 0; j < kSlots; ++j) {
            const int64_t base = ((int64_t)j * kGroup + gl) * VV;
            if (kVec) {
                if (base < L) {
                    Pack<T> p = load_pack(px + base);
#pragma unroll
                    for (int e = 0; e < VV; ++e) v[j][e] = to_f(p.v[e]);
                } else {
#pragma unroll
                    for (int e = 0; e < VV; ++e) v[j][e] = -INFINITY;
                }
            } else {
                v[j][0] = base < L ? to_f(px[base * a.xs]) : -INFINITY;
            }
#pragma unroll
            for (int e = 0; e < VV; ++e) m = fmaxf(m, v[j][e]);
        }
        m = group_reduce<kGroup>(m, MaxOp{});
        float s = 0.f;
#pragma unroll
        for (int j = 0; j < kSlots; ++j) {
            const int64_t base = ((int64_t)j * kGroup + gl) * VV;
#pragma unroll
            for (int e = 0; e < VV; ++e) {
                float ex = base < L ? expf(v[j][e] - m) : 0.f;
                v[j][e] = ex;
                s += ex;
            }
        }
        s = group_reduce<kGroup>(s, SumOp{});
        const float inv = 1.f / s;
#pragma unroll
        for (int j = 0; j < kSlots; ++j) {
            const int64_t base = ((int64_t)j * kGroup + gl) * VV;
            if (base >= L) continue;
            if (kVec) {
                Pack<T> p;
#pragma unroll
                for (int e = 0; e < VV; ++e) p.v[e] = from_f<T>(v[j][e] * inv);
                store_pack(po + base, p);
            } else {
                po[base * a.os] = from_f<T>(v[j][0] * inv);
            }
        }
    }
}

// A cluster of kCluster blocks per row (grid = rows x kCluster); block q of the cluster holds elements
// [q * kBlockRowThreads * kSlots * VV, ...) of the row in registers, laid out as in a block row. The
// blocks' maxima, then sums, are exchanged through distributed shared memory between cluster barriers.
// The last barrier keeps every block's shared memory alive until all have read it.
#if OPRT_HAS_CLUSTERS
template <typename T, int kSlots>
__global__ void __launch_bounds__(kBlockRowThreads, kBlockRowMinBlocks)
softmax_rows_cluster_kernel(T *__restrict__ out, const T *__restrict__ x, RowsArgs a) {
#if OPRT_CLUSTERS_ON_DEVICE
    namespace cg = cooperative_groups;
    constexpr int VV = Pack<T>::N;
    __shared__ float smem[kMaxThreadsPerBlock / kWarp];
    __shared__ float shared_stat[2];
    cg::cluster_group cluster = cg::this_cluster();
    const int nblocks = (int)cluster.num_blocks();
    const int q = (int)cluster.block_rank();
    const int64_t row = (int64_t)blockIdx.x / nblocks;
    const int t = threadIdx.x;
    int64_t off[2];
    a.kept.offsets(row, off);
    const T *px = x + off[0];
    T *po = out + off[1];
    const int64_t first = (int64_t)q * kBlockRowThreads * kSlots * VV;
    float v[kSlots][VV];
    float m = -INFINITY;
#pragma unroll
    for (int j = 0; j < kSlots; ++j) {
        const int64_t base = first + ((int64_t)j * kBlockRowThreads + t) * VV;
        if (base < a.L) {
            Pack<T> p = load_pack(px + base);
#pragma unroll
            for (int e = 0; e < VV; ++e) v[j][e] = to_f(p.v[e]);
        } else {
#pragma unroll
            for (int e = 0; e < VV; ++e) v[j][e] = -INFINITY;
        }
#pragma unroll
        for (int e = 0; e < VV; ++e) m = fmaxf(m, v[j][e]);
    }
    m = block_reduce(m, MaxOp{}, -INFINITY, smem);
    if (t == 0) shared_stat[0] = m;
    cluster.sync();
    for (int r = 0; r < nblocks; ++r) m = fmaxf(m, *cluster.map_shared_rank(&shared_stat[0], r));
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < kSlots; ++j) {
        const int64_t base = first + ((int64_t)j * kBlockRowThreads + t) * VV;
#pragma unroll
        for (int e = 0; e < VV; ++e) {
            const float ex = base < a.L ? expf(v[j][e] - m) : 0.f;
            v[j][e] = ex;
            s += ex;
        }
    }
    s = block_reduce(s, SumOp{}, 0.f, smem);
    if (t == 0) shared_stat[1] = s;
    cluster.sync();
    s = 0.f;
    for (int r = 0; r < nblocks; ++r) s += *cluster.map_shared_rank(&shared_stat[1], r);
    const float inv = 1.f / s;
#pragma unroll
    for (int j = 0; j < kSlots; ++j) {
        const int64_t base = first + ((int64_t)j * kBlockRowThreads + t) * VV;
        if (base >= a.L) continue;
        Pack<T> p;
#pragma unroll
        for (int e = 0; e < VV; ++e) p.v[e] = from_f<T>(v[j][e] * inv);
        store_pack(po + base, p);
    }
    cluster.sync();
#else
    oprt_vendor::trap();  // launched only where cluster_launch_supported() (sm_90 and newer)
#endif
}
#endif  // OPRT_HAS_CLUSTERS

// A block per row of any length: online (max, sum) in one read, then a second read that writes.
template <typename T, bool kVec>
__global__ void __launch_bounds__(kOnlineThreads)
softmax_rows_online_kernel(T *__restrict__ out, const T *__restrict__ x, RowsArgs a) {
    constexpr int V = Pack<T>::N;
    __shared__ float smem[2 * kMaxThreadsPerBlock / kWarp];
    const int nt = blockDim.x, t = threadIdx.x;
    for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
        int64_t off[2];
        a.kept.offsets(row, off);
        const T *px = x + off[0];
        T *po = out + off[1];
        MaxSum st{-INFINITY, 0.f};
        if (kVec) {
            const int64_t nv = a.L / V;
            for (int64_t i = t; i < nv; i += nt) {
                Pack<T> p = load_pack(px + i * V);
                float f[V];
                float pm = -INFINITY;
#pragma unroll
                for (int e = 0; e < V; ++e) {
                    f[e] = to_f(p.v[e]);
                    pm = fmaxf(pm, f[e]);
                }
                float ps = 0.f;
#pragma unroll
                for (int e = 0; e < V; ++e) ps += f[e] == -INFINITY ? 0.f : expf(f[e] - pm);  // all -inf: 0, not NaN
                st = maxsum_combine(st, MaxSum{pm, ps});
            }
        } else {
            for (int64_t i = t; i < a.L; i += nt) st = maxsum_add(st, to_f(px[i * a.xs]));
        }
        st = block_reduce_maxsum(st, smem);
        const float m = st.m, inv = 1.f / st.s;
        if (kVec) {
            const int64_t nv = a.L / V;
            for (int64_t i = t; i < nv; i += nt) {
                Pack<T> p = load_pack(px + i * V);
#pragma unroll
                for (int e = 0; e < V; ++e) p.v[e] = from_f<T>(expf(to_f(p.v[e]) - m) * inv);
                store_pack(po + i * V, p);
            }
        } else {
            for (int64_t i = t; i < a.L; i += nt) po[i * a.os] = from_f<T>(expf(to_f(px[i * a.xs]) - m) * inv);
        }
    }
}

struct ColsArgs {
    int64_t outer, inner, L, xs, os, o_si, tiles;
    Indexer<2> outer_idx;  // outer -> x offset (0), out offset (1)
};

constexpr int kColsX = kWarp, kColsY = 16;

template <typename T>
__global__ void __launch_bounds__(kColsX * kColsY)
softmax_cols_kernel(T *__restrict__ out, const T *__restrict__ x, ColsArgs a) {
    __shared__ float sm_m[kColsY][kColsX], sm_s[kColsY][kColsX];
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int64_t item = blockIdx.x; item < a.outer * a.tiles; item += gridDim.x) {
        const int64_t tile = item % a.tiles, o = item / a.tiles;
        int64_t off[2];
        a.outer_idx.offsets(o, off);
        const int64_t col = tile * kColsX + tx;
        const bool live = col < a.inner;
        const T *px = x + off[0] + col;
        T *po = out + off[1] + col * a.o_si;
        MaxSum st{-INFINITY, 0.f};
        if (live) {
            int64_t l = ty;
            for (; l + kColsY < a.L; l += 2 * kColsY) {
                float f0 = to_f(px[l * a.xs]), f1 = to_f(px[(l + kColsY) * a.xs]);
                st = maxsum_add(maxsum_add(st, f0), f1);
            }
            for (; l < a.L; l += kColsY) st = maxsum_add(st, to_f(px[l * a.xs]));
        }
        sm_m[ty][tx] = st.m;
        sm_s[ty][tx] = st.s;
        __syncthreads();
        MaxSum tot{-INFINITY, 0.f};
#pragma unroll
        for (int k = 0; k < kColsY; ++k) tot = maxsum_combine(tot, MaxSum{sm_m[k][tx], sm_s[k][tx]});
        __syncthreads();
        if (live) {
            const float m = tot.m, inv = 1.f / tot.s;
            // reverse order: the rows read last in the first sweep are the likeliest to still be in L2
            const int64_t last = a.L - 1 - ty;
            for (int64_t l = last; l >= 0; l -= kColsY)
                po[l * a.os] = from_f<T>(expf(to_f(px[l * a.xs]) - m) * inv);
        }
    }
}

// Short axes over columns (an axis of up to kShortColsValues / VV rows, strided, with a unit-stride kept dim: a
// leading or middle axis such as the 3 channels of (64, 3, 224, 224) over axis 1): a thread a column (kVec: a 16-byte
// pack of VV columns) of one outer index, its whole axis in registers (one read, one write, no block exchange),
// threads along the unit-stride dim so every row's loads coalesce; outer indices and columns flattened into one
// grid-stride index, so a short inner extent (50 columns) still fills whole warps.
constexpr int kShortColsValues = 64;
constexpr int kShortColsThreads = 256;
template <typename T, bool kVec, int R>
__global__ void __launch_bounds__(kShortColsThreads)
softmax_cols_short_kernel(T *__restrict__ out, const T *__restrict__ x, ColsArgs a, int64_t ipacks) {
    constexpr int VV = kVec ? Pack<T>::N : 1;
    const int64_t total = a.outer * ipacks;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t o = i / ipacks, c = (i - o * ipacks) * VV;
        int64_t off[2];
        a.outer_idx.offsets(o, off);
        const T *px = x + off[0] + c;
        T *po = out + off[1] + c * a.o_si;
        float v[R][VV], m[VV], s[VV];
#pragma unroll
        for (int e = 0; e < VV; ++e) m[e] = -INFINITY, s[e] = 0.f;
#pragma unroll
        for (int l = 0; l < R; ++l) {
            if (l < a.L) {
                if constexpr (kVec) {
                    const Pack<T> p = load_pack(px + l * a.xs);
#pragma unroll
                    for (int e = 0; e < VV; ++e) v[l][e] = to_f(p.v[e]);
                } else {
                    v[l][0] = to_f(px[l * a.xs]);
                }
#pragma unroll
                for (int e = 0; e < VV; ++e) m[e] = fmaxf(m[e], v[l][e]);
            }
        }
#pragma unroll
        for (int l = 0; l < R; ++l) {
            if (l < a.L) {
#pragma unroll
                for (int e = 0; e < VV; ++e) {
                    v[l][e] = exp_t<T>(v[l][e] - m[e]);
                    s[e] += v[l][e];
                }
            }
        }
#pragma unroll
        for (int e = 0; e < VV; ++e) s[e] = 1.f / s[e];
#pragma unroll
        for (int l = 0; l < R; ++l) {
            if (l < a.L) {
                if constexpr (kVec) {
                    Pack<T> p;
#pragma unroll
                    for (int e = 0; e < VV; ++e) p.v[e] = from_f<T>(v[l][e] * s[e]);
                    store_pack(po + l * a.os, p);
                } else {
                    po[l * a.os] = from_f<T>(v[l][0] * s[0]);
                }
            }
        }
    }
}

enum class SoftmaxPath { kEmpty, kWarpRows, kBlockRows, kOnlineRows, kCols };

struct SoftmaxState {
    oprt_axis_plan_t plan;
    SoftmaxPath path;
    int64_t x_off, o_off;
    RowsArgs rows;
    ColsArgs cols;
    size_t workspace;  // bytes: the strip exchange of f32 columns over long axes (cols_group_workspace_f32)
};

#if OPRT_COLS_CLUSTERS
// f32 columns over axes of more than 8 x 1024 rows: the on-chip kernel without clusters (launch_cols_group), the
// f32 fallback where the pushed clusters (launch_cols_fast below, faster) do not launch; shorter axes and 16-bit
// gain nothing from it. The workspace is sized from the shape alone (0 where the kernel cannot take it); whether it
// runs also depends on the pointers.
// Its merges after the block barrier are shuffle trees with __expf (cols_merge_stats kMerge 2: 16384 x 8192 f32 ~1.5
// points of cudaMemcpy faster than one thread a column folding a dependent chain).
constexpr int kColsMerge = 2;
// The pushed clusters fold max-first (cols_merge_stats kMerge 4: each warp's max before the exp pass, the warps'
// sums added, the block's and the cluster's maxima before any scaling): 16384 x 8192 f16 ~3.5 points of cudaMemcpy
// faster than merge 2 (results/h200/tune/softmax-axis0-merge.log). The group launch keeps merge 2.
constexpr int kPushMerge = 4;
constexpr int kGroupLanes = 8, kGroupThreads = 256, kGroupRegRows = 16, kGroupSmemRows = 16, kGroupChunk = 2;
constexpr int64_t kGroupMinRows = 8 * (kGroupThreads / kGroupLanes) * (kGroupRegRows + kGroupSmemRows);
size_t cols_group_workspace_f32(const ColsArgs &c) {
    if (c.L <= kGroupMinRows) return 0;
    return cols_group_workspace_for<float, kGroupLanes, kGroupThreads, kGroupRegRows, kGroupSmemRows>(c.L, c.inner,
                                                                                                       c.outer);
}
#else
size_t cols_group_workspace_f32(const ColsArgs &) { return 0; }  // no on-chip column kernel in this build
#endif

void plan_paths(SoftmaxState *d) {
    const oprt_axis_plan_t &p = d->plan;
    d->x_off = d->o_off = 0;
    d->workspace = 0;
    if (p.numel_in == 0) {
        d->path = SoftmaxPath::kEmpty;
        return;
    }
    Dim kept[OPRT_MAX_NDIM];
    int nk = 0;
    Dim ax{p.shape[p.axis], p.x_strides[p.axis], p.out_strides[p.axis]};
    for (int i = 0; i < p.ndim; ++i)
        if (i != p.axis) kept[nk++] = {p.shape[i], p.x_strides[i], p.out_strides[i]};
    canonicalize(kept, nk, d->x_off, d->o_off);
    if (ax.ext == 1) ax.xs = ax.os = 1;  // one element per row: strides never used
    if (ax.xs < 0) {
        d->x_off += (ax.ext - 1) * ax.xs;
        d->o_off += (ax.ext - 1) * ax.os;
        ax.xs = -ax.xs;
        ax.os = -ax.os;
    }
    if (ax.xs != 1 && nk >= 1 && kept[nk - 1].xs == 1) {
        ColsArgs &c = d->cols;
        c = ColsArgs{};
        c.inner = kept[nk - 1].ext;
        c.o_si = kept[nk - 1].os;
        c.outer_idx = make_indexer(kept, nk - 1);
        c.outer = 1;
        for (int i = 0; i < nk - 1; ++i) c.outer *= kept[i].ext;
        c.L = ax.ext;
        c.xs = ax.xs;
        c.os = ax.os;
        c.tiles = ceil_div(c.inner, kColsX);
        d->path = SoftmaxPath::kCols;
        if (p.dtype == OPRT_DTYPE_F32) d->workspace = cols_group_workspace_f32(c);
        return;
    }
    RowsArgs &r = d->rows;
    r = RowsArgs{};
    r.kept = make_indexer(kept, nk);
    r.rows = 1;
    for (int i = 0; i < nk; ++i) r.rows *= kept[i].ext;
    r.L = ax.ext;
    r.xs = ax.xs;
    r.os = ax.os;
    d->path = r.L <= kWarpRowMax ? SoftmaxPath::kWarpRows
              : r.L <= kRegsRowMax ? SoftmaxPath::kBlockRows : SoftmaxPath::kOnlineRows;
}

// Values a thread keeps in registers, in a warp row (up to 255 registers) and in a block or cluster row
// (512 threads, 2 blocks per SM: 64 registers) alike.
constexpr int kMaxValues = 32;

template <typename T, bool kVec, bool kWarpGroup, int S>
void launch_slots(unsigned grid, unsigned block, gpuStream_t stream, T *out, const T *x, const RowsArgs &a) {
    constexpr int VV = kVec ? Pack<T>::N : 1;
    if constexpr (S * VV <= kMaxValues) {
        note_launch(kVec ? "softmax_rows_regs_vec" : "softmax_rows_regs");
        softmax_rows_regs_kernel<T, kVec, S, kWarpGroup><<<grid, block, 0, stream>>>(out, x, a);
    }
}

template <typename T, bool kVec, bool kWarpGroup>
void launch_regs(int slots, unsigned grid, unsigned block, gpuStream_t stream, T *out, const T *x,
                 const RowsArgs &a) {
    switch (slots) {
    case 1: launch_slots<T, kVec, kWarpGroup, 1>(grid, block, stream, out, x, a); break;
    case 2: launch_slots<T, kVec, kWarpGroup, 2>(grid, block, stream, out, x, a); break;
    case 4: launch_slots<T, kVec, kWarpGroup, 4>(grid, block, stream, out, x, a); break;
    case 8: launch_slots<T, kVec, kWarpGroup, 8>(grid, block, stream, out, x, a); break;
    case 16: launch_slots<T, kVec, kWarpGroup, 16>(grid, block, stream, out, x, a); break;
    default: launch_slots<T, kVec, kWarpGroup, 32>(grid, block, stream, out, x, a); break;
    }
}

template <typename T, bool kVec, int kGroup, int S>
void launch_group_slots(unsigned grid, gpuStream_t stream, T *out, const T *x, const RowsArgs &a) {
    constexpr int VV = kVec ? Pack<T>::N : 1;
    if constexpr (S * VV <= kMaxValues) {
        note_launch(kVec ? "softmax_rows_group_vec" : "softmax_rows_group");
        softmax_rows_group_kernel<T, kVec, S, kGroup><<<grid, kBlock, 0, stream>>>(out, x, a);
    }
}

// group < kWarp only when a row has at most `group` packs, so one slot; a full warp takes 1..32 slots.
template <typename T, bool kVec>
void launch_group(int group, int slots, unsigned grid, gpuStream_t stream, T *out, const T *x, const RowsArgs &a) {
    static_assert(kWarp == 32 || kWarp == 64, "launch_group: add the cases of this warp width");
    switch (group) {
    case 1: launch_group_slots<T, kVec, 1, 1>(grid, stream, out, x, a); return;
    case 2: launch_group_slots<T, kVec, 2, 1>(grid, stream, out, x, a); return;
    case 4: launch_group_slots<T, kVec, 4, 1>(grid, stream, out, x, a); return;
    case 8: launch_group_slots<T, kVec, 8, 1>(grid, stream, out, x, a); return;
    case 16: launch_group_slots<T, kVec, 16, 1>(grid, stream, out, x, a); return;
    case 32:
        if constexpr (kWarp > 32) {
            launch_group_slots<T, kVec, 32, 1>(grid, stream, out, x, a);
            return;
        }
        break;
    default: break;
    }
    // a whole warp per row
    switch (slots) {
    case 1: launch_group_slots<T, kVec, kWarp, 1>(grid, stream, out, x, a); break;
    case 2: launch_group_slots<T, kVec, kWarp, 2>(grid, stream, out, x, a); break;
    case 4: launch_group_slots<T, kVec, kWarp, 4>(grid, stream, out, x, a); break;
    case 8: launch_group_slots<T, kVec, kWarp, 8>(grid, stream, out, x, a); break;
    case 16: launch_group_slots<T, kVec, kWarp, 16>(grid, stream, out, x, a); break;
    default: launch_group_slots<T, kVec, kWarp, 32>(grid, stream, out, x, a); break;
    }
}

// Rows of up to kClusterMax x kRegsRowMax elements through softmax_rows_cluster_kernel, where the device
// launches clusters; false (nothing launched, no error left pending) when it does not or the launch fails.
#if OPRT_HAS_CLUSTERS
constexpr int kClusterMax = kMaxCluster;

template <typename T, int kSlots> bool cluster_kernel_built() {
    static int state = 0;
    return kernel_built_for_sm90((const void *)softmax_rows_cluster_kernel<T, kSlots>, state);
}
template <typename T> bool launch_cluster_rows(gpuStream_t stream, T *out, const T *x, const RowsArgs &a) {
    constexpr int V = Pack<T>::N;
    constexpr int kSlots = kMaxValues / V;
    const int64_t per_block = (int64_t)kBlockRowThreads * kSlots * V;
    const int64_t nblocks = ceil_div(a.L, per_block);
    if (nblocks > kClusterMax || a.rows > 0x7fffffff / kClusterMax || !cluster_launch_supported() ||
        !cluster_kernel_built<T, kSlots>())
        return false;
    note_launch("softmax_rows_cluster");
    return launch_clusters(softmax_rows_cluster_kernel<T, kSlots>, a.rows * nblocks, kBlockRowThreads, nblocks, 0,
                           stream, out, x, a) == gpuSuccess;
}
#else
template <typename T> bool launch_cluster_rows(gpuStream_t, T *, const T *, const RowsArgs &) { return false; }
#endif

// The row stride form of rows with at most one kept dim (none: a single row).
FastRowsArgs fast_args(const RowsArgs &a) {
    const bool one = a.kept.ndim == 1;
    return FastRowsArgs{a.rows, a.L, one ? a.kept.stride[0][0] : 0, one ? a.kept.stride[1][0] : 0};
}

// Rows of up to kRegsRowMax elements with one row stride (at most one kept dim after canonicalisation)
// through softmax_rows.cuh's kernel, configured by the row's packs rounded up to a power of two (np):
// short rows take G = np / 2 lanes of 2 packs (warp groups, 256-thread blocks; f32 x 128 a pack a lane),
// rows of 128 packs a warp of 4 packs, longer rows a block of 128..512 threads with 2..8 packs (16-bit
// rows of 2048 packs keep raw packs): each the fastest configuration measured for its width on the H200, 93-100%
// of cudaMemcpy (results/h200/tune/softmax-rows-config.log). False (nothing launched) when the rows do not qualify.
template <typename T, bool kShift = false>
bool launch_fast(gpuStream_t stream, T *out, const T *x, const RowsArgs &a) {
    constexpr int V = Pack<T>::N;
    if (a.kept.ndim > 1 || a.L > kRegsRowMax || a.rows > ((int64_t)1 << 31) - 1) return false;
    const FastRowsArgs f = fast_args(a);
    const int64_t span = a.L + (kShift ? V - 1 : 0);  // kShift: the row and up to V - 1 elements before it
    int64_t np = 1;
    while (np * V < span) np *= 2;
    switch (np) {
    case 1: launch_fast_rows<T, 1, 1, kBlock, 0, kShift>(stream, out, x, f); return true;
    case 2: launch_fast_rows<T, 1, 2, kBlock, 0, kShift>(stream, out, x, f); return true;
    case 4: launch_fast_rows<T, 2, 2, kBlock, 0, kShift>(stream, out, x, f); return true;
    case 8: launch_fast_rows<T, 4, 2, kBlock, 0, kShift>(stream, out, x, f); return true;
    case 16: launch_fast_rows<T, 8, 2, kBlock, 0, kShift>(stream, out, x, f); return true;
    case 32:  // f32 x 128: a pack a lane (99.5% against 98.4% for G16 P2)
        if constexpr (V == 4) launch_fast_rows<T, 32, 1, kBlock, 0, kShift>(stream, out, x, f);
        else launch_fast_rows<T, 16, 2, kBlock, 0, kShift>(stream, out, x, f);
        return true;
    case 64: launch_fast_rows<T, 32, 2, kBlock, 0, kShift>(stream, out, x, f); return true;
    case 128: launch_fast_rows<T, 32, 4, kBlock, 0, kShift>(stream, out, x, f); return true;
    case 256: launch_fast_rows<T, 128, 2, 128, 0, kShift>(stream, out, x, f); return true;
    case 512: launch_fast_rows<T, 128, 4, 128, 0, kShift>(stream, out, x, f); return true;
    case 1024: launch_fast_rows<T, 256, 4, 256, 0, kShift>(stream, out, x, f); return true;
    case 2048:  // 16-bit x 16384: packed exps, 256 x 8 (95.1%; raw packs 93.2%, 512 x 4 floats 87.4%, tune/softmax-rows-config.log)
        // (partial and shifted 16-bit rows too: packs past the row hold -inf and the bounds-checked packed kernel
        // does not spill; OPRT_NVIDIA_SOFTMAX_RAW16=0 runs them on 512 x 4 floats)
        if constexpr (V == 4) launch_fast_rows<T, 512, 4, 512, 0, kShift>(stream, out, x, f);
        else if ((kShift || a.L != 2048 * V) && env_int("OPRT_NVIDIA_SOFTMAX_RAW16", 1) == 0)
            launch_fast_rows<T, 512, 4, 512, 0, kShift>(stream, out, x, f);
        else launch_fast_rows<T, 256, 8, 256, kRawExp, kShift>(stream, out, x, f);
        return true;
    case 4096:
        if constexpr (V == 4) {
            launch_fast_rows<T, 512, 8, 512, 0, kShift>(stream, out, x, f);
            return true;
        }
        return false;
    default: return false;
    }
}


// One fast cluster configuration of 512 threads x P packs a block (16-bit P = 8: packed exps, kRawExp; otherwise
// floats), clusters of up to max_cluster blocks.
// push: the blocks' exchange by pushes onto mbarriers instead of cluster barriers (kPush).
template <typename T, bool kShift>
bool launch_fast_cluster_p(int P, gpuStream_t stream, T *out, const T *x, const FastRowsArgs &f, int max_cluster,
                           bool push) {
    constexpr int kRaw8 = Pack<T>::N == 4 ? 0 : kRawExp;
    switch (P) {
    case 1: return launch_fast_cluster_rows<T, 512, 1, 0, kShift>(stream, out, x, f, max_cluster, push);
    case 2: return launch_fast_cluster_rows<T, 512, 2, 0, kShift>(stream, out, x, f, max_cluster, push);
    case 4: return launch_fast_cluster_rows<T, 512, 4, 0, kShift>(stream, out, x, f, max_cluster, push);
    default: return launch_fast_cluster_rows<T, 512, 8, kRaw8, kShift>(stream, out, x, f, max_cluster, push);
    }
}

// Rows longer than kRegsRowMax with one row stride (kShift: of any 16-byte phase): softmax_rows.cuh's kernel in
// cluster mode, the whole row in the registers of a cluster's blocks (one read, one write). The rule, from the
// blocks a row needs at 512 threads x 8 packs (f32 16384 elements a block, 16-bit 32768 of packed exps: on
// 65536-wide rows the fastest block shapes measured on the H200, f16 ~81% of cudaMemcpy):
//  - few rows (rows x blocks a row < SMs): each row spread over as many blocks as fill the SMs, up to
//    OPRT_NVIDIA_SOFTMAX_SPREAD (default 16, the non-portable cluster size; 8 keeps portable clusters, 1 turns it
//    off), with the fewest packs a thread (8, 4, 2, 1) that still hold the row: 1-8 rows of a vocabulary
//    otherwise leave most SMs idle, and each block's loads are one round trip;
//  - otherwise 8 packs a thread (OPRT_NVIDIA_SOFTMAX_CLUSTER_P=4, 2 or 1: that many, in floats, more blocks a row,
//    where the clusters still hold the row; OPRT_NVIDIA_SOFTMAX_CLUSTER_G=256: blocks of 256 threads) in clusters of
//    up to 8 blocks; rows that need 9-16 blocks take clusters
//    of 16 only
//    under OPRT_NVIDIA_SOFTMAX_ROWS16=1 (clusters of 16 over many 65536-wide rows ran at 35-64% of cudaMemcpy against
//    74-81% at 8), else the generic cluster kernel, then online rows;
//  - before the rest of this branch, the persistent clusters (softmax_rows.cuh: the next row loading while the
//    cluster works on this one, up to 16 blocks a row): 70-98% of the copy peak on the vocabulary rows where the
//    launched-per-row clusters reached 54-84% (H100); OPRT_NVIDIA_SOFTMAX_PERSIST=0 turns them off;
//  - OPRT_NVIDIA_SOFTMAX_PUSH=1: the launched-per-row clusters exchange by pushes onto mbarriers instead of cluster
//    barriers (kPush; kernel column ..._push; a design still to be measured).
// Returns the kernel's name for the launch note, or nullptr (nothing launched).
template <typename T, bool kShift = false>
const char *launch_fast_cluster(gpuStream_t stream, T *out, const T *x, const RowsArgs &a) {
    const bool push = env_int("OPRT_NVIDIA_SOFTMAX_PUSH", 0) == 1;
    const char *name = kShift ? (push ? "softmax_rows_fast_cluster_shift_push" : "softmax_rows_fast_cluster_shift")
                              : (push ? "softmax_rows_fast_cluster_push" : "softmax_rows_fast_cluster");
    if (a.kept.ndim > 1) return nullptr;
    constexpr int V = Pack<T>::N;
    const FastRowsArgs f = fast_args(a);
    const int64_t span = a.L + (kShift ? V - 1 : 0);
    const int64_t nb_min = ceil_div(span, (int64_t)512 * 8 * V);
    // at most 16 blocks a cluster (the hardware's non-portable limit): a larger setting is capped, not launched
    const int spread = std::min(env_int("OPRT_NVIDIA_SOFTMAX_SPREAD", 16), 16);
    const int64_t sms = device_limits().sm_count;
    if (spread > 1 && a.rows * nb_min < sms && nb_min <= spread) {
        const int64_t want = std::min<int64_t>(spread, std::max<int64_t>(nb_min, sms / a.rows));
        int P = 8;
        while (P > 1 && ceil_div(span, (int64_t)512 * (P / 2) * V) <= want) P /= 2;
        if (launch_fast_cluster_p<T, kShift>(P, stream, out, x, f, spread, push)) return name;
    }
    if (env_int("OPRT_NVIDIA_SOFTMAX_PERSIST", 1) == 1 && launch_persist_rows<T, kShift>(stream, out, x, f))
        return kShift ? "softmax_rows_persist_shift" : "softmax_rows_persist";
    const int max_cluster = env_int("OPRT_NVIDIA_SOFTMAX_ROWS16", 0) == 1 ? 16 : 8;
    const int p = env_int("OPRT_NVIDIA_SOFTMAX_CLUSTER_P", 8);
    if (p != 8 && (p == 1 || p == 2 || p == 4) &&
        launch_fast_cluster_p<T, kShift>(p, stream, out, x, f, max_cluster, push))
        return name;
    // OPRT_NVIDIA_SOFTMAX_CLUSTER_G=256: blocks of 256 threads x 8 packs (4 an SM instead of 2, so that more blocks
    // are in other phases while one waits on its loads or the cluster barrier), twice the blocks a row
    if (env_int("OPRT_NVIDIA_SOFTMAX_CLUSTER_G", 512) == 256) {
        constexpr int kRaw8 = Pack<T>::N == 4 ? 0 : kRawExp;
        if (launch_fast_cluster_rows<T, 256, 8, kRaw8, kShift>(stream, out, x, f, max_cluster, push)) return name;
    }
    return launch_fast_cluster_p<T, kShift>(8, stream, out, x, f, max_cluster, push) ? name : nullptr;
}

// Columns through softmax_cols.cuh's cluster kernels where 16-byte packs work (aligned pointers, strides
// and inner extent, out unit-stride along inner) and the axis has at most 16384 rows: the on-chip kernel
// (below), else the stash kernel (2048-row segments in clusters of up to 8, with L2 eviction hints: the first
// sweep's loads evict_last, the second sweep's loads and the writes evict_first). False where neither applies (the
// caller's generic columns kernel runs).
template <typename T>
bool launch_cols_fast(gpuStream_t stream, T *out, const T *x, const ColsArgs &c, void *ws, size_t ws_size) {
#if OPRT_COLS_CLUSTERS
    constexpr int64_t V = Pack<T>::N, S = sizeof(T);
    bool vec = c.o_si == 1 && c.inner % V == 0 && aligned16(x) && aligned16(out) && (c.xs * S) % 16 == 0 &&
               (c.os * S) % 16 == 0;
    for (int i = 0; i < c.outer_idx.ndim; ++i)
        vec = vec && (c.outer_idx.stride[0][i] * S) % 16 == 0 && (c.outer_idx.stride[1][i] * S) % 16 == 0;
    if (!vec) return false;
    ColsClusterArgs a{c.L, c.inner, c.xs, c.os, 0, 0, c.outer_idx};
    // Each thread's first rows stay in the shared memory that the 2-blocks-an-SM cap reserves (the stash:
    // pass 2 reads them last, when they would most likely have left L2): f32 16 lanes, 16-bit 8 lanes, 4 loads in
    // flight.
    // Axes of up to 16 x 1024 rows keep each block's whole segment on chip (softmax_cols_onchip_kernel: one DRAM
    // read, one write; 12 (16-bit) or 16 (f32) rows a thread in registers, the rest in shared memory); f32 keeps
    // exp(x - max) and scales in the writing pass. The clusters exchange by st.async pushes counted on an mbarrier
    // (kXPush: no cluster barrier at the exchange), for every dtype and axis length. Where its cluster does not
    // launch: the group launch (f32 over more than 8192 rows; the descriptor sized the workspace for it), then the
    // stash kernel; longer axes (> 16384 rows, past both) return false.
    // OPRT_NVIDIA_SOFTMAX_COLS=stash skips the on-chip kernel, =group puts the group launch first (read at each
    // launch, so that tests reach the fallbacks on a GPU where the on-chip kernel always launches).
    const char *force = getenv("OPRT_NVIDIA_SOFTMAX_COLS");
    const bool stash_only = force && strcmp(force, "stash") == 0;
    const bool group_first = force && strcmp(force, "group") == 0;
    auto group = [&] {
        if constexpr (V == 4) {
            if (ws_size > 0 &&
                launch_cols_group<T, kGroupLanes, kGroupThreads, kGroupRegRows, kGroupSmemRows, true, kColsMerge>(
                    stream, out, x, a, c.outer, ws, ws_size, kGroupChunk)) {
                note_launch("softmax_cols_group");
                return true;
            }
        }
        return false;
    };
    if (!stash_only) {
        if (group_first && group()) return true;
        constexpr int kPushLanes = 8, kPushThreads = 256, kRegRows = V == 4 ? 16 : 12, kSmemRows = V == 4 ? 16 : 20;
        // 16-bit clusters of fewer than 16 blocks (axes of up to 15 x 1024 rows) run under the scheduling policy
        // "load balancing" (softmax_rows.cuh, cluster_policy; f16 4096^2 ~5 points of cudaMemcpy faster); clusters
        // of 16 keep the default, under which 16384^2 16-bit reads ~1.5 points faster.
        const bool balance = V != 4 && cols_onchip_blocks<kPushLanes, kPushThreads, kRegRows, kSmemRows>(a.L) < 16;
        ClusterPolicyScope policy(balance ? cudaClusterSchedulingPolicyLoadBalancing
                                          : cudaClusterSchedulingPolicyDefault);
        if (launch_cols_onchip<T, kPushLanes, kPushThreads, kRegRows, kSmemRows, false, true, kPushMerge, kXPush>(
                stream, out, x, a, c.outer)) {
            note_launch("softmax_cols_onchip");
            return true;
        }
        if (!group_first && group()) return true;
    }
    constexpr int kLanes = V == 4 ? 16 : 8;  // 256-byte (f32) / 128-byte (16-bit) strips
    note_launch("softmax_cols_stash");
    return launch_cols_cluster<T, kLanes, 512, 4, kColsL2Hint>(stream, out, x, a, c.outer, 2048, 2, kMaxCluster, true);
#else
    (void)stream, (void)out, (void)x, (void)c, (void)ws, (void)ws_size;
    return false;
#endif
}

// Whether 16-byte packs work across the unit-stride kept dim of these columns: aligned pointers, strides and inner
// extent, out unit-stride along inner.
template <typename T> bool cols_packs(const T *out, const T *x, const ColsArgs &c) {
    constexpr int64_t V = Pack<T>::N, S = sizeof(T);
    bool vec = c.o_si == 1 && c.inner % V == 0 && aligned16(x) && aligned16(out) && (c.xs * S) % 16 == 0 &&
               (c.os * S) % 16 == 0;
    for (int i = 0; i < c.outer_idx.ndim; ++i)
        vec = vec && (c.outer_idx.stride[0][i] * S) % 16 == 0 && (c.outer_idx.stride[1][i] * S) % 16 == 0;
    return vec;
}

template <typename T, bool kVec, int R>
void launch_cols_short_r(gpuStream_t stream, T *out, const T *x, const ColsArgs &c, int64_t ipacks) {
    constexpr int VV = kVec ? Pack<T>::N : 1;
    if constexpr (R * VV <= kShortColsValues) {
        note_launch(kVec ? "softmax_cols_short_vec" : "softmax_cols_short");
        const unsigned grid = grid_all(c.outer * ipacks, kShortColsThreads);
        softmax_cols_short_kernel<T, kVec, R><<<grid, kShortColsThreads, 0, stream>>>(out, x, c, ipacks);
    }
}

// Columns over an axis short enough for softmax_cols_short_kernel (up to 64 values a thread: f32 packs 16 rows,
// 16-bit packs 8, single elements 64); false otherwise, and whenever OPRT_NVIDIA_SOFTMAX_COLS names a columns
// kernel (so that the cluster kernels stay reachable on short axes), or OPRT_NVIDIA_SOFTMAX_SHORT=0.
template <typename T> bool launch_cols_short(gpuStream_t stream, T *out, const T *x, const ColsArgs &c) {
    const char *force = getenv("OPRT_NVIDIA_SOFTMAX_COLS");
    if ((force && *force) || env_int("OPRT_NVIDIA_SOFTMAX_SHORT", 1) == 0) return false;
    const bool vec = cols_packs(out, x, c);
    const int VV = vec ? Pack<T>::N : 1;
    if (c.L * VV > kShortColsValues) return false;
    const int64_t ipacks = c.inner / VV;
    const int r = pow2_clamp(c.L, 1, kShortColsValues);
    auto go = [&](auto vec_tag) {
        constexpr bool kV = decltype(vec_tag)::value;
        switch (r) {
        case 1: launch_cols_short_r<T, kV, 1>(stream, out, x, c, ipacks); break;
        case 2: launch_cols_short_r<T, kV, 2>(stream, out, x, c, ipacks); break;
        case 4: launch_cols_short_r<T, kV, 4>(stream, out, x, c, ipacks); break;
        case 8: launch_cols_short_r<T, kV, 8>(stream, out, x, c, ipacks); break;
        case 16: launch_cols_short_r<T, kV, 16>(stream, out, x, c, ipacks); break;
        case 32: launch_cols_short_r<T, kV, 32>(stream, out, x, c, ipacks); break;
        default: launch_cols_short_r<T, kV, 64>(stream, out, x, c, ipacks); break;
        }
    };
    if (vec) go(std::true_type{});
    else go(std::false_type{});
    return true;
}

template <typename T>
oprt_status_t launch_softmax(const SoftmaxState &d, void *ws, size_t ws_size, void *out_, const void *x_,
                             gpuStream_t stream) {
    T *out = static_cast<T *>(out_) + d.o_off;
    const T *x = static_cast<const T *>(x_) + d.x_off;
    constexpr int V = Pack<T>::N;
    if (d.path == SoftmaxPath::kCols) {
        const ColsArgs &c = d.cols;
        if (launch_cols_short<T>(stream, out, x, c)) return check_launch("softmax short cols kernel");
        if (launch_cols_fast<T>(stream, out, x, c, ws, ws_size)) return check_launch("softmax cols cluster kernel");
        unsigned grid = grid_all(c.outer * c.tiles, 1);
        note_launch("softmax_cols");
        softmax_cols_kernel<T><<<grid, dim3(kColsX, kColsY), 0, stream>>>(out, x, c);
        return check_launch("softmax cols kernel");
    }
    const RowsArgs &a = d.rows;
    bool vec = a.xs == 1 && a.os == 1 && a.L % V == 0 && aligned16(x) && aligned16(out);
    for (int i = 0; i < a.kept.ndim; ++i)
        vec = vec && (a.kept.stride[0][i] * (int64_t)sizeof(T)) % 16 == 0 &&
              (a.kept.stride[1][i] * (int64_t)sizeof(T)) % 16 == 0;
    if (vec && d.path != SoftmaxPath::kOnlineRows && launch_fast<T>(stream, out, x, a)) {
        note_launch("softmax_rows_fast");
        return check_launch("softmax fast rows kernel");
    }
    // Unit-stride rows of one row stride whose starts are not all 16-byte aligned (odd widths, odd strides, offset
    // views), or whose length is not whole packs: the same kernels shifted to the 16-byte chunks that hold each row
    // (kShift), where out's rows have x's phase (same start mod 16, row strides equal mod 16 bytes).
    // OPRT_NVIDIA_SOFTMAX_SHIFT=0 turns this off (the generic kernels below, for comparison).
    const bool shift = !vec && a.xs == 1 && a.os == 1 && a.kept.ndim <= 1 &&
                       (reinterpret_cast<uintptr_t>(x) - reinterpret_cast<uintptr_t>(out)) % 16 == 0 &&
                       (a.kept.ndim == 0 || ((a.kept.stride[0][0] - a.kept.stride[1][0]) * (int64_t)sizeof(T)) % 16 == 0) &&
                       env_int("OPRT_NVIDIA_SOFTMAX_SHIFT", 1) != 0;
    if (shift) {
        if (a.L <= kRegsRowMax && launch_fast<T, true>(stream, out, x, a)) {
            note_launch("softmax_rows_fast_shift");
            return check_launch("softmax fast rows kernel");
        }
        if (const char *kernel = a.L > kWarpRowMax ? launch_fast_cluster<T, true>(stream, out, x, a) : nullptr) {
            note_launch(kernel);
            return check_launch("softmax fast cluster rows kernel");
        }
    }
    const int VV = vec ? V : 1;
    if (d.path == SoftmaxPath::kWarpRows) {
        // lanes per row: the fewest (a power of two) that give each lane at most one pack, up to a warp
        const int group = pow2_clamp(ceil_div(a.L, (int64_t)VV), 1, kWarp);
        const int slots = pow2_clamp(ceil_div(a.L, (int64_t)group * VV), 1, 32);
        const int64_t warps = ceil_div(a.rows, (int64_t)(kWarp / group));
        unsigned grid = grid_all(warps, kBlock / kWarp);
        if (vec) launch_group<T, true>(group, slots, grid, stream, out, x, a);
        else launch_group<T, false>(group, slots, grid, stream, out, x, a);
    } else if (d.path == SoftmaxPath::kBlockRows) {
        const int threads = kBlockRowThreads;
        const int slots = pow2_clamp(ceil_div(a.L, (int64_t)threads * VV), 1, 32);
        unsigned grid = grid_all(a.rows, 1);
        if (vec) launch_regs<T, true, false>(slots, grid, threads, stream, out, x, a);
        else launch_regs<T, false, false>(slots, grid, threads, stream, out, x, a);
    } else {
        if (const char *kernel = vec ? launch_fast_cluster<T>(stream, out, x, a) : nullptr) {
            note_launch(kernel);
            return check_launch("softmax fast cluster rows kernel");
        }
        if (vec && launch_cluster_rows<T>(stream, out, x, a)) return check_launch("softmax cluster rows kernel");
        unsigned grid = grid_all(a.rows, 1);
        note_launch(vec ? "softmax_rows_online_vec" : "softmax_rows_online");
        if (vec) softmax_rows_online_kernel<T, true><<<grid, kOnlineThreads, 0, stream>>>(out, x, a);
        else softmax_rows_online_kernel<T, false><<<grid, kOnlineThreads, 0, stream>>>(out, x, a);
    }
    return check_launch("softmax rows kernel");
}

// ---- entry points (OPRT_DEFINE_OP) ----------------------------------------------------------------

oprt_status_t plan_softmax(SoftmaxState *d, size_t *workspace, const oprt_tensor_desc_t *out,
                           const oprt_tensor_desc_t *x, int32_t axis) {
    OPRT_CHECK(oprt_plan_softmax(&d->plan, out, x, axis));
    plan_paths(d);
    *workspace = d->workspace;
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t run_softmax(const SoftmaxState *d, void *workspace, void *out, const void *x, oprt_stream_t stream) {
    note_launch("none");
    if (d->path == SoftmaxPath::kEmpty) return OPRT_STATUS_SUCCESS;
    return dispatch_dtype(d->plan.dtype, [&](auto tag) {
        return launch_softmax<decltype(tag)>(*d, d->workspace ? workspace : nullptr, d->workspace, out, x,
                                             (gpuStream_t)stream);
    });
}

}  // namespace

extern "C" {
OPRT_DEFINE_OP(softmax, SoftmaxState, plan_softmax, run_softmax)
}  // extern "C"
