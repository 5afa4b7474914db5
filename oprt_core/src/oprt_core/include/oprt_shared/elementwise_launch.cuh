// elementwise_launch.cuh: what the elementwise ops (copy, vector_add, relu, silu_mul: operators/<op>/<op>.cu) share
// on the host: the plan's path (contiguous, transpose, rows, flat) and the launch of elementwise.cuh's kernels on it.
#pragma once

#include <cstdint>

#include "elementwise.cuh"

using namespace oprt_kernels;

namespace {

enum class EwPath { kEmpty, kContig, kTranspose, kRows, kFlat };

// Rows path once the last dim is at least this long (below it a warp would idle) and there are enough
// rows to fill the grid; otherwise the flat path.
constexpr int64_t kMinRowLength = 32;
constexpr int64_t kMinRows = 1024;

struct EwDesc {
    oprt_elementwise_plan_t plan;
    EwPath path;
    int32_t tdim;  // transpose: the dim along which x has unit stride
    size_t driver_bytes = 0;  // copy only: > 0 where a contiguous copy goes to gpuMemcpyAsync (this many bytes)
};

oprt_status_t plan_paths(EwDesc *d) {
    const oprt_elementwise_plan_t &p = d->plan;
    const int nd = p.ndim, last = nd - 1;
    if (p.numel == 0) d->path = EwPath::kEmpty;
    else if (p.contiguous || nd == 0) d->path = EwPath::kContig;
    else {
        d->path = EwPath::kFlat;
        d->tdim = -1;
        if (p.ninputs == 1 && nd >= 2 && p.out_strides[last] == 1 && p.in_strides[0][last] != 1) {
            for (int k = last - 1; k >= 0; --k)
                if (p.in_strides[0][k] == 1) {
                    d->tdim = k;
                    break;
                }
        }
        if (d->tdim >= 0) d->path = EwPath::kTranspose;
        else if (nd >= 2 && p.shape[last] >= kMinRowLength && p.numel / p.shape[last] >= kMinRows)
            d->path = EwPath::kRows;
    }
    return OPRT_STATUS_SUCCESS;
}

// One block per tile (at least one block: block 0 also does a contiguous launch's head and tail); past
// 2^24 tiles (64 GiB of packs at kUnroll = 1) the kernels loop over tiles.
inline unsigned grid_tiles(int64_t ntiles) {
    constexpr int64_t kMaxGrid = (int64_t)1 << 24;
    return (unsigned)(ntiles < 1 ? 1 : ntiles < kMaxGrid ? ntiles : kMaxGrid);
}

template <typename T, int NIn, typename Op>
oprt_status_t launch(const EwDesc &d, void *out_, const void *a_, const void *b_, gpuStream_t stream, Op op,
                     const char *name) {
    const oprt_elementwise_plan_t &p = d.plan;
    T *out = static_cast<T *>(out_);
    const T *a = static_cast<const T *>(a_);
    const T *b = NIn == 2 ? static_cast<const T *>(b_) : a;
    const int nd = p.ndim, last = nd - 1;
    switch (d.path) {
    case EwPath::kEmpty: return OPRT_STATUS_SUCCESS;
    case EwPath::kContig: {
        const int64_t n = p.numel;
        uintptr_t mis = (uintptr_t)out & 15u;
        bool vec = ((uintptr_t)a & 15u) == mis && ((uintptr_t)b & 15u) == mis && mis % sizeof(T) == 0;
        if (vec) {
            int64_t head = mis == 0 ? 0 : (int64_t)((16 - mis) / sizeof(T));
            if (head > n) head = n;
            const int64_t nvec = (n - head) / Pack<T>::N;
            const int64_t ntiles = ceil_div(nvec, kTilePacks);
            note_launch("ew_contig");
            ew_contig_kernel<T, NIn><<<grid_tiles(ntiles), kBlock, 0, stream>>>(out, a, b, n, head, nvec, ntiles, op);
        } else {
            const int64_t ntiles = ceil_div(n, kTileScalars);
            note_launch("ew_contig_scalar");
            ew_contig_scalar_kernel<T, NIn><<<grid_tiles(ntiles), kBlock, 0, stream>>>(out, a, b, n, ntiles, op);
        }
        break;
    }
    case EwPath::kTranspose: {
        if constexpr (NIn == 1) {
            TransposeArgs args{};
            const int k = d.tdim;
            args.R = p.shape[k];
            args.C = p.shape[last];
            args.x_sc = p.in_strides[0][last];
            args.o_sr = p.out_strides[k];
            args.batch_idx.ndim = 0;
            args.batch = 1;
            bool pairs = sizeof(T) == 2 && args.R % 2 == 0 && args.C % 2 == 0 && args.x_sc % 2 == 0 &&
                         args.o_sr % 2 == 0 && ((uintptr_t)out & 3u) == 0 && ((uintptr_t)a & 3u) == 0;
            for (int i = 0; i < nd; ++i) {
                if (i == k || i == last) continue;
                const int j = args.batch_idx.ndim++;
                args.batch_idx.ext[j] = p.shape[i];
                args.batch_idx.stride[0][j] = p.out_strides[i];
                args.batch_idx.stride[1][j] = p.in_strides[0][i];
                args.batch *= p.shape[i];
                pairs = pairs && p.out_strides[i] % 2 == 0 && p.in_strides[0][i] % 2 == 0;
            }
            const int tile = pairs ? kTransposeTilePairs : kTransposeTile;
            args.tiles_c = ceil_div(args.C, (int64_t)tile);
            // 16-bit pairs in 128 x 64 tiles where those still make kTransposeWidePairsWaves waves (elementwise.cuh)
            const int64_t wide_tiles = ceil_div(args.R, (int64_t)kTransposeTileRPairs) * args.tiles_c * args.batch;
            const bool wide = pairs && wide_tiles >= kTransposeWidePairsWaves * kTransposePairsBlocksPerSm *
                                                         (int64_t)device_limits().sm_count;
            args.tiles_r = ceil_div(args.R, (int64_t)(wide ? kTransposeTileRPairs : tile));
            const dim3 block(kWarp, kTransposeRows);
            const dim3 grid((unsigned)(args.tiles_c < 0x7fffffff ? args.tiles_c : 0x7fffffff),
                            (unsigned)(args.tiles_r < 65535 ? args.tiles_r : 65535),
                            (unsigned)(args.batch < 65535 ? args.batch : 65535));
            if constexpr (sizeof(T) == 2) {
                if (wide) {
                    note_launch("ew_transpose_pairs_wide");
                    ew_transpose_kernel<T, kTransposeTileRPairs, kTransposeTilePairs, true>
                        <<<grid, block, 0, stream>>>(out, a, args, op);
                    break;
                }
                if (pairs) {
                    note_launch("ew_transpose_pairs");
                    ew_transpose_kernel<T, kTransposeTilePairs, kTransposeTilePairs, true>
                        <<<grid, block, 0, stream>>>(out, a, args, op);
                    break;
                }
            }
            note_launch("ew_transpose");
            ew_transpose_kernel<T, kTransposeTile, kTransposeTile, false><<<grid, block, 0, stream>>>(out, a, args, op);
        }
        break;
    }
    case EwPath::kRows: {
        RowsArgs args{};
        args.C = p.shape[last];
        args.rows = p.numel / args.C;
        args.last[0] = p.out_strides[last];
        args.last[1] = p.in_strides[0][last];
        args.last[2] = NIn == 2 ? p.in_strides[1][last] : 0;
        args.outer.ndim = last;
        bool vec = args.last[0] == 1 && args.last[1] == 1 && (NIn == 1 || args.last[2] == 1) && aligned16(out) &&
                   aligned16(a) && aligned16(b);
        for (int i = 0; i < last; ++i) {
            args.outer.ext[i] = p.shape[i];
            args.outer.stride[0][i] = p.out_strides[i];
            args.outer.stride[1][i] = p.in_strides[0][i];
            args.outer.stride[2][i] = NIn == 2 ? p.in_strides[1][i] : 0;
            for (int t = 0; t < 3; ++t) vec = vec && (args.outer.stride[t][i] * (int64_t)sizeof(T)) % 16 == 0;
        }
        const int64_t per_row = vec ? (args.C + Pack<T>::N - 1) / Pack<T>::N : args.C;
        const int tx = pow2_clamp(per_row, kWarp, kBlock);
        dim3 block(tx, kBlock / tx);
        unsigned grid = grid_all(args.rows, (int)block.y);
        note_launch(vec ? "ew_rows_vec" : "ew_rows");
        if (vec) ew_rows_kernel<T, NIn, true><<<grid, block, 0, stream>>>(out, a, b, args, op);
        else ew_rows_kernel<T, NIn, false><<<grid, block, 0, stream>>>(out, a, b, args, op);
        break;
    }
    case EwPath::kFlat: {
        Indexer<3> idx{};
        idx.ndim = nd;
        for (int i = 0; i < nd; ++i) {
            idx.ext[i] = p.shape[i];
            idx.stride[0][i] = p.out_strides[i];
            idx.stride[1][i] = p.in_strides[0][i];
            idx.stride[2][i] = NIn == 2 ? p.in_strides[1][i] : 0;
        }
        unsigned grid = grid_for(p.numel, kBlock, 4);
        note_launch("ew_flat");
        ew_flat_kernel<T, NIn><<<grid, kBlock, 0, stream>>>(out, a, b, p.numel, idx, op);
        break;
    }
    }
    return check_launch(name);
}

}  // namespace
