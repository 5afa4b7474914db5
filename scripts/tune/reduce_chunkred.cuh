// reduce_chunkred.cuh (session 30, tune-only): reduce_sum over axis 0 of an R x L matrix read as the rows kernel
// reads over the last axis: short blocks in the hardware's order, each over RPB whole contiguous rows, the partial
// column sums added into an L2-resident f32 workspace by vector reductions (sm_90 red.global.add.v4.f32), a
// dependent finishing kernel that converts the workspace into the output and zeroes it for the next call.
//
// Measured in session 30 (results/h200/tune/tune-s30-1.log, docs/performance.md "Session 30"): slower than the
// library on every shape (best 84.4% of cudaMemcpy on 8192^2 f32 against 89.0%): the reductions into one hot
// workspace, ~70-100 K a microsecond, set the pace. Kept as a tune-only record.
//
// Why: the rows kernel reads 8192^2 f32 over the last axis at 95-96% of cudaMemcpy after the bench's flush, the
// column kernels read the same bytes over axis 0 at 87-88% whatever their tile, order, fetch engine (sessions 4-26).
// Session 18's row-order kernels took whole rows but were persistent (1-3 an SM, partial rows through an 8.6 MB
// workspace and a finishing kernel over it): 65-87%. Session 18 concluded that the rows kernel's speed belongs to
// many short blocks that each end their own work in the hardware's order. This kernel is that shape for columns: a
// block's bytes are RPB x L contiguous, and its end is 2 * L / 8 (f32: L / 4) vector reductions into 4 * L bytes
// that stay in L2: no partial rows through DRAM, a finishing kernel over L floats.
//
// A row is NT threads x P packs (thread t: packs t, t + NT, ..., so each of a row's P loads is NT consecutive packs);
// U rows of loads in flight a thread (U * P packs). Needs L * sizeof(T) == NT * P * 16, x 16-byte aligned.
#pragma once

#include "softmax_rows.cuh"  // unpack_floats

namespace oprt_kernels {

template <typename T, int NT, int P, int RPB, int U>
__global__ void __launch_bounds__(NT) redc_chunkred_kernel(float *__restrict__ ws, const T *__restrict__ x, int64_t R) {
    constexpr int V = 16 / sizeof(T);
    constexpr int64_t RP = (int64_t)NT * P;  // packs a row
    allow_dependent_grid();  // the finishing kernel waits for this grid inside the GPU
    const uint4 *px = reinterpret_cast<const uint4 *>(x) + threadIdx.x;
    const int64_t r0 = (int64_t)blockIdx.x * RPB, r1 = R < r0 + RPB ? R : r0 + RPB;
    float a[P][V] = {};
    int64_t r = r0;
    for (; r + U <= r1; r += U) {
        uint4 q[U][P];
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int p = 0; p < P; ++p) q[u][p] = __ldg(px + (r + u) * RP + p * NT);
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int p = 0; p < P; ++p) {
                float f[V];
                unpack_floats<T>(q[u][p], f);
#pragma unroll
                for (int e = 0; e < V; ++e) a[p][e] += f[e];
            }
    }
    for (; r < r1; ++r)
#pragma unroll
        for (int p = 0; p < P; ++p) {
            float f[V];
            unpack_floats<T>(__ldg(px + r * RP + p * NT), f);
#pragma unroll
            for (int e = 0; e < V; ++e) a[p][e] += f[e];
        }
#pragma unroll
    for (int p = 0; p < P; ++p) {
        float4 *w = reinterpret_cast<float4 *>(ws + ((int64_t)p * NT + threadIdx.x) * V);
#pragma unroll
        for (int k = 0; k < V / 4; ++k)
            asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(w + k), "f"(a[p][4 * k]),
                         "f"(a[p][4 * k + 1]), "f"(a[p][4 * k + 2]), "f"(a[p][4 * k + 3])
                         : "memory");
    }
}

// out[i] = ws[i] in T, ws[i] = 0; L / 4 threads (L % 4 == 0). Launched by launch_dependent after the kernel above.
template <typename T> __global__ void redc_chunkred_finish_kernel(T *__restrict__ out, float *__restrict__ ws, int64_t L) {
    wait_for_prerequisite_grid();
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (4 * i >= L) return;
    float4 *w = reinterpret_cast<float4 *>(ws) + i;
    const float4 v = *w;
    *w = make_float4(0.f, 0.f, 0.f, 0.f);
    out[4 * i] = from_f<T>(v.x), out[4 * i + 1] = from_f<T>(v.y), out[4 * i + 2] = from_f<T>(v.z),
    out[4 * i + 3] = from_f<T>(v.w);
}

}  // namespace oprt_kernels
