// softmax_bands.cuh: an EXPERIMENT for issue 6 (softmax over axis 0), timed by tune.cu only; not part of
// the library, written in session 4 after its last device call and not yet run (docs/performance.md,
// "cluster columns": why a cluster per strip stops near 58%, and this design).
//
// x and out are L x N row-major (N contiguous, 16-byte packs); softmax over the L rows of every column.
// The columns are cut into bands of kLanes packs (kLanes x 16 bytes of every row: 512 B, whole 128-byte
// lines), the rows into one chunk per block of a persistent cooperative grid (every block resident, so
// blocks may wait for each other). Per band b, every block:
//   P1(b): reads its chunk of the band from DRAM (loads evict_last), a (max, sum) per column over its rows
//          -> partials[b % 3][block][column] (global memory), then counts itself in arrive[b];
//   M(b):  once arrive[b] == grid, merges the grid's partials of the band's columns it owns (column c is
//          block c % grid's) -> final[b % 3][c] = (max, 1 / sum), then counts itself in done[b];
//   P2(b): once done[b] == grid, reads its chunk of the band again (from L2: three bands in flight are
//          3 x L x 512 B = 24 MB at L = 16384) and writes exp(x - max) / sum (stores evict_first).
// The order P1(0), P1(1), then for each b: M(b), P1(b + 2), P2(b) puts a band's pass 1 between each wait
// and the thing it waits for, so the barriers cost latency only when a block falls a band behind.
// DRAM sees one read and one write of the data; the partials are small (grid x 128 f32 columns x 8 B a
// band) and stay in L2. Cross-block data is read with ld.cg (L2, never a stale L1 line: the buffers are
// reused every three bands); writers fence before they count; a wait gives up with __trap() after ~20 s.
#pragma once

#include <cooperative_groups.h>

#include "softmax_cols.cuh"

