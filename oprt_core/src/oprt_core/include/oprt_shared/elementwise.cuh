// elementwise.cuh: kernels of the elementwise ops (copy, vector_add, relu).
//
// Paths, picked once per descriptor from the validated plan (oprt_plan_*) and per call from pointer
// alignment:
//  - contiguous: one 16-byte pack per thread, one block per kBlock packs (all loads of a thread issued
//    before its store), scalar head/tail when the pointers share a misalignment, all-scalar tiles when not;
//  - transpose: out's innermost dim has stride 1 but x's does not, and some other dim of x has stride 1:
//    shared-memory tiles read coalesced along x's unit-stride dim and written coalesced along out's
//    (2-byte elements move in pairs where the extents, strides and pointers allow);
//  - rows: the last merged dim is long: threads across it, rows by an index decomposition, 16-byte packs
//    when every tensor has unit stride there and every row starts 16-byte aligned;
//  - flat: anything else, one element per thread with a full index decomposition.
#pragma once

#include "common.cuh"

namespace oprt_kernels {

// Packs per thread on the contiguous path: 1 pack a thread and a block per 256 packs, the best shape measured on the
// H200 (101% of cudaMemcpy for a 512 MiB f32 copy; more packs a thread, or a one-wave grid-stride grid, read less:
// results/h200/tune/elementwise-variants.log).
constexpr int kUnroll = 1;

// Ops take (a, b); unary ops ignore b.
struct CopyOp {
    template <typename T> __device__ __forceinline__ T operator()(T a, T) const { return a; }
};
struct ReluOp {
    float slope;
    template <typename T> __device__ __forceinline__ T operator()(T a, T) const {
        float f = to_f(a);
        return from_f<T>(f > 0.f ? f : f * slope);
    }
};
struct AddOp {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const {
        return from_f<T>(to_f(a) + to_f(b));
    }
};
// silu(gate) * up = gate / (1 + exp(-gate)) * up in f32 (__expf: ex2.approx of a product, ~2 ulp; for gate < -88.7
// exp overflows to inf and the quotient is -0, inside the op's atol).
struct SiluMulOp {
    template <typename T> __device__ __forceinline__ T operator()(T gate, T up) const {
        const float g = to_f(gate);
        return from_f<T>(g / (1.f + __expf(-g)) * to_f(up));
    }
};

template <int NIn, typename T, typename Op>
__device__ __forceinline__ Pack<T> apply_pack(const Op &op, const Pack<T> &a, const Pack<T> &b) {
    Pack<T> r;
#pragma unroll
    for (int e = 0; e < Pack<T>::N; ++e) r.v[e] = op(a.v[e], NIn == 2 ? b.v[e] : a.v[e]);
    return r;
}

// ---- contiguous -------------------------------------------------------------------------------
// One tile per block (grid-stride over tiles only when there are more tiles than a grid may have):
// a block of kBlock threads moves kUnroll packs per thread, the kUnroll (x NIn) 16-byte loads issued
// before the first store; the hardware block scheduler balances the SMs. Loads are plain __ldg: the
// L1::no_allocate / L2::256B prefetch hints cost 5-9% of bandwidth here. Pack index =
// tile * kTilePacks + u * kBlock + threadIdx.x: every load and store instruction of a warp covers 512
// contiguous bytes. No division anywhere.
constexpr int kTilePacks = kBlock * kUnroll;
constexpr int kScalarPerThread = 8;
constexpr int kTileScalars = kBlock * kScalarPerThread;

// 16-byte packs from `head` (all pointers share their misalignment; head < one pack) on; the head and
// the tail (< one pack each) are done by block 0's first threads.
template <typename T, int NIn, typename Op>
__global__ void __launch_bounds__(kBlock)
ew_contig_kernel(T *__restrict__ out, const T *__restrict__ a, const T *__restrict__ b, int64_t n, int64_t head,
                 int64_t nvec, int64_t ntiles, Op op) {
    constexpr int V = Pack<T>::N;
    const int tid = threadIdx.x;
    if (blockIdx.x == 0) {
        if (tid < head) out[tid] = op(a[tid], NIn == 2 ? b[tid] : a[tid]);
        const int64_t t = head + nvec * V + tid;
        if (tid < V && t < n) out[t] = op(a[t], NIn == 2 ? b[t] : a[t]);
    }
    const T *av = a + head;
    const T *bv = NIn == 2 ? b + head : av;
    T *ov = out + head;
    for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const int64_t i0 = tile * kTilePacks + tid;
        Pack<T> pa[kUnroll], pb[kUnroll];
        if (i0 + (kUnroll - 1) * kBlock < nvec) {  // full tile: every load, then every store
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                pa[u] = load_pack(av + (i0 + u * kBlock) * V);
                if (NIn == 2) pb[u] = load_pack(bv + (i0 + u * kBlock) * V);
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) store_pack(ov + (i0 + u * kBlock) * V, apply_pack<NIn>(op, pa[u], pb[u]));
        } else {  // the last tile
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int64_t i = i0 + u * kBlock;
                if (i < nvec) {
                    pa[u] = load_pack(av + i * V);
                    if (NIn == 2) pb[u] = load_pack(bv + i * V);
                }
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int64_t i = i0 + u * kBlock;
                if (i < nvec) store_pack(ov + i * V, apply_pack<NIn>(op, pa[u], pb[u]));
            }
        }
    }
}

