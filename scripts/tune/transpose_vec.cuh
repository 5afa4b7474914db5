// transpose_vec.cuh (tune-only, session 20): transposed copies with 16-byte accesses on both sides of the shared
// tile, one tile a block (ew_transpose_vec_kernel) and two tiles a block in flight (ew_transpose_vec_pipe_kernel).
// Measured on the H200 against the library's ew_transpose_kernel (elementwise.cuh), results/h200/tune/tune-s20-{1,2}.log
// and docs/performance.md "Session 20": the best one-tile form (64 x 64 at 8 blocks an SM) ties the library at
// 4096^2 f16 and trails it at 8192^2 / 16384^2 f16; the pipelined form loses everywhere. Not in the library.
// Compiled into tune.cu with -Doprt_kernels=oprt_tune, as the library's headers are.
#pragma once

#include "elementwise.cuh"

namespace oprt_kernels {

// (session 20) 16-byte accesses on both sides: a thread loads a chunk of V = 16 / sizeof(T) elements along x's
// unit-stride dim r (one LDG.128) and writes its V elements into V rows of a shared tile kept [r][c]; the store
// phase reads a chunk of V elements along c from one tile row (one LDS.128) and writes it along out's c (one
// STG.128). The tile's 16-byte chunks along c are swizzled by row (chunk j of row r at j ^ (r / V) % kChunksC),
// so that the V scalar shared stores of a warp's threads at the same k (rows V * a + k, one chunk column) fall
// in distinct bank groups and a row's chunks stay a permutation for the LDS.128s. Requires R, C, x_sc, o_sr and
// every batch stride multiples of V and both pointers 16-byte aligned; edge tiles check whole chunks.
template <typename T, int kTileR, int kTileC> struct TransposeVec {
    static constexpr int V = 16 / sizeof(T);
    static constexpr int kThreads = kWarp * kTransposeRows;
    static constexpr int kChunksR = kTileR / V, kChunksC = kTileC / V;
    static_assert(kChunksC > 0 && (kChunksC & (kChunksC - 1)) == 0, "chunks along c: a power of two");
    static_assert(kThreads % kChunksR == 0 && kThreads % kChunksC == 0, "whole tile columns / rows a pass");
    static constexpr int kPasses = kTileR * kTileC / V / kThreads;
    static_assert(kPasses * kThreads * V == kTileR * kTileC, "the block covers the tile in whole passes");
    using Tile = T[kTileR][kTileC];

    struct Pos {  // a tile: its corner in x and out, and whether it lies inside both extents
        const T *xb;
        T *ob;
        int64_t r0, c0;
        bool full;
    };
    static __device__ __forceinline__ Pos at(const T *x, T *out, const TransposeArgs &args, int64_t bi, int64_t tr,
                                             int64_t tc) {
        int64_t off[2];
        args.batch_idx.offsets(bi, off);
        Pos p;
        p.r0 = tr * kTileR, p.c0 = tc * kTileC;
        p.full = p.r0 + kTileR <= args.R && p.c0 + kTileC <= args.C;
        p.xb = x + off[1] + p.r0 + p.c0 * args.x_sc;
        p.ob = out + off[0] + p.r0 * args.o_sr + p.c0;
        return p;
    }
    // every load of the thread, none waited for here
    static __device__ __forceinline__ void load(Pack<T> (&v)[kPasses], const Pos &p, const TransposeArgs &args, int t) {
#pragma unroll
        for (int i = 0; i < kPasses; ++i) {
            const int q = t + i * kThreads, a = q % kChunksR, c = q / kChunksR;
            if (p.full || (p.r0 + V * a < args.R && p.c0 + c < args.C)) v[i] = load_pack(p.xb + V * a + c * args.x_sc);
        }
    }
    static __device__ __forceinline__ void to_shared(Tile &tile, const Pack<T> (&v)[kPasses], int t) {
#pragma unroll
        for (int i = 0; i < kPasses; ++i) {
            const int q = t + i * kThreads, a = q % kChunksR, c = q / kChunksR;
            const int col = ((c / V) ^ (a % kChunksC)) * V + c % V;  // rows V * a + k all have r / V == a
#pragma unroll
            for (int k = 0; k < V; ++k) tile[V * a + k][col] = v[i].v[k];
        }
    }
    template <typename Op>
    static __device__ __forceinline__ void store(const Tile &tile, const Pos &p, const TransposeArgs &args, int t,
                                                 const Op &op) {
#pragma unroll
        for (int i = 0; i < kPasses; ++i) {
            const int q = t + i * kThreads, j = q % kChunksC, r = q / kChunksC;
            if (p.full || (p.r0 + r < args.R && p.c0 + V * j < args.C)) {
                const uint4 sw = *reinterpret_cast<const uint4 *>(&tile[r][(j ^ ((r / V) % kChunksC)) * V]);
                Pack<T> w;
                memcpy(&w, &sw, 16);
#pragma unroll
                for (int k = 0; k < V; ++k) w.v[k] = op(w.v[k], w.v[k]);
                uint4 raw;
                memcpy(&raw, &w, 16);
                *reinterpret_cast<uint4 *>(p.ob + r * args.o_sr + V * j) = raw;
            }
        }
    }
};

// One tile a block at a time: grid (tiles_c, tiles_r, batch), grid-strided past the grid's limits.
template <typename T, int kTileR, int kTileC, int kMinBlocks, typename Op>
__global__ void __launch_bounds__(kWarp * kTransposeRows, kMinBlocks)
ew_transpose_vec_kernel(T *__restrict__ out, const T *__restrict__ x, TransposeArgs args, Op op) {
    using TV = TransposeVec<T, kTileR, kTileC>;
    __shared__ __align__(16) typename TV::Tile tile;
    const int t = threadIdx.y * kWarp + threadIdx.x;
    for (int64_t bi = blockIdx.z; bi < args.batch; bi += gridDim.z)
        for (int64_t tr = blockIdx.y; tr < args.tiles_r; tr += gridDim.y)
            for (int64_t tc = blockIdx.x; tc < args.tiles_c; tc += gridDim.x) {
                const auto p = TV::at(x, out, args, bi, tr, tc);
                Pack<T> v[TV::kPasses];
                TV::load(v, p, args, t);
                TV::to_shared(tile, v, t);
                __syncthreads();
                TV::store(tile, p, args, t, op);
                __syncthreads();
            }
}

// Two tiles a block in flight: a 1-D grid strides over the tiles (c fastest, then r, then the batch; fewer than 2^31
// tiles, 32-bit tile arithmetic); the next tile's loads are issued before the current tile's store phase, so that
// they are in flight while it writes. Only the tile index and the loaded packs live across the phases.
template <typename T, int kTileR, int kTileC, int kMinBlocks, typename Op>
__global__ void __launch_bounds__(kWarp * kTransposeRows, kMinBlocks)
ew_transpose_vec_pipe_kernel(T *__restrict__ out, const T *__restrict__ x, TransposeArgs args, Op op) {
    using TV = TransposeVec<T, kTileR, kTileC>;
    __shared__ __align__(16) typename TV::Tile tile;
    const int t = threadIdx.y * kWarp + threadIdx.x;
    const unsigned tiles_c = (unsigned)args.tiles_c, per_batch = (unsigned)(args.tiles_r * args.tiles_c);
    const unsigned total = (unsigned)(per_batch * args.batch);
    auto pos = [&](unsigned lt) {
        const unsigned bi = lt / per_batch, rem = lt - bi * per_batch, tr = rem / tiles_c;
        return TV::at(x, out, args, bi, tr, rem - tr * tiles_c);
    };
    unsigned lt = blockIdx.x;
    if (lt >= total) return;
    Pack<T> v[TV::kPasses];
    TV::load(v, pos(lt), args, t);
    for (;;) {
        TV::to_shared(tile, v, t);
        __syncthreads();
        const unsigned next = lt + gridDim.x;
        const bool more = next < total;
        if (more) TV::load(v, pos(next), args, t);
        TV::store(tile, pos(lt), args, t, op);
        __syncthreads();
        if (!more) break;
        lt = next;
    }
}

}  // namespace oprt_kernels
