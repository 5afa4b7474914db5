// reduce_sum.cu: oprt.h's reduce_sum (f32 accumulation for every dtype; entry points from oprt_entry.h around a
// plan and a launch).
//
// The layout is canonicalised (layout.cuh) into kept dims and reduced dims, then:
//  - rows: the reduced dim has unit stride (sum over the last axis, or over all): a warp (short rows) or
//    a block (long rows) per output, 16-byte packs from the first aligned element with kUnroll packs in
//    flight, warp-shuffle then shared-memory reduction. When there are too few rows to fill the GPU
//    (axis=all, a handful of long rows) each row is split into chunks across blocks; chunk sums go to the
//    workspace and a second pass adds them. Unsplit aligned rows of whole 8192-element trips (f32: k trips; 16-bit:
//    one) take reduce_rows_trips_kernel, a block a row; its 16-bit packs are summed on the tensor cores
//    (common.cuh, warp_pack_sum).
//  - cols: a kept dim has unit stride (sum over a leading axis): threads across that dim (16-byte packs
//    when rows stay aligned), blockDim.y rows in flight, partial sums combined in shared memory; the
//    reduced dim is split across blocks through the workspace when outer x inner tiles are few. Rows of
//    >= kColRowPacks packs take 1-D blocks (blockDim.y == 1: a block across 256 packs of one row), and so do
//    rows of >= kColWidePacks packs when two blocks an SM still get >= 512 rows each (cols_shape; these then run
//    at about one block an SM with 16 rows in flight a thread).
//  - anything else: the rows kernel with strided loads (or an index decomposition over several reduced
//    dims that do not merge).
#include <cstdlib>
#include <cstring>

#include "layout.cuh"
#include "oprt_entry.h"
#include "reduce_cols.cuh"

using namespace oprt_kernels;

namespace {

// ---- kernels ----------------------------------------------------------------------------------

struct RowsArgs {
    int64_t rows, n, rs, splits, chunk;
    Indexer<2> kept;  // row -> x offset (0), out offset (1)
    Indexer<1> red;   // flat reduced index -> x offset (kMulti)
};

// Partial sum of n elements p[0], p[stride], ... over lanes lane, lane + nlanes, ...; kUnroll packs in
// flight per thread (8: 128 bytes), fewer where a row has fewer than 8 packs per lane (launch_reduce).
// kLdg: full trips load through plain __ldg instead of load_pack_stream's L2::256B prefetch hint: for the chunks
// of split rows (axis=all: on the H200, 2^27 f32, ~6 points of cudaMemcpy faster than with the hint); whole rows
// keep the hint.
template <typename T, bool kVec, int kUnroll, bool kLdg = false>
__device__ __forceinline__ float row_partial(const T *p, int64_t n, int64_t stride, int lane, int nlanes) {
    constexpr int V = Pack<T>::N;
    float acc = 0.f;
    if (kVec) {
        const int64_t head = head_to_align(p, n);
        for (int64_t i = lane; i < head; i += nlanes) acc += to_f(p[i]);
        const T *q = p + head;
        const int64_t m = n - head, nv = m / V;
        float part[kUnroll] = {};
        // full trips: kUnroll unpredicated loads in flight per thread; then at most one predicated trip
        int64_t i = lane;
        for (; i + (kUnroll - 1) * (int64_t)nlanes < nv; i += kUnroll * (int64_t)nlanes) {
            Pack<T> v[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) v[u] = load_pack_as<kLdg>(q + (i + u * (int64_t)nlanes) * V);
#pragma unroll
            for (int u = 0; u < kUnroll; ++u)
#pragma unroll
                for (int e = 0; e < V; ++e) part[u] += to_f(v[u].v[e]);
        }
        if (i < nv) {
            // the last, partial trip: every load issued unconditionally (a pack past the end re-reads the
            // row's last pack, an L1 hit) and its value dropped after, so the loads stay in flight together;
            // a load guarded per pack ran these trips at 34-44% of cudaMemcpy (f16/bf16 8192x8192 axis -1)
            Pack<T> v[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int64_t k = i + u * (int64_t)nlanes;
                v[u] = load_pack(q + (k < nv ? k : nv - 1) * V);
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const bool live = i + u * (int64_t)nlanes < nv;
#pragma unroll
                for (int e = 0; e < V; ++e) part[u] += live ? to_f(v[u].v[e]) : 0.f;
            }
        }
        for (int64_t j = nv * V + lane; j < m; j += nlanes) acc += to_f(q[j]);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) acc += part[u];
    } else {
        for (int64_t i = lane; i < n; i += nlanes) acc += to_f(p[i * stride]);
    }
    return acc;
}