// Pointers whose misalignments differ: element accesses, kScalarPerThread per thread, loads first.
template <typename T, int NIn, typename Op>
__global__ void __launch_bounds__(kBlock)
ew_contig_scalar_kernel(T *__restrict__ out, const T *__restrict__ a, const T *__restrict__ b, int64_t n,
                        int64_t ntiles, Op op) {
    for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const int64_t i0 = tile * kTileScalars + threadIdx.x;
        T va[kScalarPerThread], vb[kScalarPerThread];
#pragma unroll
        for (int u = 0; u < kScalarPerThread; ++u) {
            const int64_t i = i0 + u * kBlock;
            if (i < n) {
                va[u] = a[i];
                vb[u] = NIn == 2 ? b[i] : va[u];
            }
        }
#pragma unroll
        for (int u = 0; u < kScalarPerThread; ++u) {
            const int64_t i = i0 + u * kBlock;
            if (i < n) out[i] = op(va[u], vb[u]);
        }
    }
}

// ---- transpose (unary) --------------------------------------------------------------------------
struct TransposeArgs {
    int64_t R, C;          // extents of x's unit-stride dim (r) and out's unit-stride dim (c)
    int64_t x_sc, o_sr;    // x's stride along c, out's stride along r
    int64_t tiles_r, tiles_c, batch;
    Indexer<2> batch_idx;  // the other dims: offsets of out (0) and x (1)
};

constexpr int kTransposeRows = 8;  // blockDim = (kWarp, kTransposeRows)
// A tile's extent is a whole number of warp-wide accesses: 64 elements (a 64-lane warp's one access, a 32-lane
// warp's two); 16-bit pairs move 2 x kWarp elements an access, so their tiles are 64 (32 lanes) or 128 (64 lanes).
constexpr int kTransposeTile = 64;
constexpr int kTransposeTilePairs = 2 * kWarp > 64 ? 2 * kWarp : 64;
// 16-bit pairs on large views: tiles of 128 along r (two 128-byte loads a row, as f32's 64), 64 along c: 16 KB a
// block where 64 x 64 pairs tiles move 8 KB (6 resident blocks, the register cap, would keep half the f32 kernel's
// bytes in flight an SM). Taken where the 128 x 64 tiles still make >= kTransposeWidePairsWaves waves of 6 blocks an
// SM (16384^2 16-bit: ~96% of cudaMemcpy on the H200); below that (4096^2 f16, 2.6 waves) 64 x 64 reads faster
// (results/h200/tune/transpose-pairs-tiles.log).
constexpr int kTransposeTileRPairs = 2 * kWarp > 128 ? 2 * kWarp : 128;
constexpr int kTransposePairsBlocksPerSm = 6 * 32 / kWarp;  // the pairs kernel's __launch_bounds__ minimum (6 of 256 threads)
constexpr int64_t kTransposeWidePairsWaves = 8;

