// reduce_tagged.cuh (session 32, tune-only): the library's band tiles for reduce_sum over axis 0
// (reduce_cols_band_kernel) with a finishing pass that does not wait for the band grid to complete.
//
// Why: session 31 split the band read's miss of 95% (256 MiB, 8192 columns) into ~3 points of finishing kernel (a
// programmatic dependent launch that waits in griddepcontrol.wait for the whole band grid and its memory flush, then
// reads the partial rows) and ~5 of the bench's dirty flush. Session 26's one-launch form (the last block of a tile
// takes a ticket after a __threadfence) cost 5-10 points: a fence and an atomic in each of 8192-16384 short blocks.
// This form has neither: each partial sum is stored as a relaxed gpu-scope 4-byte store over a slot that holds an
// "empty" bit pattern (a NaN payload that FADD never returns: the GPU's arithmetic NaN is 0x7fffffff, and a sum that
// equals the pattern is stored as that NaN), and the finishing kernel, still a programmatic dependent launch but
// without griddepcontrol.wait, reads each slot with relaxed gpu-scope loads until it is not empty, adds it, and sets
// it empty again for the next call. A word store is single-copy atomic: a slot read is either empty or the sum.
//
// Progress: the band kernel triggers its dependents at the start of every block (griddepcontrol.launch_dependents),
// and a programmatic dependent grid starts only once every block of the primary grid has triggered or exited; so
// when a finishing block waits, every band block it waits for is resident or done and needs nothing from it. (A
// trap after 2 s turns a bug into an error, one that ends the context, instead of a hang.)
//
// Contract (why this is tune-only): the workspace must hold "empty" in every slot before the first call and is left
// so by each finished call. The library's workspace is the caller's, with no such contract (oprt.h); tune allocates
// its own and fills it when it builds each tagged variant.
#pragma once

#include "reduce_cols.cuh"
#include "softmax_cols.cuh"  // globaltimer_ns

namespace oprt_kernels {

constexpr unsigned kPartialEmpty = 0x7fbadbadu;

__device__ __forceinline__ void st_relaxed_gpu_f32(float *p, float v) {
    asm volatile("st.relaxed.gpu.global.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}
__device__ __forceinline__ float4 ld_relaxed_gpu_f32x4(const float *p) {
    float4 r;
    asm volatile("ld.relaxed.gpu.global.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w)
                 : "l"(p)
                 : "memory");
    return r;
}
__device__ __forceinline__ bool slot_empty(float v) { return __float_as_uint(v) == kPartialEmpty; }
__device__ __forceinline__ bool any_empty(const float4 &v) {
    return slot_empty(v.x) || slot_empty(v.y) || slot_empty(v.z) || slot_empty(v.w);
}

__global__ void fill_u32_kernel(unsigned *p, int64_t n, unsigned v) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        p[i] = v;
}

// reduce_cols_band_kernel's tile (reduce_cols.cuh), with kTag: the partial sums stored relaxed for
// redc_band_tag_finish_kernel; kEvictFirst: the tile's loads carry an L2 evict_first policy (data read once: meant to
// replace the streamed lines among themselves and leave the flush's dirty lines in L2, unwritten inside the op)
// instead of the library's L1::no_allocate + L2::256B load. Otherwise the library's code and order with one
// trip a tile (K = 1, the library's choice).
template <typename T, int BX, int BY, int U, bool kTag, bool kEvictFirst>
__global__ void __launch_bounds__(BX * BY)
redc_band_tag_kernel(float *__restrict__ ws, const T *__restrict__ x, ColsArgs a) {
    constexpr int VV = Pack<T>::N;
    __shared__ float smem[BY][BX * VV + 1];
    allow_dependent_grid();  // every block at its start: the finishing grid starts once all have started
    const uint64_t pol = kEvictFirst ? l2_policy(false) : 0;
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
        if (end - begin == (int64_t)BY * U) {
            Pack<T> v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const T *q = p + (begin + u * BY + ty) * a.rs;
                if constexpr (kEvictFirst) {
                    const uint4 raw = ld_policy(q, pol);
                    memcpy(&v[u], &raw, 16);
                } else {
                    v[u] = load_pack_stream(q);
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) add_pack(acc, v[u]);
        } else {
            for (int64_t r = begin + ty; r < end; r += BY) add_pack(acc, load_pack(p + r * a.rs));
        }
    }
#pragma unroll
    for (int e = 0; e < VV; ++e) smem[ty][tx * VV + e] = acc[e];
    __syncthreads();
    for (int c = ty * BX + tx; c < BX * VV; c += BX * BY) {
        float sum = 0.f;
#pragma unroll
        for (int k = 0; k < BY; ++k) sum += smem[k][c];
        const int64_t col = tile * BX * VV + c;
        if (col < a.inner) {
            float *w = ws + (s * a.outer + o) * a.inner + col;
            if constexpr (kTag) {
                if (slot_empty(sum)) sum = __uint_as_float(0x7fffffffu);
                st_relaxed_gpu_f32(w, sum);
            } else {
                *w = sum;
            }
        }
    }
}

// reduce_cols_band_finish_kernel's layout (32 x 8 threads over 128 columns, a lane 4 columns; thread row ty adds
// partial rows ty, ty + 8, ... in order, kBatch of them loaded at a time, then the 8 thread rows in a fixed order),
// reading each slot until it is filled and leaving it empty. No griddepcontrol.wait (see the top of the file).
template <typename T, int kBatch = 8>
__global__ void __launch_bounds__(256)
redc_band_tag_finish_kernel(T *__restrict__ out, float *__restrict__ ws, ColsArgs a) {
    __shared__ float4 part[8][32];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t total = a.outer * a.inner;  // a multiple of 4
    const int64_t i = ((int64_t)blockIdx.x * 32 + tx) * 4;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    if (i < total) {
        const float4 empty = make_float4(__uint_as_float(kPartialEmpty), __uint_as_float(kPartialEmpty),
                                         __uint_as_float(kPartialEmpty), __uint_as_float(kPartialEmpty));
        for (int64_t s0 = ty; s0 < a.splits; s0 += 8 * kBatch) {
            float4 v[kBatch];
#pragma unroll
            for (int u = 0; u < kBatch; ++u) {
                const int64_t s = s0 + 8 * u;
                v[u] = s < a.splits ? ld_relaxed_gpu_f32x4(ws + s * total + i) : make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
            for (int u = 0; u < kBatch; ++u) {
                const int64_t s = s0 + 8 * u;
                if (s >= a.splits) continue;
                float *w = ws + s * total + i;
                if (any_empty(v[u])) {
                    const unsigned long long t0 = globaltimer_ns();
                    do {
                        __nanosleep(100);
                        v[u] = ld_relaxed_gpu_f32x4(w);
                        if (globaltimer_ns() - t0 > 2000000000ull) __trap();
                    } while (any_empty(v[u]));
                }
                acc.x += v[u].x, acc.y += v[u].y, acc.z += v[u].z, acc.w += v[u].w;
                *reinterpret_cast<float4 *>(w) = empty;  // for the next call (stream order puts it after this one)
            }
        }
    }
    part[ty][tx] = acc;
    __syncthreads();
    if (ty == 0 && i < total) {
        float4 sum = part[0][tx];
#pragma unroll
        for (int k = 1; k < 8; ++k)
            sum.x += part[k][tx].x, sum.y += part[k][tx].y, sum.z += part[k][tx].z, sum.w += part[k][tx].w;
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
