// reduce_bulk.cuh (session 26, tune-only): reduce_sum over a leading axis with the rows fetched by the copy engine
// (sm_90 1-D bulk copies, cp.async.bulk, completing on an mbarrier) instead of by the threads' loads.
//
// Why: every column kernel since session 4 fetches with ld.global, at most U rows in flight a thread, and the column
// reads of 256 MiB stay at 88-91% of cudaMemcpy after the bench's flush where the rows kernel reaches 95% (sessions
// 9-25). A bulk copy of a row segment is one request for WB contiguous bytes, and a block keeps S stages of RB rows
// in flight in shared memory without holding a register for them (96-128 KB an SM in flight, against the band
// kernel's ~32-64 KB): the copy engine's DRAM stream is another ordering of the same bytes, not tried before.
//
// A block (256 threads) owns one column tile of WB bytes and one chunk of rows; its S shared-memory slots each take
// RB rows (RB bulk copies of WB bytes, issued by warp 0, one mbarrier a slot counting the bytes). All threads add a
// slot's rows (thread t: pack t % P of rows t / P, t / P + L, ...; P = WB / 16, L = 256 / P), then the slot is
// refilled with the chunk's next RB rows. The chunk's column sums go to ws; the last block of a tile to finish (a
// ticket a tile, taken after a __threadfence) adds the tile's partial sums in split order (the same bits every call),
// writes the output and resets the ticket: one launch, no finishing kernel. With splits == 1 the block writes the
// output itself.
//
// Needs: 16-byte aligned rows (x and the row stride in bytes multiples of 16), inner * sizeof(T) a multiple of WB.
#pragma once

#include "reduce_cols.cuh"  // add_pack (and common.cuh)

namespace oprt_kernels {

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t *bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t parity) {
    uint32_t done = 0;
    do {
        asm volatile(
            "{\n\t.reg .pred p;\n\t"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
            "selp.u32 %0, 1, 0, p;\n\t}"
            : "=r"(done)
            : "r"(smem_addr(bar)), "r"(parity)
            : "memory");
    } while (!done);
}
// bytes (a multiple of 16) from global src to shared dst, counted on bar
__device__ __forceinline__ void bulk_g2s(void *dst, const void *src, uint32_t bytes, uint64_t *bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(smem_addr(bar))
                 : "memory");
}

// After this block stored its partial sums of a column tile: whether it is the last of the tile's `splits` blocks to
// finish (a ticket a tile, taken after a __threadfence; the last one fences again before reading the others' sums).
// Called by every thread of the block; the last block resets the ticket after its reads.
__device__ __forceinline__ bool last_of_tile(unsigned *tickets, int64_t tile, int64_t splits) {
    __shared__ bool last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) last = atomicAdd(&tickets[tile], 1u) == (unsigned)(splits - 1);
    __syncthreads();
    if (last) __threadfence();
    return last;
}

struct BulkArgs {
    int64_t n;       // rows (the reduced dim)
    int64_t inner;   // columns
    int64_t rs;      // row stride, elements
    int64_t chunk;   // rows a split (a multiple of RB except the last split's)
    int64_t splits;  // ceil(n / chunk)
    int64_t tiles;   // inner * sizeof(T) / WB
};

