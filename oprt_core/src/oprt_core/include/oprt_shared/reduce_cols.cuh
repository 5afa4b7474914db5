// reduce_cols.cuh: reduce_sum over a leading axis (the "cols" path of reduce_sum.cu): threads across the kept
// unit-stride dim, rows of the reduced dim in flight, partial sums combined in shared memory, the reduced
// dim split across blocks through the workspace (and a finishing kernel) when the column tiles are few.
// A header so that the tune harness (scripts/tune/) can time the library's kernel in block shapes and chunkings the
// library does not pick (as it does the softmax kernels); reduce_sum.cu plans and launches it.
#pragma once

#include <type_traits>

#include "common.cuh"

namespace oprt_kernels {

// Blocks of 256 per SM the register budget must allow: 1 (a block per row read 8192x8192 f32 over axis -1 at ~95%
// of cudaMemcpy on the H200, where 3 blocks, <= 85 registers, in a one-wave grid read 88%).
constexpr int kReduceMinBlocks = 1;

struct ColsArgs {
    int64_t outer, inner, n, rs, splits, chunk, tiles;
    int64_t o_si;          // out stride along inner
    Indexer<2> outer_idx;  // outer -> x offset (0), out offset (1)
};

// acc[e] += element e of v, in f32. bf16 through pack_to_f (common.cuh: a 32-bit word at a time), f32 and f16
// element by element.
template <typename T> __device__ __forceinline__ void add_pack(float (&acc)[Pack<T>::N], const Pack<T> &v) {
    if constexpr (std::is_same_v<T, bf16_t>) {
        float f[Pack<T>::N];
        pack_to_f(v, f);
#pragma unroll
        for (int e = 0; e < Pack<T>::N; ++e) acc[e] += f[e];
    } else {
#pragma unroll
        for (int e = 0; e < Pack<T>::N; ++e) acc[e] += to_f(v.v[e]);
    }
}

// kRow: 1-D blocks (blockDim.y == 1: a block's threads across kBlock packs of one row, kUnroll rows in
// flight per thread) with plain __ldg loads, the best configuration measured on wide rows.
// kEvictFirst: the full trips load with an L2 evict_first policy instead (data read once). Tune harness only: on the
// H200 it gained nothing after the bench's memset flush and lost 3-5% with 1-D blocks.
// kInterleave: split s sums rows s, s + splits, s + 2 splits, ... instead of the chunk [s * chunk, (s + 1) * chunk),
// so that all blocks read one band of neighbouring rows at a time (one sweep of DRAM) instead of splits separate
// streams; the workspace layout is the same. Tune harness only (no gain). kUnroll: rows in flight a thread.
template <typename T, bool kVec, bool kRow = false, bool kEvictFirst = false, bool kInterleave = false, int kUnroll = 8>
__global__ void __launch_bounds__(kBlock, kReduceMinBlocks)
reduce_cols_kernel(T *__restrict__ out, float *__restrict__ ws, const T *__restrict__ x, ColsArgs a) {
    constexpr int VV = kVec ? Pack<T>::N : 1;
    __shared__ float smem[kBlock * VV];
    // split columns: the finishing kernel (launch_dependent) may be scheduled now; it waits for this grid. Only
    // then: an early trigger would also release a caller's own programmatic launch after a whole reduction.
    if (a.splits > 1) allow_dependent_grid();
    const uint64_t pol = kEvictFirst ? l2_policy(false) : 0;
    const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
    const int64_t items = a.outer * a.tiles * a.splits;
    for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
        const int64_t s = item % a.splits, rest = item / a.splits;
        const int64_t tile = rest % a.tiles, o = rest / a.tiles;
        int64_t off[2];
        a.outer_idx.offsets(o, off);
        const int64_t col0 = (tile * bx + tx) * VV;
        // this split's rows: begin, begin + 1, ... < end of p's rows (below), rs elements apart
        int64_t begin, end, rs;
        if (kInterleave) {
            begin = 0, end = s < a.n ? (a.n - s + a.splits - 1) / a.splits : 0, rs = a.rs * a.splits;
        } else {
            begin = s * a.chunk, end = begin + a.chunk < a.n ? begin + a.chunk : a.n, rs = a.rs;
        }
        float acc[VV] = {};
        if (col0 < a.inner) {
            const T *p = x + off[0] + col0 + (kInterleave ? s * a.rs : 0);
            // full trips: kUnroll unpredicated row loads in flight per thread; then at most one predicated trip
            int64_t r = begin + ty;
            if constexpr (kVec) {
                for (; r + (kUnroll - 1) * by < end; r += kUnroll * by) {
                    Pack<T> v[kUnroll];
#pragma unroll
                    for (int u = 0; u < kUnroll; ++u) {
                        if constexpr (kEvictFirst) {
                            const uint4 raw = ld_policy(p + (r + u * by) * rs, pol);
                            memcpy(&v[u], &raw, 16);
                        } else {
                            v[u] = load_pack_as<kRow>(p + (r + u * by) * rs);
                        }
                    }
#pragma unroll
                    for (int u = 0; u < kUnroll; ++u) add_pack(acc, v[u]);
                }
                if (r < end) {
                    Pack<T> v[kUnroll];
#pragma unroll
                    for (int u = 0; u < kUnroll; ++u) {
                        const int64_t rr = r + u * by;
                        v[u] = rr < end ? load_pack(p + rr * rs) : zero_pack<T>();
                    }
#pragma unroll
                    for (int u = 0; u < kUnroll; ++u) add_pack(acc, v[u]);
                }
            } else {
                for (; r + (kUnroll - 1) * by < end; r += kUnroll * by) {
                    T v[kUnroll];
#pragma unroll
                    for (int u = 0; u < kUnroll; ++u) v[u] = p[(r + u * by) * rs];
#pragma unroll
                    for (int u = 0; u < kUnroll; ++u) acc[0] += to_f(v[u]);
                }
                for (; r < end; r += by) acc[0] += to_f(p[r * rs]);
            }
        }
#pragma unroll
        for (int e = 0; e < VV; ++e) smem[(ty * bx + tx) * VV + e] = acc[e];
        __syncthreads();
        // the by partial sums of each column: thread (tx, ty) finishes columns e = ty, ty + by, ... of its pack
        for (int e = ty; e < VV; e += by) {
            float sum = 0.f;
            for (int k = 0; k < by; ++k) sum += smem[(k * bx + tx) * VV + e];
            const int64_t col = col0 + e;
            if (col < a.inner) {
                if (a.splits == 1) out[off[1] + col * a.o_si] = from_f<T>(sum);
                else ws[(s * a.outer + o) * a.inner + col] = sum;
            }
        }
        __syncthreads();
    }
}