template <typename T, bool kVec, bool kMulti, bool kWarpItems, int kUnroll, bool kLdg = false>
__global__ void __launch_bounds__(kBlock, kReduceMinBlocks)
reduce_rows_kernel(T *__restrict__ out, float *__restrict__ ws, const T *__restrict__ x, RowsArgs a) {
    __shared__ float smem[kMaxThreadsPerBlock / kWarp];
    // the finishing kernel of split rows (launch_dependent) may be scheduled now; it waits for this grid. Also
    // when unsplit (a caller's own programmatic launch after it is released early and must, as any programmatic
    // dependent, griddepcontrol.wait before reading): 16384^2 f16 over the last axis reads ~4 points of cudaMemcpy
    // faster with the trigger here than with it only when split.
    allow_dependent_grid();
    const int64_t items = a.rows * a.splits;
    const int lanes = kWarpItems ? kWarp : blockDim.x;
    const int lane = kWarpItems ? threadIdx.x % kWarp : threadIdx.x;
    const int64_t per_block = kWarpItems ? blockDim.x / kWarp : 1;
    const int64_t first = (int64_t)blockIdx.x * per_block + (kWarpItems ? threadIdx.x / kWarp : 0);
    for (int64_t item = first; item < items; item += (int64_t)gridDim.x * per_block) {
        const int64_t row = item / a.splits, s = item - row * a.splits;
        int64_t off[2];
        a.kept.offsets(row, off);
        const int64_t begin = s * a.chunk;
        int64_t len = a.n - begin;
        if (len > a.chunk) len = a.chunk;
        float acc = 0.f;
        if (kMulti) {
            for (int64_t i = lane; i < len; i += lanes) {
                int64_t ro[1];
                a.red.offsets(begin + i, ro);
                acc += to_f(x[off[0] + ro[0]]);
            }
        } else {
            acc = row_partial<T, kVec, kUnroll, kLdg>(x + off[0] + begin * a.rs, len, a.rs, lane, lanes);
        }
        acc = kWarpItems ? warp_reduce(acc, SumOp{}) : block_reduce(acc, SumOp{}, 0.f, smem);
        if (lane == 0) {
            if (a.splits == 1) out[off[1]] = from_f<T>(acc);
            else ws[item] = acc;
        }
    }
}

// Rows of whole trips (kBlock threads x kTripUnroll packs: 8192 f32) from 16-byte aligned starts, unsplit: a block
// per row (grid = rows), no head, tail or partial trip, no early dependent trigger. Its registers (92 with CUDA 13's
// ptxas; more than 85 is what counts) leave two blocks an SM where the general kernel's 80 leave three. On the H200,
// 8192^2 f32 over the last axis after the bench's flush, it reads ~95% of cudaMemcpy against the general kernel's
// ~93%. Persistent grids that keep the next trip's loads in flight through the block reduction read less (the
// hardware's block order keeps the rows read at once together), and so does the general kernel capped at two blocks
// an SM (docs/kernels.md).
//
// 16-bit rows of one trip of kBlock x kTrip16Unroll packs (8192 elements) take it too, each pack summed across the
// warp on the tensor cores (warp_pack_sum: one mma and an add where the conversions and adds take 16; a trip is whole
// for every lane, so the warp calls it together): 16384 x 8192 16-bit over the last axis ~95% of cudaMemcpy against
// ~89% in the general kernel (which gains nothing from the mma). Longer 16-bit rows keep the general kernel (16384^2:
// 97-98% there).
constexpr int kTripUnroll = 8;
constexpr int kTrip16Unroll = 4;
template <typename T> __host__ __device__ constexpr int trip_unroll() {
    return sizeof(T) == 2 ? kTrip16Unroll : kTripUnroll;
}
template <typename T>
__global__ void __launch_bounds__(kBlock, 1)
reduce_rows_trips_kernel(T *__restrict__ out, const T *__restrict__ x, RowsArgs a) {
    __shared__ float smem[kMaxThreadsPerBlock / kWarp];
    constexpr int V = Pack<T>::N, U = trip_unroll<T>();
    const int64_t nv = a.n / V;
    for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
        int64_t off[2];
        a.kept.offsets(row, off);
        const T *p = x + off[0];
        float acc[U] = {};
        for (int64_t i = threadIdx.x; i < nv; i += kBlock * U) {
            Pack<T> v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) v[u] = load_pack_stream(p + (i + u * kBlock) * V);
#pragma unroll
            for (int u = 0; u < U; ++u) {
                if constexpr (sizeof(T) == 2) {
                    acc[u] += warp_pack_sum(v[u]);
                } else {
                    float s = 0.f;
#pragma unroll
                    for (int e = 0; e < V; e += 2) s += to_f(v[u].v[e]) + to_f(v[u].v[e + 1]);
                    acc[u] += s;
                }
            }
        }
        float s = 0.f;