// grid: tiles * splits blocks (tile fastest), 256 threads, dynamic shared memory 128 + S * RB * WB bytes (the S
// barriers in the first 128, then the slots).
// ws: splits * inner floats; tickets: tiles unsigned ints, zero before the first call (the kernel leaves them zero).
template <typename T, int WB, int RB, int S>
__global__ void __launch_bounds__(256, 1)
redc_bulk_kernel(T *__restrict__ out, float *__restrict__ ws, unsigned *__restrict__ tickets, const T *__restrict__ x,
                 BulkArgs a) {
    constexpr int V = Pack<T>::N, P = WB / 16, L = 256 / P;
    static_assert(WB % 16 == 0 && 256 % P == 0 && RB % L == 0 && RB % 32 == 0, "tile shape");
    static_assert(S * 8 <= 128, "the barriers fit before the slots");
    extern __shared__ __align__(128) unsigned char dyn[];
    uint64_t *bars = reinterpret_cast<uint64_t *>(dyn);  // S barriers, then the slots from byte 128
    unsigned char *slots = dyn + 128;
    __shared__ float part[L][P * V + 1];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int64_t tile = blockIdx.x % a.tiles, s = blockIdx.x / a.tiles;
    const int64_t begin = s * a.chunk, end = begin + a.chunk < a.n ? begin + a.chunk : a.n;
    const int64_t nst = (end - begin + RB - 1) / RB;  // stages of this chunk (the last may be short)
    const T *base = x + tile * (WB / sizeof(T));
    if (tid == 0) {
        for (int i = 0; i < S; ++i) mbar_init(&bars[i], 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    // stage st into slot st % S: lane 0 counts its bytes, then warp 0's lanes issue its rows
    auto issue = [&](int64_t st) {
        const int slot = (int)(st % S);
        const int64_t r0 = begin + st * RB;
        const int rows = (int)(end - r0 < RB ? end - r0 : RB);
        if (lane == 0) mbar_expect_tx(&bars[slot], (uint32_t)(rows * WB));
        __syncwarp();
        for (int r = lane; r < rows; r += 32)
            bulk_g2s(slots + ((size_t)slot * RB + r) * WB, base + (r0 + r) * a.rs, WB, &bars[slot]);
    };
    if (warp == 0) {
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        for (int64_t st = 0; st < S && st < nst; ++st) issue(st);
    }
    float acc[V] = {};
    const int px = tid % P, ly = tid / P;
    for (int64_t st = 0; st < nst; ++st) {
        const int slot = (int)(st % S);
        mbar_wait(&bars[slot], (uint32_t)((st / S) & 1));
        const int64_t r0 = begin + st * RB;
        const int rows = (int)(end - r0 < RB ? end - r0 : RB);
        const Pack<T> *sp = reinterpret_cast<const Pack<T> *>(slots + (size_t)slot * RB * WB) + px;
        if (rows == RB) {
#pragma unroll
            for (int r = ly; r < RB; r += L) add_pack(acc, sp[r * P]);
        } else {
            for (int r = ly; r < rows; r += L) add_pack(acc, sp[r * P]);
        }
        __syncthreads();  // every thread done with the slot before warp 0 refills it
        if (warp == 0 && st + S < nst) {
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            issue(st + S);
        }
    }
    // the block's column sums: the L row lanes added in order
#pragma unroll
    for (int e = 0; e < V; ++e) part[ly][px * V + e] = acc[e];
    __syncthreads();
    const int64_t col0 = tile * (WB / (int64_t)sizeof(T));
    for (int c = tid; c < P * V; c += 256) {
        float sum = 0.f;
#pragma unroll
        for (int k = 0; k < L; ++k) sum += part[k][c];
        if (a.splits == 1) out[col0 + c] = from_f<T>(sum);
        else ws[s * a.inner + col0 + c] = sum;
    }
    if (a.splits == 1 || !last_of_tile(tickets, tile, a.splits)) return;
    for (int c = tid; c < P * V; c += 256) {
        float sum = 0.f;
        for (int64_t k = 0; k < a.splits; ++k) sum += __ldcg(ws + k * a.inner + col0 + c);
        out[col0 + c] = from_f<T>(sum);
    }
    if (tid == 0) tickets[tile] = 0;
}

}  // namespace oprt_kernels

namespace oprt_kernels {

// (session 26, call 2) The library's band tiles (reduce_cols_band_kernel: BX x BY threads, a tile of BY * U rows x BX
// packs, short blocks) with the finishing kernel folded in: the last block of a column tile to finish (a ticket a
// tile, after a __threadfence) adds the tile's `splits` partial sums in a fixed order (NT / TC thread groups over
// strided splits, 8 accumulators a thread, then the groups in order: the same bits every call, not the library
// finisher's order) and writes the output; no second launch. groups: the column tiles are taken in `groups`
// sequential column groups (blocks numbered tile fastest within a group, then split, then group), so that the first
// groups' tiles finish (and are summed) while later groups are still read, instead of every tile's last split
// arriving in the last band.
struct BandTicketArgs {
    int64_t n, inner, rs, chunk, splits, tiles, groups;  // tiles % groups == 0
};

template <typename T, int BX, int BY, int U>
__global__ void __launch_bounds__(BX * BY)
redc_band_ticket_kernel(T *__restrict__ out, float *__restrict__ ws, unsigned *__restrict__ tickets,
                        const T *__restrict__ x, BandTicketArgs a) {
    constexpr int VV = Pack<T>::N, NT = BX * BY, TC = BX * VV;  // TC: a tile's columns
    static_assert(NT % TC == 0, "a tile's columns divide the block");
    __shared__ float smem[BY][TC + 1];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
    const int64_t per = a.tiles / a.groups;  // tiles a group
    const int64_t item = blockIdx.x, g = item / (per * a.splits), rest = item - g * per * a.splits;
    const int64_t tile = g * per + rest % per, s = rest / per;
    const int64_t col0 = (tile * BX + tx) * VV;
    const int64_t begin = s * a.chunk, end = begin + a.chunk < a.n ? begin + a.chunk : a.n;
    float acc[VV] = {};
    if (col0 < a.inner) {
        const T *p = x + col0;
        if (end - begin == (int64_t)BY * U) {
            Pack<T> v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) v[u] = load_pack_as<false>(p + (begin + u * BY + ty) * a.rs);
#pragma unroll
            for (int u = 0; u < U; ++u) add_pack(acc, v[u]);
        } else {
            for (int64_t r = begin + ty; r < end; r += BY) add_pack(acc, load_pack(p + r * a.rs));
        }
    }
#pragma unroll
    for (int e = 0; e < VV; ++e) smem[ty][tx * VV + e] = acc[e];
    __syncthreads();
    for (int c = tid; c < TC; c += NT) {
        float sum = 0.f;
#pragma unroll
        for (int k = 0; k < BY; ++k) sum += smem[k][c];
        const int64_t col = tile * TC + c;
        if (col < a.inner) ws[s * a.inner + col] = sum;
    }
    if (!last_of_tile(tickets, tile, a.splits)) return;
    // NT / TC thread groups over the splits (group q: splits q, q + NG, ...), 8 loads in flight, then the groups in
    // order
    constexpr int NG = NT / TC;
    const int c = tid % TC, q = tid / TC;
    const int64_t col = tile * TC + c;
    float t = 0.f;
    if (col < a.inner) {
        float part[8] = {};
        int64_t k = q;
        for (; k + 7 * NG < a.splits; k += 8 * NG) {
            float v[8];
#pragma unroll
            for (int u = 0; u < 8; ++u) v[u] = __ldcg(ws + (k + u * NG) * a.inner + col);
#pragma unroll
            for (int u = 0; u < 8; ++u) part[u] += v[u];
        }
        for (; k < a.splits; k += NG) part[0] += __ldcg(ws + k * a.inner + col);
        t = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    }
    __syncthreads();
    smem[q][c] = t;  // NG <= BY rows of smem
    __syncthreads();
    if (q == 0 && col < a.inner) {
        float sum = smem[0][c];
        for (int k = 1; k < NG; ++k) sum += smem[k][c];
        out[col] = from_f<T>(sum);
    }
    if (tid == 0) tickets[tile] = 0;
}

}  // namespace oprt_kernels
