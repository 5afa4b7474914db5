// vendor_maca.h: the MetaX side of the kernel sources' vendor layer (vendor.h includes it where the build defines
// OPRT_VENDOR_MACA): the MACA headers, the runtime names the sources use (gpu* -> mc*), the 16-bit types and
// conversions, the warp intrinsics, the warp width and the capability macros (none of NVIDIA's: every path that
// needs one is left out at compile time and never chosen at run time). docs/metax.md lists which of these MACA
// names are confirmed.
//
// Two builds use it: mxcc (MetaX GPUs: 64-lane waves, 64-bit lane masks) and nvcc with maca_cuda_shim.h
// force-included (the nvcc-shim flavour: the shim defines OPRT_MACA_NVCC_SHIM and maps each mc* name below to its
// CUDA twin, so these very lines run on NVIDIA GPUs, with NVIDIA's 32-lane warps). OPRT_MACA_WARP64 forces the
// 64-lane constants under the shim too: a compile-only check of the MetaX instantiation with nvcc
// (tests/oprt_metax/test_metax_warp64.py); such a library must never run.
#pragma once

#ifndef OPRT_MACA_NVCC_SHIM
#include <common/maca_bfloat16.h>
#include <common/maca_fp16.h>
#include <mcr/mc_runtime.h>
#endif
#include <stdint.h>
#include <string.h>

#define OPRT_DRIVER_COPY_NAME "mcMemcpyAsync"  // the path name of a copy gpuMemcpyAsync does (last_launch)
#ifdef OPRT_MACA_NVCC_SHIM
#define OPRT_VENDOR_NAME "NVIDIA"  // the shim runs on NVIDIA GPUs: say so
#else
#define OPRT_VENDOR_NAME "MetaX"
#endif

// ---- capabilities: NVIDIA's, all absent (vendor_cuda.h says what each covers) ---------------------------------
#define OPRT_HAS_PTX 0
#define OPRT_HAS_PDL 0
#define OPRT_HAS_CLUSTERS 0
#define OPRT_HAS_CACHE_HINTS 0
#define OPRT_CUDA_ARCH 0
#define OPRT_PTX_AT_LEAST(arch) 0

// ---- warp width ------------------------------------------------------------------------------------------------
#if defined(OPRT_MACA_NVCC_SHIM) && !defined(OPRT_MACA_WARP64)
#define OPRT_WARP_SIZE 32  // NVIDIA warps, under the shim
namespace oprt_vendor {
using lane_mask_t = uint32_t;
}
#else
#define OPRT_WARP_SIZE 64  // MetaX waves
namespace oprt_vendor {
using lane_mask_t = uint64_t;
}
#endif
namespace oprt_vendor {
constexpr int kWarpSize = OPRT_WARP_SIZE;
}