#pragma unroll
        for (int u = 0; u < U; ++u) s += acc[u];
        if constexpr (sizeof(T) == 2) s *= kWarpPackSumScale;  // warp_pack_sum's 4 x (with the mma), exact
        s = block_reduce(s, SumOp{}, 0.f, smem);
        if (threadIdx.x == 0) out[off[1]] = from_f<T>(s);
    }
}

// Second pass of split rows: a block adds the chunk sums of one row (axis=all has ~2 x resident-blocks
// chunks: one warp looping over them would chain ~70 L2 round trips), 4 independent loads per thread.
template <typename T>
__global__ void __launch_bounds__(kBlock)
reduce_rows_finish_kernel(T *__restrict__ out, const float *__restrict__ ws, RowsArgs a) {
    __shared__ float smem[kMaxThreadsPerBlock / kWarp];
    wait_for_prerequisite_grid();  // launched by launch_dependent: the rows kernel's chunk sums are in ws
    const int nt = blockDim.x;
    for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {  // uniform per block
        const float *w = ws + row * a.splits;
        float acc[4] = {};
        int64_t s = threadIdx.x;
        for (; s + 3 * nt < a.splits; s += 4 * nt) {
#pragma unroll
            for (int u = 0; u < 4; ++u) acc[u] += w[s + u * nt];
        }
        for (; s < a.splits; s += nt) acc[0] += w[s];
        const float total = block_reduce((acc[0] + acc[1]) + (acc[2] + acc[3]), SumOp{}, 0.f, smem);
        if (threadIdx.x == 0) {
            int64_t off[2];
            a.kept.offsets(row, off);
            out[off[1]] = from_f<T>(total);
        }
    }
}

// ---- descriptor -------------------------------------------------------------------------------

enum class ReducePath { kEmpty, kRows, kCols };

// Rows no longer than this get a warp each, longer ones a block; 16-bit rows up to kWarpRowBytes too (a 5120-wide
// 16-bit row is 640 packs: a block of 256 had 2 packs in flight a thread and a partial second trip, a warp has 8 in
// flight and no block exchange), except rows of exactly one 16-bit trip (8192), which reduce_rows_trips takes.
// OPRT_NVIDIA_REDUCE_WARP_BYTES (read when a descriptor is made) overrides kWarpRowBytes (8192: 16-bit as f32).
constexpr int64_t kWarpRowMax = 4096;
constexpr int64_t kWarpRowBytes = 16384;
constexpr int64_t kTripElems = 16384;  // a multiple of one block trip of row_partial in every dtype
// A split chunk holds at least this many elements (rows) / rows of threads (cols).
constexpr int64_t kMinChunk = 16384;
// 128 rows per thread row: chunks of 1024 rows for 8-row blocks (H200, 8192^2 f32 axis 0: 87% of cudaMemcpy, where
// chunks of 128 rows read 77%).
constexpr int64_t kMinColChunkPerThreadRow = 128;
// Rows of at least this many 16-byte packs (16384 f32, 32768 f16) get 1-D blocks (a block across kBlock
// packs of a row) in chunks of at least kMinColChunkRow rows (H200, 16384^2 f32 axis 0: 1-D blocks in 512-row
// chunks ~100% of cudaMemcpy, 32 x 8 blocks 94-97%). Narrower rows keep 32 x 8 blocks: at 8192 f32 columns 1-D
// blocks are behind (too few tiles to fill the GPU without short chunks).
constexpr int64_t kColRowPacks = 4096;
constexpr int64_t kMinColChunkRow = 512;
// Rows of at least kColWidePacks packs (32 KB: 8192 f32 / 16384 f16 columns) take 1-D blocks at about two an
// SM when that still gives every block chunks of >= kMinColChunkRow rows (>= 2 MB): splits = the largest
// power of two <= 2 x SMs / column tiles (H200, 16384^2 f16 axis 0: ~95% of cudaMemcpy against ~91.5% in 32 x 8
// blocks; results/h200/tune/reduce-axis0-wide-blocks.log). Smaller tensors keep the rules above.
// Those 1-D blocks then run at about one an SM (half the splits) with kColWideUnroll rows in flight a thread instead
// of 8: the same bytes in flight an SM, half the partial sums for the finishing kernel (16384^2 f16: ~2 points of
// cudaMemcpy faster).
constexpr int64_t kColWidePacks = 2048;
constexpr int kColWideUnroll = 16;
// Column reductions of >= kBandMinBytes that the 1-D blocks above do not take read in band-ordered tiles
// (reduce_cols_band_kernel: a block 16 x 16 threads over 128 rows x 16 packs, 8 rows in flight a thread, tile
// fastest, then reduce_cols_band_finish_kernel): on the H200 after the bench's flush 16384 x 8192 f16 axis 0 ~88% of
// cudaMemcpy against ~84% in the 32 x 8 column kernel (results/h200/tune/reduce-axis0-band.log); on 16384^2 they lose
// to the 1-D blocks. Only rows of 1024-4095 packs were measured (8192 columns in every dtype; the 32 x 8 blocks' range
// below kColRowPacks): smaller tensors and narrower or wider rows keep the kernels above.
constexpr int64_t kBandMinBytes = 128ll << 20;
constexpr int64_t kBandMinPacks = 1024;
constexpr int kBandBX = 16, kBandBY = 16, kBandU = 8;
// The band kernel runs at most kBandMaxPerSm blocks an SM (128 KB of loads in flight an SM), capped by an untouched
// dynamic shared memory request (band_cap_smem); by its registers it fits 6 (f32) / 5 (16-bit). On the H200 the cap
// gains ~1 point of cudaMemcpy on 16-bit (16384 x 8192 axis 0), f32 is within the noise; 3 an SM read the same, 2
// lose 3-10 points (results/h200/tune/reduce-axis0-band-cap.log). The output's bits do not change.
constexpr int kBandMaxPerSm = 4;