// A kTile x kTile tile per block through shared memory: loads coalesced along x's unit-stride dim r,
// stores along out's c. Grid (tiles_c, tiles_r, batch), each dim grid-strided past the grid's limits: no
// division per tile. Interior tiles skip the bounds checks (a block-uniform branch).
// kPairs (2-byte elements; R, C, both cross strides and every batch stride even, both pointers 4-byte
// aligned): each thread moves element pairs, a 4-byte load along r and a 4-byte store along c, so a warp
// instruction covers 128 bytes instead of 64 (on the H200, 8192^2 f16: 85% of cudaMemcpy against 57% element by
// element).
// kTileR x kTileC: the tile's extents along x's unit-stride dim r and out's c (64 x 64; 16-bit pairs on large views
// 128 x 64, so that a block moves 16 KB as the f32 kernel does: kTransposeTileRPairs).
template <typename T, int kTileR, int kTileC, bool kPairs, typename Op>
__global__ void __launch_bounds__(kWarp * kTransposeRows, kPairs ? kTransposePairsBlocksPerSm : 0)
ew_transpose_kernel(T *__restrict__ out, const T *__restrict__ x, TransposeArgs args, Op op) {
    static_assert(!kPairs || sizeof(T) == 2, "pairs of 2-byte elements only");
    constexpr int kPad = 4 / sizeof(T);    // row pitch of an odd number of 32-bit words: no bank conflicts
    constexpr int kStep = kPairs ? 2 : 1;  // elements a thread moves per access
    constexpr int kPerRowR = kTileR / (kWarp * kStep), kPerRowC = kTileC / (kWarp * kStep);
    static_assert(kPerRowR >= 1 && kPerRowC >= 1 && kPerRowR * kWarp * kStep == kTileR && kPerRowC * kWarp * kStep == kTileC,
                  "tile extents: whole warp-wide accesses");
    __shared__ __align__(4) T tile[kTileC][kTileR + kPad];
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int64_t bi = blockIdx.z; bi < args.batch; bi += gridDim.z) {
        int64_t off[2];
        args.batch_idx.offsets(bi, off);
        for (int64_t tr = blockIdx.y; tr < args.tiles_r; tr += gridDim.y) {
            for (int64_t tc = blockIdx.x; tc < args.tiles_c; tc += gridDim.x) {
                const int64_t r0 = tr * kTileR, c0 = tc * kTileC;
                const bool full = r0 + kTileR <= args.R && c0 + kTileC <= args.C;
                const T *xb = x + off[1] + r0 + c0 * args.x_sc;  // x at (r0, c0)
                T *ob = out + off[0] + r0 * args.o_sr + c0;      // out at (r0, c0)
#pragma unroll
                for (int j = 0; j < kTileC / kTransposeRows; ++j) {
                    const int c = ty + j * kTransposeRows;
#pragma unroll
                    for (int i = 0; i < kPerRowR; ++i) {
                        const int r = kStep * (tx + i * kWarp);  // even with pairs: r0 + r < R implies r + 1 too
                        if (full || (r0 + r < args.R && c0 + c < args.C)) {
                            if constexpr (kPairs) {  // a plain 4-byte load, two 2-byte shared stores
                                const uint32_t w = *reinterpret_cast<const uint32_t *>(xb + r + c * args.x_sc);
                                const uint16_t lo = (uint16_t)(w & 0xffffu), hi = (uint16_t)(w >> 16);
                                memcpy(&tile[c][r], &lo, 2);
                                memcpy(&tile[c][r + 1], &hi, 2);
                            } else {
                                tile[c][r] = xb[r + c * args.x_sc];
                            }
                        }
                    }
                }
                __syncthreads();
#pragma unroll
                for (int j = 0; j < kTileR / kTransposeRows; ++j) {
                    const int r = ty + j * kTransposeRows;
#pragma unroll
                    for (int i = 0; i < kPerRowC; ++i) {
                        const int c = kStep * (tx + i * kWarp);
                        if (full || (r0 + r < args.R && c0 + c < args.C)) {
                            if constexpr (kPairs) {
                                T v0 = tile[c][r], v1 = tile[c + 1][r];
                                v0 = op(v0, v0);
                                v1 = op(v1, v1);
                                uint16_t b0, b1;
                                memcpy(&b0, &v0, 2);
                                memcpy(&b1, &v1, 2);
                                *reinterpret_cast<uint32_t *>(ob + r * args.o_sr + c) = b0 | ((uint32_t)b1 << 16);
                            } else {
                                const T v = tile[c][r];
                                ob[r * args.o_sr + c] = op(v, v);
                            }
                        }
                    }
                }
                __syncthreads();
            }
        }
    }
}

// ---- rows -----------------------------------------------------------------------------------
struct RowsArgs {
    int64_t rows, C;
    int64_t last[3];   // strides along the last dim: out, in0, in1
    Indexer<3> outer;  // row -> offsets of out, in0, in1
};

template <typename T, int NIn, bool kVec, typename Op>
__global__ void __launch_bounds__(kBlock)
ew_rows_kernel(T *__restrict__ out, const T *__restrict__ a, const T *__restrict__ b, RowsArgs args, Op op) {
    constexpr int V = Pack<T>::N;
    const int64_t row_step = (int64_t)gridDim.x * blockDim.y;
    for (int64_t row = (int64_t)blockIdx.x * blockDim.y + threadIdx.y; row < args.rows; row += row_step) {
        int64_t off[3];
        args.outer.offsets(row, off);
        T *o = out + off[0];
        const T *pa = a + off[1];
        const T *pb = NIn == 2 ? b + off[2] : pa;
        if (kVec) {
            const int64_t nvec = args.C / V;
            for (int64_t i = threadIdx.x; i < nvec; i += blockDim.x) {
                Pack<T> va = load_pack(pa + i * V), vb;
                if (NIn == 2) vb = load_pack(pb + i * V);
                store_pack(o + i * V, apply_pack<NIn>(op, va, vb));
            }
            for (int64_t i = nvec * V + threadIdx.x; i < args.C; i += blockDim.x)
                o[i] = op(pa[i], NIn == 2 ? pb[i] : pa[i]);
        } else {
            for (int64_t i = threadIdx.x; i < args.C; i += blockDim.x) {
                T va = pa[i * args.last[1]];
                o[i * args.last[0]] = op(va, NIn == 2 ? pb[i * args.last[2]] : va);
            }
        }
    }
}

// ---- flat -----------------------------------------------------------------------------------
template <typename T, int NIn, typename Op>
__global__ void __launch_bounds__(kBlock)
ew_flat_kernel(T *__restrict__ out, const T *__restrict__ a, const T *__restrict__ b, int64_t n, Indexer<3> idx,
               Op op) {
    const int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += nthreads) {
        int64_t off[3];
        idx.offsets(i, off);
        T va = a[off[1]];
        out[off[0]] = op(va, NIn == 2 ? b[off[2]] : va);
    }
}

}  // namespace oprt_kernels