// ---- runtime names ----------------------------------------------------------------------------------------------
#define gpuError_t mcError_t
#define gpuStream_t mcStream_t
#define gpuEvent_t mcEvent_t
#define gpuMemcpyKind mcMemcpyKind
#define gpuDeviceProp_t mcDeviceProp_t
#define gpuDeviceAttr_t mcDeviceAttribute_t
#define gpuSuccess mcSuccess
#define gpuErrorMemoryAllocation mcErrorMemoryAllocation
#define gpuErrorNoDevice mcErrorNoDevice
#define gpuErrorInsufficientDriver mcErrorInsufficientDriver
#define gpuErrorCallRequiresNewerDriver mcErrorCallRequiresNewerDriver
#define gpuErrorInvalidDevice mcErrorInvalidDevice
#define gpuGetLastError mcGetLastError
#define gpuGetErrorString mcGetErrorString
#define gpuGetErrorName mcGetErrorName
#define gpuRuntimeGetVersion mcRuntimeGetVersion
#define gpuDriverGetVersion mcDriverGetVersion
#define gpuGetDeviceCount mcGetDeviceCount
#define gpuGetDevice mcGetDevice
#define gpuSetDevice mcSetDevice
#define gpuGetDeviceProperties mcGetDeviceProperties
#define gpuDeviceGetAttribute mcDeviceGetAttribute
#define gpuDeviceSynchronize mcDeviceSynchronize
#define gpuDevAttrMultiProcessorCount mcDeviceAttributeMultiProcessorCount
#define gpuDevAttrMaxThreadsPerMultiProcessor mcDeviceAttributeMaxThreadsPerMultiProcessor
#define gpuDevAttrMaxSharedMemoryPerMultiprocessor mcDeviceAttributeMaxSharedMemoryPerMultiprocessor
#define gpuDevAttrWarpSize mcDeviceAttributeWarpSize
#define gpuDevAttrMemoryClockRate mcDeviceAttributeMemoryClockRate
#define gpuDevAttrGlobalMemoryBusWidth mcDeviceAttributeMemoryBusWidth
#define gpuDevAttrComputeCapabilityMajor mcDeviceAttributeComputeCapabilityMajor
#define gpuDevAttrComputeCapabilityMinor mcDeviceAttributeComputeCapabilityMinor
#define gpuDevAttrClockRate mcDeviceAttributeClockRate
#define gpuDevAttrL2CacheSize mcDeviceAttributeL2CacheSize
#define gpuMalloc mcMalloc
#define gpuFree mcFree
#define gpuMemcpy mcMemcpy
#define gpuMemcpyAsync mcMemcpyAsync
#define gpuMemsetAsync mcMemsetAsync
#define gpuMemcpyHostToDevice mcMemcpyHostToDevice
#define gpuMemcpyDeviceToHost mcMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice mcMemcpyDeviceToDevice
#define gpuStreamCreateWithFlags mcStreamCreateWithFlags
#define gpuStreamNonBlocking mcStreamNonBlocking
#define gpuStreamDestroy mcStreamDestroy
#define gpuStreamSynchronize mcStreamSynchronize
#define gpuEventCreate mcEventCreate
#define gpuEventDestroy mcEventDestroy
#define gpuEventRecord mcEventRecord
#define gpuEventSynchronize mcEventSynchronize
#define gpuEventElapsedTime mcEventElapsedTime

namespace oprt_vendor {

// ---- 16-bit types and their conversions (one element at a time: the pair conversions are not assumed) ----------
using bf16_t = __maca_bfloat16;
using half_t = __half;

__device__ __forceinline__ float half_to_float(half_t v) { return __half2float(v); }
__device__ __forceinline__ half_t float_to_half(float v) { return __float2half_rn(v); }
__device__ __forceinline__ bf16_t float_to_bf16(float v) { return __float2bfloat16_rn(v); }
__device__ __forceinline__ unsigned short bf16_bits(bf16_t v) {
    unsigned short b;
    memcpy(&b, &v, 2);
    return b;
}
// ---- fp8 e4m3 (matmul's a and b): MACA's headers offer no fp8 type that oprt knows of, so the bits are decoded
// here, portably and exactly (1 sign, 4 exponent bits of bias 7, 3 mantissa bits; no inf, NaN at 0x7f and 0xff)
struct e4m3_t {
    uint8_t bits;
};
__device__ __forceinline__ float e4m3_to_float(e4m3_t v) {
    const uint32_t b = v.bits, sign = (b & 0x80u) << 24, e = (b >> 3) & 0xFu, m = b & 7u;
    if ((b & 0x7Fu) == 0x7Fu) return __uint_as_float(sign | 0x7FC00000u);
    if (e == 0) return sign ? -(float)m * 0x1p-9f : (float)m * 0x1p-9f;  // subnormal: m * 2^-9
    return __uint_as_float(sign | ((e + 120u) << 23) | (m << 20));
}
__device__ __forceinline__ float2 half2_bits_to_float2(uint32_t w) {
    half_t h[2];
    memcpy(h, &w, 4);
    return make_float2(__half2float(h[0]), __half2float(h[1]));
}
__device__ __forceinline__ uint32_t floats_to_half2_bits(float lo, float hi) {
    const half_t h[2] = {__float2half_rn(lo), __float2half_rn(hi)};
    uint32_t w;
    memcpy(&w, h, 4);
    return w;
}
__device__ __forceinline__ uint32_t floats_to_bf162_bits(float lo, float hi) {
    const bf16_t h[2] = {__float2bfloat16_rn(lo), __float2bfloat16_rn(hi)};
    uint32_t w;
    memcpy(&w, h, 4);
    return w;
}

// ---- device control ------------------------------------------------------------------------------------------
[[noreturn]] __device__ __forceinline__ void trap() { __builtin_trap(); }

}  // namespace oprt_vendor