struct ReduceState {
    oprt_axis_plan_t plan;
    ReducePath path;
    bool multi;      // rows over several reduced dims that do not merge
    bool warp_items;
    int64_t x_off, o_off;
    RowsArgs rows;
    ColsArgs cols;
    int block_x, block_y;  // cols
    size_t workspace;
    // the device figures the plan was made with (the current device's when the descriptor was created): the cols
    // path's block shape and splits are chosen again at launch (they depend on the pointers' alignment) and must come
    // out as the workspace was sized, whichever device is current then
    DeviceLimits lim;
};

void plan_reduce(ReduceState *d) {
    const oprt_axis_plan_t &p = d->plan;
    Dim kept[OPRT_MAX_NDIM], red[OPRT_MAX_NDIM];
    int nk = 0, nr = 0;
    int64_t red_numel = 1;
    for (int i = 0; i < p.ndim; ++i) {
        const bool reduced = p.axis < 0 || i == p.axis;
        if (reduced) {
            red[nr++] = {p.shape[i], p.x_strides[i], 0};
            red_numel *= p.shape[i];
        } else {
            kept[nk++] = {p.shape[i], p.x_strides[i], p.out_strides[i]};
        }
    }
    d->x_off = d->o_off = 0;
    d->workspace = 0;
    if (p.numel_out == 0) {
        d->path = ReducePath::kEmpty;
        return;
    }
    canonicalize(kept, nk, d->x_off, d->o_off);
    int64_t unused = 0;
    canonicalize(red, nr, d->x_off, unused);
    if (red_numel == 0) {  // sums of nothing: zeros
        nr = 1;
        red[0] = {0, 0, 0};
    } else if (nr == 0) {  // every reduced extent is 1
        nr = 1;
        red[0] = {1, 0, 0};
    }
    d->lim = device_limits();
    const DeviceLimits &lim = d->lim;
    const int64_t wave = (int64_t)lim.sm_count * (lim.max_threads_per_sm / kBlock);  // resident blocks
    d->multi = nr > 1;
    const bool cols = !d->multi && red[0].xs != 1 && nk >= 1 && kept[nk - 1].xs == 1;
    if (!cols) {
        RowsArgs &a = d->rows;
        a = RowsArgs{};
        a.kept = make_indexer(kept, nk);
        a.rows = 1;
        for (int i = 0; i < nk; ++i) a.rows *= kept[i].ext;
        a.n = red_numel;
        a.rs = d->multi ? 0 : red[0].xs;
        a.red.ndim = d->multi ? nr : 0;
        for (int i = 0; d->multi && i < nr; ++i) {
            a.red.ext[i] = red[i].ext;
            a.red.stride[0][i] = red[i].xs;
        }
        a.splits = 1;
        const char *wb = getenv("OPRT_NVIDIA_REDUCE_WARP_BYTES");
        const int64_t warp_bytes = wb && *wb ? atoll(wb) : kWarpRowBytes;
        d->warp_items = a.n <= kWarpRowMax ||
                        (p.dtype != OPRT_DTYPE_F32 && a.n * 2 <= warp_bytes && a.n != 8192);
        if (!d->warp_items && a.rows < 2 * wave) {
            int64_t splits = ceil_div(2 * wave, a.rows);
            int64_t by_size = ceil_div(a.n, kMinChunk);
            a.splits = splits < by_size ? splits : by_size;
            if (a.splits < 1) a.splits = 1;
        }
        a.chunk = ceil_div(a.n, a.splits);
        // chunks of whole trips (kBlock threads x 8 packs: 8192 f32 / 16384 f16 elements), so that every chunk
        // of a unit-stride row starts 16-byte aligned when the row does and runs no partial trip but the last
        if (a.splits > 1 && a.rs == 1) a.chunk = ceil_div(a.chunk, kTripElems) * kTripElems;
        a.splits = a.n == 0 ? 1 : ceil_div(a.n, a.chunk);
        if (a.splits > 1) d->workspace = (size_t)(a.rows * a.splits) * sizeof(float);
        d->path = ReducePath::kRows;
        return;
    }
    ColsArgs &c = d->cols;
    c = ColsArgs{};
    c.inner = kept[nk - 1].ext;
    c.o_si = kept[nk - 1].os;
    c.outer_idx = make_indexer(kept, nk - 1);
    c.outer = 1;
    for (int i = 0; i < nk - 1; ++i) c.outer *= kept[i].ext;
    c.n = red_numel;
    c.rs = red[0].xs;
    d->path = ReducePath::kCols;
}

