// vendor.h: the one include through which the kernel sources reach a vendor: vendor_maca.h where the build defines
// OPRT_VENDOR_MACA (oprt_metax: mxcc, or nvcc with maca_cuda_shim.h), vendor_cuda.h otherwise (oprt_nvidia).
#pragma once

#if defined(OPRT_VENDOR_MACA)
#include "vendor_maca.h"
#else
#include "vendor_cuda.h"
#endif

static_assert(oprt_vendor::kWarpSize == 8 * (int)sizeof(oprt_vendor::lane_mask_t), "one lane-mask bit per lane");

// The warp intrinsics, spelled alike by both vendors (MACA keeps CUDA's names, with its 64-bit lane mask).
namespace oprt_vendor {
constexpr lane_mask_t kFullMask = ~lane_mask_t(0);
// The value of lane (lane ^ offset) within segments of `width` lanes, every lane of the warp taking part.
template <typename T> __device__ __forceinline__ T shfl_xor(T v, int offset, int width = kWarpSize) {
    return __shfl_xor_sync(kFullMask, v, offset, width);
}
__device__ __forceinline__ bool warp_any(bool pred) { return __any_sync(kFullMask, pred); }
__device__ __forceinline__ lane_mask_t warp_ballot(bool pred) { return __ballot_sync(kFullMask, pred); }
// A read-only (non-coherent) load.
template <typename T> __device__ __forceinline__ T ldg(const T *p) { return __ldg(p); }
}  // namespace oprt_vendor