template <typename T>
__global__ void __launch_bounds__(kBlock)
reduce_cols_finish_kernel(T *__restrict__ out, const float *__restrict__ ws, ColsArgs a) {
    wait_for_prerequisite_grid();  // launched by launch_dependent: the column kernel's partial sums are in ws
    const int64_t total = a.outer * a.inner;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        // 8 independent loads in flight (splits is up to ~2 x resident blocks / tiles; 16-32 for the 1-D blocks
        // of 16384 columns): one thread an output, so each round trip is on the critical path
        float acc[8] = {};
        int64_t s = 0;
        for (; s + 7 < a.splits; s += 8) {
            float v[8];
#pragma unroll
            for (int u = 0; u < 8; ++u) v[u] = ws[(s + u) * total + i];
#pragma unroll
            for (int u = 0; u < 8; ++u) acc[u] += v[u];
        }
        for (; s < a.splits; ++s) acc[0] += ws[s * total + i];
        const float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        const int64_t o = i / a.inner, col = i - o * a.inner;
        int64_t off[2];
        a.outer_idx.offsets(o, off);
        out[off[1] + col * a.o_si] = from_f<T>(sum);
    }
}


// ---- band-ordered column tiles (reduce_sum.cu, kBandMinBytes) ---------------------------------------------------
// The rows kernel's 95-96% after the bench's flush belongs to many short blocks that each end their own reduction
// in the hardware's block order. This is that shape over a leading axis: a block (BX x BY threads)
// reads one tile of BY * U * K rows x BX packs, U rows in flight a thread, K trips, leaves the tile's column sums
// in ws, and exits. Blocks are numbered tile fastest, so the blocks resident at any moment read one band of
// neighbouring rows across the whole width (one sweep of DRAM in row order, as the rows kernel does).
// reduce_cols_band_finish_kernel adds each column's a.splits partial sums (in split order: deterministic).
// ColsArgs: tiles = ceil(inner / (BX * V)), chunk = BY * U * K rows, splits = ceil(n / chunk); ws holds
// splits x outer x inner floats (the layout of reduce_cols_kernel's). Needs 16-byte packs (inner % V == 0,
// 16-byte aligned rows).
// kKeepWs (tune harness only, no gain): the partial sums are stored with an L2
// evict_last policy, meant to keep the streamed input from pushing them out to DRAM before the finishing kernel reads
// them. Its f32 build takes more registers: 5 blocks an SM instead of 6.
// The kernel's static shared memory: a padded row of BX packs' columns for each of the BY thread rows.
template <typename T, int BX, int BY> __host__ __device__ constexpr size_t band_static_smem() {
    return sizeof(float) * BY * (BX * Pack<T>::N + 1);
}
template <typename T, int BX, int BY, int U, int K, bool kPlain = false, bool kKeepWs = false>
__global__ void __launch_bounds__(BX * BY)
reduce_cols_band_kernel(float *__restrict__ ws, const T *__restrict__ x, ColsArgs a) {
    constexpr int VV = Pack<T>::N;
    __shared__ float smem[BY][BX * VV + 1];
    static_assert(sizeof(smem) == band_static_smem<T, BX, BY>(), "band_static_smem must match the array");
    allow_dependent_grid();  // the finishing kernel's blocks may be scheduled now; they wait for this grid
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t item = blockIdx.x;
    const int64_t tile = item % a.tiles, rest = item / a.tiles;
    const int64_t s = rest % a.splits, o = rest / a.splits;
    int64_t off[2];
    a.outer_idx.offsets(o, off);
    const int64_t col0 = (tile * BX + tx) * VV;
    const int64_t begin = s * a.chunk, end = begin + a.chunk < a.n ? begin + a.chunk : a.n;
    float acc[VV] = {};
    if (col0 < a.inner) {
        const T *p = x + off[0] + col0;
        if (end - begin == (int64_t)BY * U * K) {
#pragma unroll 1
            for (int k = 0; k < K; ++k) {
                Pack<T> v[U];
#pragma unroll
                for (int u = 0; u < U; ++u) v[u] = load_pack_as<kPlain>(p + (begin + (k * U + u) * BY + ty) * a.rs);
#pragma unroll
                for (int u = 0; u < U; ++u) add_pack(acc, v[u]);
            }
        } else {
            for (int64_t r = begin + ty; r < end; r += BY) add_pack(acc, load_pack(p + r * a.rs));
        }
    }
#pragma unroll
    for (int e = 0; e < VV; ++e) smem[ty][tx * VV + e] = acc[e];
    __syncthreads();
    // the BY partial sums of each of the tile's BX * VV columns, one thread a column
    for (int c = ty * BX + tx; c < BX * VV; c += BX * BY) {
        float sum = 0.f;
#pragma unroll
        for (int k = 0; k < BY; ++k) sum += smem[k][c];
        const int64_t col = tile * BX * VV + c;
        if (col < a.inner) {
            float *w = ws + (s * a.outer + o) * a.inner + col;
            if constexpr (kKeepWs) st_f32_policy(w, sum, l2_policy(true));
            else *w = sum;
        }
    }
}