// The dynamic shared memory (never touched) that leaves at most kBandMaxPerSm band blocks an SM: kBandMaxPerSm + 1
// blocks with it, their static arrays and the runtime's 1 KB a block overfill the SM (on the H200 by 3 bytes: 5 x 46695
// against 233472; ncu shows the limit of 4). 0 (no cap) where the SM's shared memory is unknown or the
// block's dynamic and static shared memory together would pass the 48 KB a launch may ask without opting in. The
// plan's limits: a descriptor planned without a GPU takes the H200's.
template <typename T> size_t band_cap_smem(const DeviceLimits &lim) {
    constexpr size_t static_smem = band_static_smem<T, kBandBX, kBandBY>();
    const size_t dyn = smem_cap_request(lim.smem_per_sm, kBandMaxPerSm, static_smem);
    return dyn + static_smem <= 48 * 1024 ? dyn : 0;
}

// Block shape and splits of the cols path depend on whether 16-byte packs are usable (known per call);
// the workspace is sized for the larger of the two choices so it never depends on pointers.
// deep: the 1-D blocks of wide rows, kColWideUnroll rows in flight a thread.
// band: reduce_cols_band_kernel's tiles (kBandMinBytes; allow_band false where the workspace is not 16-byte aligned:
// its finishing kernel reads float4s).
template <typename T>
void cols_shape(const ReduceState &d, bool vec, bool allow_band, ColsArgs &c, int &bx, int &by,
                bool &deep, bool &band) {
    const int V = vec ? Pack<T>::N : 1;
    c = d.cols;
    deep = band = false;
    const DeviceLimits &lim = d.lim;  // the plan's, not the current device's (see the descriptor)
    const int64_t packs = ceil_div(c.inner, V);
    const int64_t row_tiles = ceil_div(packs, (int64_t)kBlock), two_an_sm = 2 * (int64_t)lim.sm_count;
    if (vec && packs >= kColWidePacks && c.outer * row_tiles <= two_an_sm) {
        // long-running 1-D blocks (kColWidePacks): chosen where about two an SM get chunks of >= kMinColChunkRow
        // rows, then run at about one an SM with twice the rows in flight (kColWideUnroll)
        int64_t splits = 1;
        while (splits * 2 * c.outer * row_tiles <= two_an_sm) splits *= 2;
        const int64_t chunk = ceil_div(c.n, splits);
        if (chunk >= kMinColChunkRow) {
            if (splits > 1) splits /= 2;
            deep = true;
            bx = kBlock, by = 1;
            c.tiles = row_tiles;
            c.chunk = ceil_div(c.n, splits);
            c.splits = c.n == 0 ? 1 : ceil_div(c.n, c.chunk);
            return;
        }
    }
    // (the measured rows only: kBandMinPacks <= packs < kColRowPacks; a block an item, so the grid must hold them)
    const int64_t band_items = c.outer * ceil_div(packs, (int64_t)kBandBX) * ceil_div(c.n, (int64_t)kBandBY * kBandU);
    if (vec && allow_band && c.n > 0 && packs >= kBandMinPacks && packs < kColRowPacks && band_items <= 0x7fffffff &&
        (double)c.outer * (double)c.inner * (double)c.n * sizeof(T) >= (double)kBandMinBytes) {
        band = true;
        bx = kBandBX, by = kBandBY;
        c.tiles = ceil_div(c.inner, (int64_t)kBandBX * V);
        c.chunk = (int64_t)kBandBY * kBandU;
        c.splits = ceil_div(c.n, c.chunk);
        return;
    }
    const bool row_blocks = vec && packs >= kColRowPacks;
    bx = row_blocks ? kBlock : pow2_clamp(packs, 1, kWarp);
    by = kBlock / bx;
    c.tiles = ceil_div(c.inner, (int64_t)bx * V);
    const int64_t wave = (int64_t)lim.sm_count * (lim.max_threads_per_sm / kBlock);
    const int64_t base = c.outer * c.tiles;
    c.splits = 1;
    if (base < 2 * wave) {
        int64_t splits = ceil_div(2 * wave, base);
        int64_t by_size = c.n / (row_blocks ? kMinColChunkRow : by * kMinColChunkPerThreadRow);
        c.splits = splits < by_size ? splits : by_size;
        if (c.splits < 1) c.splits = 1;
    }
    c.chunk = ceil_div(c.n, c.splits);
    c.splits = c.n == 0 ? 1 : ceil_div(c.n, c.chunk);
}