namespace oprt_kernels {

constexpr int kBandsInFlight = 3;

struct BandsArgs {
    int64_t L, N;       // rows (the softmax axis), columns (N % V == 0)
    int64_t bands;      // ceil(N / (kLanes * V))
    int64_t chunk;      // rows of a block: ceil(L / gridDim.x)
    float *partial_m;   // [kBandsInFlight][grid][kLanes * V]
    float *partial_s;   // same
    float *final_m;     // [kBandsInFlight][kLanes * V]
    float *final_inv;   // same
    unsigned *arrive;   // [bands], zero at launch
    unsigned *done;     // [bands], zero at launch
};

__device__ __forceinline__ unsigned ld_acquire(const unsigned *p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// Thread 0 waits until *counter reaches target, then the block goes on.
__device__ __forceinline__ void wait_count(const unsigned *counter, unsigned target) {
    if (threadIdx.x == 0) {
        long long spins = 0;
        while (ld_acquire(counter) < target) {
            __nanosleep(64);
            if (++spins > (1ll << 28)) __trap();  // a lost arrival: fail loudly rather than hang
        }
    }
    __syncthreads();
}

// Every writer fences its global writes, the block syncs, thread 0 counts the block in.
__device__ __forceinline__ void count_in(unsigned *counter) {
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(counter, 1u);
}

// kLanes packs across a band, kThreads / kLanes row lanes; kRows: loads a thread issues at once.
template <typename T, int kLanes, int kThreads, int kRows>
__global__ void __launch_bounds__(kThreads, 2048 / kThreads / 2)
softmax_bands_kernel(T *__restrict__ out, const T *__restrict__ x, BandsArgs a) {
    constexpr int V = Pack<T>::N;
    constexpr int W = kLanes * V;          // columns of a band
    constexpr int RL = kThreads / kLanes;  // row lanes
    static_assert(kThreads % kLanes == 0 && W <= kThreads, "a thread per column for the block merges");
    __shared__ float sm[RL][W], ss[RL][W];
    __shared__ float red_m[kThreads / kWarp], red_s[kThreads / kWarp];
    const int t = threadIdx.x, lane = t % kLanes, rl = t / kLanes;
    const int G = gridDim.x, g = blockIdx.x;
    const int64_t r0 = (int64_t)g * a.chunk, r1 = r0 + a.chunk < a.L ? r0 + a.chunk : a.L;
    const uint64_t pol_last = l2_policy(true), pol_first = l2_policy(false);

    // P1: this block's (max, sum) of every column of band b over rows [r0, r1)
    auto pass1 = [&](int64_t b) {
        const int64_t col = b * W + (int64_t)lane * V;
        const bool live = col < a.N;
        float m[V], s[V];
#pragma unroll
        for (int e = 0; e < V; ++e) m[e] = -INFINITY, s[e] = 0.f;
        for (int64_t r = r0 + rl; r < r1; r += (int64_t)RL * kRows) {
            uint4 raw[kRows];
#pragma unroll
            for (int k = 0; k < kRows; ++k) {
                const int64_t row = r + (int64_t)k * RL;
                raw[k] = live && row < r1 ? ld_policy(x + row * a.N + col, pol_last) : make_uint4(0u, 0u, 0u, 0u);
            }
            float tm[V];
#pragma unroll
            for (int e = 0; e < V; ++e) tm[e] = -INFINITY;
#pragma unroll
            for (int k = 0; k < kRows; ++k) {
                if (!(live && r + (int64_t)k * RL < r1)) continue;
                float f[V];
                unpack_floats<T>(raw[k], f);
#pragma unroll
                for (int e = 0; e < V; ++e) tm[e] = fmaxf(tm[e], f[e]);
            }
            // this trip's (max, sum) merged into the running one; a max of -inf sums exp(x - 0) (0 or NaN)
            float mu[V], ts[V];
#pragma unroll
            for (int e = 0; e < V; ++e) mu[e] = tm[e] == -INFINITY ? 0.f : tm[e], ts[e] = 0.f;
#pragma unroll
            for (int k = 0; k < kRows; ++k) {
                if (!(live && r + (int64_t)k * RL < r1)) continue;
                float f[V];
                unpack_floats<T>(opaque(raw[k]), f);
#pragma unroll
                for (int e = 0; e < V; ++e) ts[e] += expf(f[e] - mu[e]);
            }
#pragma unroll
            for (int e = 0; e < V; ++e) maxsum_merge(m[e], s[e], tm[e], ts[e]);
        }
#pragma unroll
        for (int e = 0; e < V; ++e) sm[rl][lane * V + e] = m[e], ss[rl][lane * V + e] = s[e];
        __syncthreads();
        if (t < W) {
            float cm = -INFINITY, cs = 0.f;
            for (int q = 0; q < RL; ++q) maxsum_merge(cm, cs, sm[q][t], ss[q][t]);
            const int64_t slot = ((b % kBandsInFlight) * G + g) * W + t;
            a.partial_m[slot] = cm;
            a.partial_s[slot] = cs;
        }
        count_in(&a.arrive[b]);
    };

    // M: the grid's partials of the band's columns this block owns (c = g, g + G, ...)
    auto merge = [&](int64_t b) {
        wait_count(&a.arrive[b], (unsigned)G);
        for (int c = g; c < W; c += G) {
            float cm = -INFINITY, cs = 0.f;
            for (int q = t; q < G; q += kThreads) {
                const int64_t slot = ((b % kBandsInFlight) * G + q) * W + c;
                maxsum_merge(cm, cs, __ldcg(&a.partial_m[slot]), __ldcg(&a.partial_s[slot]));
            }
#pragma unroll
            for (int d = kWarp / 2; d > 0; d /= 2) {
                const float m2 = __shfl_xor_sync(kFullMask, cm, d), s2 = __shfl_xor_sync(kFullMask, cs, d);
                maxsum_merge(cm, cs, m2, s2);
            }
            if (t % kWarp == 0) red_m[t / kWarp] = cm, red_s[t / kWarp] = cs;
            __syncthreads();
            if (t == 0) {
                float fm = -INFINITY, fs = 0.f;
                for (int w = 0; w < kThreads / kWarp; ++w) maxsum_merge(fm, fs, red_m[w], red_s[w]);
                a.final_m[(b % kBandsInFlight) * W + c] = fm;
                a.final_inv[(b % kBandsInFlight) * W + c] = 1.f / fs;
            }
            __syncthreads();
        }
        count_in(&a.done[b]);
    };

    // P2: this block's rows of band b again, scaled
    auto pass2 = [&](int64_t b) {
        wait_count(&a.done[b], (unsigned)G);
        const int64_t col = b * W + (int64_t)lane * V;
        if (col >= a.N) return;
        float fm[V], fi[V];
#pragma unroll
        for (int e = 0; e < V; ++e) {
            fm[e] = __ldcg(&a.final_m[(b % kBandsInFlight) * W + lane * V + e]);
            fi[e] = __ldcg(&a.final_inv[(b % kBandsInFlight) * W + lane * V + e]);
        }
        for (int64_t r = r0 + rl; r < r1; r += (int64_t)RL * kRows) {
            uint4 raw[kRows];
#pragma unroll
            for (int k = 0; k < kRows; ++k) {
                const int64_t row = r + (int64_t)k * RL;
                raw[k] = row < r1 ? ld_policy(x + row * a.N + col, pol_first) : make_uint4(0u, 0u, 0u, 0u);
            }
#pragma unroll
            for (int k = 0; k < kRows; ++k) {
                const int64_t row = r + (int64_t)k * RL;
                if (row >= r1) continue;
                float f[V], o[V];
                unpack_floats<T>(raw[k], f);
#pragma unroll
                for (int e = 0; e < V; ++e) o[e] = expf(f[e] - fm[e]) * fi[e];
                const uint4 u = pack_floats<T>(o);
                Pack<T> p;
                memcpy(&p, &u, 16);
                st_policy(out + row * a.N + col, p, pol_first);
            }
        }
    };

    const int64_t B = a.bands;
    pass1(0);
    if (B > 1) pass1(1);
    for (int64_t b = 0; b < B; ++b) {
        merge(b);
        if (b + 2 < B) pass1(b + 2);
        pass2(b);
        __syncthreads();  // sm / ss and the red arrays are reused by the next band's P1 and M
    }
}

// Workspace bytes for a grid of `grid` blocks over `bands` bands.
template <typename T, int kLanes>
size_t bands_workspace(int grid, int64_t bands) {
    constexpr int W = kLanes * Pack<T>::N;
    return sizeof(float) * (2 * (size_t)kBandsInFlight * grid * W + 2 * (size_t)kBandsInFlight * W) +
           sizeof(unsigned) * 2 * (size_t)bands;
}

// One launch: zeroes the counters, then a cooperative grid of every resident block (at most one chunk of
// at least one row each). `ws` holds bands_workspace() bytes. False where the device refuses.
template <typename T, int kLanes, int kThreads, int kRows>
bool launch_bands(cudaStream_t stream, T *out, const T *x, int64_t L, int64_t N, void *ws, size_t ws_bytes,
                  int max_grid) {
    constexpr int V = Pack<T>::N;
    constexpr int W = kLanes * V;
    auto kernel = softmax_bands_kernel<T, kLanes, kThreads, kRows>;
    int per_sm = 0;
    if (N % V != 0 || cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0) != cudaSuccess ||
        per_sm < 1) {
        (void)cudaGetLastError();
        return false;
    }
    int grid = per_sm * device_limits().sm_count;
    if (max_grid > 0 && grid > max_grid) grid = max_grid;
    if ((int64_t)grid > L) grid = (int)L;
    BandsArgs a{};
    a.L = L;
    a.N = N;
    a.bands = (N + W - 1) / W;
    a.chunk = (L + grid - 1) / grid;
    grid = (int)((L + a.chunk - 1) / a.chunk);
    if (bands_workspace<T, kLanes>(grid, a.bands) > ws_bytes) return false;
    float *f = static_cast<float *>(ws);
    a.partial_m = f;
    a.partial_s = f + (size_t)kBandsInFlight * grid * W;
    a.final_m = a.partial_s + (size_t)kBandsInFlight * grid * W;
    a.final_inv = a.final_m + (size_t)kBandsInFlight * W;
    a.arrive = reinterpret_cast<unsigned *>(a.final_inv + (size_t)kBandsInFlight * W);
    a.done = a.arrive + a.bands;
    if (cudaMemsetAsync(a.arrive, 0, sizeof(unsigned) * 2 * (size_t)a.bands, stream) != cudaSuccess) return false;
    void *args[] = {(void *)&out, (void *)&x, (void *)&a};
    const cudaError_t err = cudaLaunchCooperativeKernel((const void *)kernel, dim3(grid), dim3(kThreads), args, 0, stream);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return true;
}

}  // namespace oprt_kernels