// Each column's a.splits partial sums of reduce_cols_band_kernel: blocks of 32 x 8 threads over 128 columns (a lane
// 4 columns, float4 loads: inner % 4 == 0), the 8 thread rows taking partial rows ty, ty + 8, ... with 8 loads in
// flight, then combined in shared memory in a fixed order.
template <typename T>
__global__ void __launch_bounds__(256)
reduce_cols_band_finish_kernel(T *__restrict__ out, const float *__restrict__ ws, ColsArgs a) {
    __shared__ float4 part[8][32];
    wait_for_prerequisite_grid();
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t total = a.outer * a.inner;  // a multiple of 4
    const int64_t i = ((int64_t)blockIdx.x * 32 + tx) * 4;
    float4 acc[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) acc[u] = make_float4(0.f, 0.f, 0.f, 0.f);
    if (i < total) {
        int64_t s = ty;
        for (; s + 7 * 8 < a.splits; s += 64) {
            float4 v[8];
#pragma unroll
            for (int u = 0; u < 8; ++u) v[u] = ld_cg(reinterpret_cast<const float4 *>(ws + (s + u * 8) * total + i));
#pragma unroll
            for (int u = 0; u < 8; ++u) acc[u].x += v[u].x, acc[u].y += v[u].y, acc[u].z += v[u].z, acc[u].w += v[u].w;
        }
        for (; s < a.splits; s += 8) {
            const float4 v = ld_cg(reinterpret_cast<const float4 *>(ws + s * total + i));
            acc[0].x += v.x, acc[0].y += v.y, acc[0].z += v.z, acc[0].w += v.w;
        }
    }
    float4 t = acc[0];
#pragma unroll
    for (int u = 1; u < 8; ++u) t.x += acc[u].x, t.y += acc[u].y, t.z += acc[u].z, t.w += acc[u].w;
    part[ty][tx] = t;
    __syncthreads();
    if (ty == 0 && i < total) {
        float4 sum = part[0][tx];
#pragma unroll
        for (int k = 1; k < 8; ++k) sum.x += part[k][tx].x, sum.y += part[k][tx].y, sum.z += part[k][tx].z, sum.w += part[k][tx].w;
        const float f[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int64_t o = (i + e) / a.inner, col = (i + e) - o * a.inner;
            int64_t off[2];
            a.outer_idx.offsets(o, off);
            out[off[1] + col * a.o_si] = from_f<T>(f[e]);
        }
    }
}

}  // namespace oprt_kernels