template <typename T> size_t cols_workspace(const ReduceState &d) {
    size_t need = 0;
    for (int k = 0; k < 3; ++k) {  // scalar; packs without band tiles; packs with them where they apply
        ColsArgs c;
        int bx, by;
        bool deep, band;
        cols_shape<T>(d, k > 0, k == 2, c, bx, by, deep, band);
        size_t w = c.splits > 1 || band ? (size_t)(c.splits * c.outer * c.inner) * sizeof(float) : 0;
        if (w > need) need = w;
    }
    return need;
}

// Whether reduce_rows_trips_kernel takes these rows: unsplit, every row start 16-byte aligned, f32 rows of whole trips,
// 16-bit rows of exactly one (the dtypes and widths measured).
template <typename T> bool trips_path(const ReduceState &d, const T *x) {
    const RowsArgs &a = d.rows;
    if (d.multi || d.warp_items || a.splits != 1 || a.rs != 1 || !aligned16(x)) return false;
    const int64_t trip = (int64_t)kBlock * trip_unroll<T>() * Pack<T>::N;
    if (sizeof(T) == 4 ? a.n % trip != 0 : a.n != trip) return false;
    for (int i = 0; i < a.kept.ndim; ++i)
        if ((a.kept.stride[0][i] * (int64_t)sizeof(T)) % 16 != 0) return false;
    return true;
}

// Short reduced axes over columns (up to kShortColsRows rows: the 3 channels of (64, 3, 224, 224) over axis 1, the 50
// rows of (50, 50, 50, 50) over axis 2): a thread a column (kVec: a 16-byte pack of columns) of one outer index, its
// rows summed with 8 loads in flight, no block exchange; outer indices and columns flattened into one grid-stride
// index, so a short inner extent still fills whole warps and every row's loads coalesce. kPackOut: out is written in
// 16-byte packs too. The block kernels spent a block, a shared-memory exchange and strided scalar stores on a few rows.
constexpr int64_t kShortColsRows = 64;
template <typename T, bool kVec, bool kPackOut>
__global__ void __launch_bounds__(kBlock)
reduce_cols_short_kernel(T *__restrict__ out, const T *__restrict__ x, ColsArgs a, int64_t ipacks) {
    constexpr int VV = kVec ? Pack<T>::N : 1;
    const int64_t total = a.outer * ipacks;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t o = i / ipacks, col = (i - o * ipacks) * VV;
        int64_t off[2];
        a.outer_idx.offsets(o, off);
        const T *p = x + off[0] + col;
        float acc[VV] = {};
        int64_t r = 0;
        if constexpr (kVec) {
            for (; r + 8 <= a.n; r += 8) {
                Pack<T> v[8];
#pragma unroll
                for (int u = 0; u < 8; ++u) v[u] = load_pack(p + (r + u) * a.rs);
#pragma unroll
                for (int u = 0; u < 8; ++u) add_pack(acc, v[u]);
            }
            for (; r < a.n; ++r) add_pack(acc, load_pack(p + r * a.rs));
        } else {
            for (; r + 8 <= a.n; r += 8) {
                T v[8];
#pragma unroll
                for (int u = 0; u < 8; ++u) v[u] = p[(r + u) * a.rs];
#pragma unroll
                for (int u = 0; u < 8; ++u) acc[0] += to_f(v[u]);
            }
            for (; r < a.n; ++r) acc[0] += to_f(p[r * a.rs]);
        }
        if constexpr (kPackOut) {
            Pack<T> q;
#pragma unroll
            for (int e = 0; e < VV; ++e) q.v[e] = from_f<T>(acc[e]);
            store_pack(out + off[1] + col, q);
        } else {
#pragma unroll
            for (int e = 0; e < VV; ++e) out[off[1] + (col + e) * a.o_si] = from_f<T>(acc[e]);
        }
    }
}

