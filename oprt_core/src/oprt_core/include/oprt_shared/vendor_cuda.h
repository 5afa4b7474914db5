// vendor_cuda.h: the NVIDIA side of the kernel sources' vendor layer (vendor.h includes it unless the build
// defines OPRT_VENDOR_MACA): the CUDA headers, the runtime names the sources use (gpu* -> cuda*), the 16-bit
// and fp8 types and conversions, the warp intrinsics, the warp width and the capability macros. The kernels name none of
// CUDA's own identifiers outside code a capability macro keeps to this vendor.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#define OPRT_VENDOR_NAME "NVIDIA"
#define OPRT_DRIVER_COPY_NAME "cudaMemcpyAsync"  // the path name of a copy gpuMemcpyAsync does (last_launch)

// ---- capabilities (CUTLASS-style feature macros; vendor_maca.h sets each to 0) --------------------------------
// OPRT_HAS_PTX: inline PTX (asm) in device code; OPRT_PTX_AT_LEAST(arch) says whether this compilation pass
// generates device code for an architecture of at least `arch` (700, 800, 900; 0: any device pass).
// OPRT_HAS_PDL: programmatic dependent launch (griddepcontrol, the launch attribute; sm_90 at run time).
// OPRT_HAS_CLUSTERS: thread-block clusters, distributed shared memory, mbarrier/st.async exchanges, cluster
// launches (sm_90 at run time; the host asks cluster_launch_supported() as well).
// OPRT_HAS_CACHE_HINTS: the cache-operator loads and stores that are not PTX (__ldcg, __stcg).
#define OPRT_HAS_PTX 1
#define OPRT_HAS_PDL 1
#define OPRT_HAS_CLUSTERS 1
#define OPRT_HAS_CACHE_HINTS 1
#if defined(__CUDA_ARCH__)
#define OPRT_CUDA_ARCH __CUDA_ARCH__
#else
#define OPRT_CUDA_ARCH 0
#endif
#define OPRT_PTX_AT_LEAST(arch) (OPRT_HAS_PTX && OPRT_CUDA_ARCH > 0 && OPRT_CUDA_ARCH >= (arch))

// ---- warp width ------------------------------------------------------------------------------------------------
#define OPRT_WARP_SIZE 32
namespace oprt_vendor {
constexpr int kWarpSize = OPRT_WARP_SIZE;
using lane_mask_t = uint32_t;
}  // namespace oprt_vendor

// ---- runtime names ----------------------------------------------------------------------------------------------
#define gpuError_t cudaError_t
#define gpuStream_t cudaStream_t
#define gpuEvent_t cudaEvent_t
#define gpuMemcpyKind cudaMemcpyKind
#define gpuDeviceProp_t cudaDeviceProp
#define gpuDeviceAttr_t cudaDeviceAttr
#define gpuSuccess cudaSuccess
#define gpuErrorMemoryAllocation cudaErrorMemoryAllocation
#define gpuErrorNoDevice cudaErrorNoDevice
#define gpuErrorInsufficientDriver cudaErrorInsufficientDriver
#define gpuErrorCallRequiresNewerDriver cudaErrorCallRequiresNewerDriver
#define gpuErrorInvalidDevice cudaErrorInvalidDevice
#define gpuGetLastError cudaGetLastError
#define gpuGetErrorString cudaGetErrorString
#define gpuGetErrorName cudaGetErrorName
#define gpuRuntimeGetVersion cudaRuntimeGetVersion
#define gpuDriverGetVersion cudaDriverGetVersion
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuGetDevice cudaGetDevice
#define gpuSetDevice cudaSetDevice
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuDevAttrMultiProcessorCount cudaDevAttrMultiProcessorCount
#define gpuDevAttrMaxThreadsPerMultiProcessor cudaDevAttrMaxThreadsPerMultiProcessor
#define gpuDevAttrMaxSharedMemoryPerMultiprocessor cudaDevAttrMaxSharedMemoryPerMultiprocessor
#define gpuDevAttrWarpSize cudaDevAttrWarpSize
#define gpuDevAttrMemoryClockRate cudaDevAttrMemoryClockRate
#define gpuDevAttrGlobalMemoryBusWidth cudaDevAttrGlobalMemoryBusWidth
#define gpuDevAttrComputeCapabilityMajor cudaDevAttrComputeCapabilityMajor
#define gpuDevAttrComputeCapabilityMinor cudaDevAttrComputeCapabilityMinor
#define gpuDevAttrClockRate cudaDevAttrClockRate
#define gpuDevAttrL2CacheSize cudaDevAttrL2CacheSize
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMemcpy cudaMemcpy
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemsetAsync cudaMemsetAsync
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuEventCreate cudaEventCreate
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventElapsedTime cudaEventElapsedTime

namespace oprt_vendor {

// ---- 16-bit types and their conversions ------------------------------------------------------------------------
using bf16_t = __nv_bfloat16;
using half_t = __half;

__device__ __forceinline__ float half_to_float(half_t v) { return __half2float(v); }
__device__ __forceinline__ half_t float_to_half(float v) { return __float2half_rn(v); }
__device__ __forceinline__ bf16_t float_to_bf16(float v) { return __float2bfloat16_rn(v); }
__device__ __forceinline__ unsigned short bf16_bits(bf16_t v) { return __bfloat16_as_ushort(v); }

// ---- fp8 e4m3 (matmul's a and b): cuda_fp8.h's type; its conversion to f32 is exact (a cvt on sm_89+)
using e4m3_t = __nv_fp8_e4m3;
__device__ __forceinline__ float e4m3_to_float(e4m3_t v) { return static_cast<float>(v); }
// Two halves packed in a 32-bit word (low one first) to two floats, and two floats to such a word (round to nearest
// even, one cvt.rn.{f16,bf16}x2.f32 a pair).
__device__ __forceinline__ float2 half2_bits_to_float2(uint32_t w) {
    __half2 h;
    memcpy(&h, &w, 4);
    return __half22float2(h);
}
__device__ __forceinline__ uint32_t floats_to_half2_bits(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    uint32_t w;
    memcpy(&w, &h, 4);
    return w;
}
__device__ __forceinline__ uint32_t floats_to_bf162_bits(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);  // .x = low half
    uint32_t w;
    memcpy(&w, &h, 4);
    return w;
}

// ---- device control ------------------------------------------------------------------------------------------
[[noreturn]] __device__ __forceinline__ void trap() { __trap(); }

}  // namespace oprt_vendor
