// common.h: what every oprt_metax translation unit shares: the MACA headers, the warp width, dtype
// traits, 16-byte packs, warp-width-generic reductions, launch sizing and MACA error -> oprt_status_t
// mapping.
//
// Flavours (setup.py, OPRT_METAX_TOOLCHAIN):
//  - mxcc: the MACA toolchain; MetaX warps ("waves") have 64 lanes and 64-bit lane masks.
//  - nvcc-shim: the same sources compiled by nvcc with maca_shim.h force-included (it defines
//    OPRT_METAX_NVCC_SHIM and maps every MACA name used here to its CUDA twin); 32 lanes.
#pragma once

#ifndef OPRT_METAX_NVCC_SHIM
#include <common/maca_bfloat16.h>
#include <common/maca_fp16.h>
#include <mcr/mc_runtime.h>
#endif
#include <stdint.h>

#include "oprt.h"
#include "oprt_validate.h"

// Layout and launch arithmetic shared with the other compiled backends (no runtime names, no warp width);
// its one device-side member takes this qualifier.
#define OPRT_DEVICE_INLINE __device__ __forceinline__
#include "oprt_layout.h"

namespace oprt_mx {

using oprt_common::aligned16;
using oprt_common::ceil_div;
using oprt_common::check_workspace;
using oprt_common::DeviceLimits;
using oprt_common::Indexer;
using oprt_common::Pack;
using oprt_common::pow2_clamp;

// ---- warp width: every warp-level line below uses these -------------------------------------------
#if defined(OPRT_METAX_NVCC_SHIM) && !defined(OPRT_METAX_COMPILE_CHECK_WARP64)
constexpr int kWarpSize = 32;          // NVIDIA warps
using lane_mask_t = unsigned int;
constexpr lane_mask_t kFullMask = 0xffffffffu;
#else
// MetaX waves. OPRT_METAX_COMPILE_CHECK_WARP64 compiles this 64-lane instantiation with nvcc (compile-only:
// NVIDIA warps have 32 lanes, so such a library computes nonsense; see docs/metax.md).
constexpr int kWarpSize = 64;
using lane_mask_t = uint64_t;
constexpr lane_mask_t kFullMask = ~(uint64_t)0;
#endif
static_assert(kWarpSize == 8 * (int)sizeof(lane_mask_t), "one lane-mask bit per lane");

// The one shuffle of the library: value of lane (lane ^ offset), all lanes taking part.
template <typename T> __device__ __forceinline__ T shfl_xor(T v, int offset) {
    return __shfl_xor_sync(kFullMask, v, offset, kWarpSize);
}

constexpr int kBlock = 256;   // default threads per block
constexpr int kMaxThreadsPerBlock = 1024;

// ---- host side: status helpers (runtime.maca) ----------------------------------------------------

// Maps a MACA error to a status, keeping the runtime's own text in oprt_last_error_message().
oprt_status_t mc_status(mcError_t err, const char *what);
// Checks the launch that just happened (mcGetLastError) and maps a failure.
oprt_status_t check_launch(const char *what);

// SM count etc. of the current device (cached per device); H200-sized defaults when no device.
DeviceLimits device_limits();

// Blocks for a grid-stride kernel: enough to fill every SM `waves` times, never more than the work.
inline unsigned grid_for(int64_t work_items, int threads, int waves = 1) {
    return oprt_common::grid_blocks(device_limits(), work_items, threads, waves);
}

// ---- dtypes ----------------------------------------------------------------------------------
__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__maca_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __maca_bfloat16 from_f<__maca_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Calls f.template operator()<T>() with the C++ type of an oprt dtype.
template <typename F> oprt_status_t dispatch_dtype(int32_t dtype, F &&f) {
    switch (dtype) {
    case OPRT_DTYPE_F32: return f(float{});
    case OPRT_DTYPE_F16: return f(__half{});
    case OPRT_DTYPE_BF16: return f(__maca_bfloat16{});
    default:
        return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE, "unsupported dtype code %d", (int)dtype);
    }
}

// ---- 16-byte packs: one LDG.128/STG.128 per access -------------------------------------------
template <typename T> __device__ __forceinline__ Pack<T> load_pack(const T *p) {
    uint4 raw = __ldg(reinterpret_cast<const uint4 *>(p));
    Pack<T> out;
    memcpy(&out, &raw, 16);
    return out;
}

template <typename T> __device__ __forceinline__ void store_pack(T *p, const Pack<T> &v) {
    uint4 raw;
    memcpy(&raw, &v, 16);
    *reinterpret_cast<uint4 *>(p) = raw;
}

// Elements before p reaches a 16-byte boundary (p must be element-aligned), at most n.
template <typename T> __device__ __forceinline__ int64_t head_to_align(const T *p, int64_t n) {
    int64_t mis = (int64_t)((uintptr_t)p & 15u);
    int64_t head = mis == 0 ? 0 : (16 - mis) / (int64_t)sizeof(T);
    return head < n ? head : n;
}

// ---- reductions (warp-width generic) ---------------------------------------------------------
struct SumOp {
    __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
    __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <typename Op> __device__ __forceinline__ float warp_reduce(float v, Op op) {
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset >>= 1) v = op(v, shfl_xor(v, offset));
    return v;
}

// Reduces over the whole block; every thread gets the result. `smem` holds kMaxThreadsPerBlock / kWarpSize
// floats; the call ends with a barrier so smem may be reused right after.
template <typename Op> __device__ __forceinline__ float block_reduce(float v, Op op, float identity, float *smem) {
    const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
    const int nwarps = (blockDim.x + kWarpSize - 1) / kWarpSize;
    v = warp_reduce(v, op);
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    float r = lane < nwarps ? smem[lane] : identity;
    r = warp_reduce(r, op);
    __syncthreads();
    return r;
}

// Online softmax state: running max m and sum s of exp(x - m).
struct MaxSum {
    float m, s;
};
__device__ __forceinline__ MaxSum maxsum_combine(MaxSum a, MaxSum b) {
    float m = fmaxf(a.m, b.m);
    float s = (a.s == 0.f ? 0.f : a.s * expf(a.m - m)) + (b.s == 0.f ? 0.f : b.s * expf(b.m - m));
    return {m, s};
}
__device__ __forceinline__ MaxSum maxsum_add(MaxSum a, float x) {
    if (x == -INFINITY) return a;  // adds exp(-inf) = 0; computed, it is a NaN while a.m is still -inf
    if (x > a.m) return {x, a.s * expf(a.m - x) + 1.f};
    return {a.m, a.s + expf(x - a.m)};
}
__device__ __forceinline__ MaxSum warp_reduce_maxsum(MaxSum v) {
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset >>= 1) {
        MaxSum o{shfl_xor(v.m, offset), shfl_xor(v.s, offset)};
        v = maxsum_combine(v, o);
    }
    return v;
}
// smem holds 2 * kMaxThreadsPerBlock / kWarpSize floats.
__device__ __forceinline__ MaxSum block_reduce_maxsum(MaxSum v, float *smem) {
    const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
    const int nwarps = (blockDim.x + kWarpSize - 1) / kWarpSize;
    v = warp_reduce_maxsum(v);
    if (lane == 0) {
        smem[2 * warp] = v.m;
        smem[2 * warp + 1] = v.s;
    }
    __syncthreads();
    MaxSum r = lane < nwarps ? MaxSum{smem[2 * lane], smem[2 * lane + 1]} : MaxSum{-INFINITY, 0.f};
    r = warp_reduce_maxsum(r);
    __syncthreads();
    return r;
}

}  // namespace oprt_mx