template <typename T>
oprt_status_t launch_reduce(const ReduceState &d, void *ws, void *out_, const void *x_,
                            gpuStream_t stream) {
    T *out = static_cast<T *>(out_) + d.o_off;
    const T *x = static_cast<const T *>(x_) + d.x_off;
    float *w = static_cast<float *>(ws);
    if (d.path == ReducePath::kRows) {
        const RowsArgs &a = d.rows;
        const bool vec = !d.multi && a.rs == 1 && ((uintptr_t)x % sizeof(T)) == 0;
        const int64_t items = a.rows * a.splits;
        unsigned grid = d.warp_items ? grid_all(items, kBlock / kWarp) : grid_all(items, 1);
#define OPRT_ROWS(VEC, MULTI, WARP, U) \
    reduce_rows_kernel<T, VEC, MULTI, WARP, U><<<grid, kBlock, 0, stream>>>(out, w, x, a)
#define OPRT_ROWS_LDG(U) reduce_rows_kernel<T, true, false, false, U, true><<<grid, kBlock, 0, stream>>>(out, w, x, a)
        if (d.multi) {
            note_launch(d.warp_items ? "reduce_rows_multi_warp" : "reduce_rows_multi");
            if (d.warp_items) OPRT_ROWS(false, true, true, 8);
            else OPRT_ROWS(false, true, false, 8);
        } else if (vec) {
            // packs in flight per thread: 8, or what one trip of a chunk needs (a 8192-wide f16 row is 1024
            // packs, 4 per thread of a block: 8 would spend half its loads past the end; on the H200 4 packs read
            // ~20 points of cudaMemcpy faster)
            const int64_t per_lane = ceil_div(a.chunk, (int64_t)Pack<T>::N) / (d.warp_items ? kWarp : kBlock);
            const int u = per_lane >= 8 ? 8 : per_lane >= 4 ? 4 : per_lane >= 2 ? 2 : 1;
#define OPRT_ROWS_U(WARP)                          \
    switch (u) {                                   \
    case 8: OPRT_ROWS(true, false, WARP, 8); break; \
    case 4: OPRT_ROWS(true, false, WARP, 4); break; \
    case 2: OPRT_ROWS(true, false, WARP, 2); break; \
    default: OPRT_ROWS(true, false, WARP, 1); break; \
    }
            if (d.warp_items) {
                note_launch("reduce_rows_vec_warp");
                OPRT_ROWS_U(true)
            } else if (trips_path(d, x)) {
                note_launch("reduce_rows_trips");
                reduce_rows_trips_kernel<T><<<grid, kBlock, 0, stream>>>(out, x, a);
            } else if (a.splits > 1 && u == 8) {
                note_launch("reduce_rows_vec_ldg");
                OPRT_ROWS_LDG(8);  // chunks of split rows (axis=all): plain __ldg (row_partial's kLdg)
            } else {
                note_launch("reduce_rows_vec");
                OPRT_ROWS_U(false)
            }
#undef OPRT_ROWS_U
#undef OPRT_ROWS_LDG
        } else {
            note_launch(d.warp_items ? "reduce_rows_warp" : "reduce_rows");
            if (d.warp_items) OPRT_ROWS(false, false, true, 8);
            else OPRT_ROWS(false, false, false, 8);
        }
#undef OPRT_ROWS
        OPRT_CHECK(check_launch("reduce_sum rows kernel"));
        if (a.splits > 1) {
            note_launch_also("reduce_rows_finish");
            OPRT_CHECK(gpu_status(launch_dependent(reduce_rows_finish_kernel<T>, grid_for(a.rows * kBlock, kBlock),
                                                    kBlock, stream, out, (const float *)w, a),
                                   "reduce_sum rows finishing kernel"));
        }
        return OPRT_STATUS_SUCCESS;
    }
    // cols
    const ColsArgs &c0 = d.cols;
    constexpr int V = Pack<T>::N;
    bool vec = c0.inner % V == 0 && aligned16(x) && (c0.rs * (int64_t)sizeof(T)) % 16 == 0;
    for (int i = 0; i < c0.outer_idx.ndim; ++i) vec = vec && (c0.outer_idx.stride[0][i] * (int64_t)sizeof(T)) % 16 == 0;
    // short axes: reduce_cols_short_kernel (OPRT_NVIDIA_REDUCE_SHORT=0: the block kernels below, for comparison)
    const char *short_env = getenv("OPRT_NVIDIA_REDUCE_SHORT");
    if (c0.n <= kShortColsRows && !(short_env && strcmp(short_env, "0") == 0)) {
        bool pack_out = vec && c0.o_si == 1 && aligned16(out);
        for (int i = 0; i < c0.outer_idx.ndim; ++i)
            pack_out = pack_out && (c0.outer_idx.stride[1][i] * (int64_t)sizeof(T)) % 16 == 0;
        const int64_t ipacks = c0.inner / (vec ? V : 1);
        const unsigned sgrid = grid_all(c0.outer * ipacks, kBlock);
        note_launch(vec ? "reduce_cols_short_vec" : "reduce_cols_short");
        if (pack_out) reduce_cols_short_kernel<T, true, true><<<sgrid, kBlock, 0, stream>>>(out, x, c0, ipacks);
        else if (vec) reduce_cols_short_kernel<T, true, false><<<sgrid, kBlock, 0, stream>>>(out, x, c0, ipacks);
        else reduce_cols_short_kernel<T, false, false><<<sgrid, kBlock, 0, stream>>>(out, x, c0, ipacks);
        return check_launch("reduce_sum short cols kernel");
    }
    ColsArgs c;
    int bx, by;
    bool deep, band;
    cols_shape<T>(d, vec, aligned16(w), c, bx, by, deep, band);
    if (band) {
        note_launch("reduce_cols_band");
        note_launch_also("reduce_cols_band_finish");
        reduce_cols_band_kernel<T, kBandBX, kBandBY, kBandU, 1>
            <<<grid_all(c.outer * c.tiles * c.splits, 1), dim3(kBandBX, kBandBY), band_cap_smem<T>(d.lim), stream>>>(
                (float *)w, x, c);
        OPRT_CHECK(check_launch("reduce_sum band kernel"));
        OPRT_CHECK(gpu_status(launch_dependent(reduce_cols_band_finish_kernel<T>,
                                                 (unsigned)ceil_div(c.outer * c.inner, (int64_t)128), dim3(32, 8),
                                                 stream, out, (const float *)w, c),
                               "reduce_sum band finishing kernel"));
        return OPRT_STATUS_SUCCESS;
    }
    dim3 block(bx, by);
    unsigned grid = grid_all(c.outer * c.tiles * c.splits, 1);
    if (deep) {
        note_launch("reduce_cols_deep");
        reduce_cols_kernel<T, true, true, false, false, kColWideUnroll><<<grid, block, 0, stream>>>(out, w, x, c);
    } else if (vec && by == 1) {
        note_launch("reduce_cols_vec_1d");
        reduce_cols_kernel<T, true, true><<<grid, block, 0, stream>>>(out, w, x, c);
    } else if (vec) {
        note_launch("reduce_cols_vec");
        reduce_cols_kernel<T, true><<<grid, block, 0, stream>>>(out, w, x, c);
    } else {
        note_launch("reduce_cols");
        reduce_cols_kernel<T, false><<<grid, block, 0, stream>>>(out, w, x, c);
    }
    OPRT_CHECK(check_launch("reduce_sum cols kernel"));
    if (c.splits > 1) {
        note_launch_also("reduce_cols_finish");
        OPRT_CHECK(gpu_status(launch_dependent(reduce_cols_finish_kernel<T>, grid_for(c.outer * c.inner, kBlock),
                                                kBlock, stream, out, (const float *)w, c),
                               "reduce_sum cols finishing kernel"));
    }
    return OPRT_STATUS_SUCCESS;
}

// ---- entry points (OPRT_DEFINE_OP) ----------------------------------------------------------------

oprt_status_t plan_reduce_sum(ReduceState *d, size_t *workspace, const oprt_tensor_desc_t *out,
                              const oprt_tensor_desc_t *x, int32_t axis, int32_t keepdims) {
    OPRT_CHECK(oprt_plan_reduce_sum(&d->plan, out, x, axis, keepdims));
    plan_reduce(d);
    if (d->path == ReducePath::kCols) {
        OPRT_CHECK(dispatch_dtype(d->plan.dtype, [&](auto tag) {
            d->workspace = cols_workspace<decltype(tag)>(*d);
            return OPRT_STATUS_SUCCESS;
        }));
    }
    *workspace = d->workspace;
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t run_reduce_sum(const ReduceState *d, void *workspace, void *out, const void *x, oprt_stream_t stream) {
    note_launch("none");
    if (d->path == ReducePath::kEmpty) return OPRT_STATUS_SUCCESS;
    return dispatch_dtype(d->plan.dtype, [&](auto tag) {
        return launch_reduce<decltype(tag)>(*d, workspace, out, x, (gpuStream_t)stream);
    });
}

}  // namespace

extern "C" {
OPRT_DEFINE_OP(reduce_sum, ReduceState, plan_reduce_sum, run_reduce_sum)
}  // extern "C"
