// maca_cuda_shim.h: the nvcc-shim flavour of oprt_metax. Force-included (nvcc -include maca_cuda_shim.h) before
// every kernel source when OPRT_METAX_TOOLCHAIN=nvcc-shim: it maps each MACA name vendor_maca.h uses to its
// CUDA twin, so the MetaX build of the kernels and runtime glue (vendor_maca.h, no NVIDIA capability) builds
// with nvcc and runs on NVIDIA GPUs. Never used by the mxcc build.
//
// What it verifies: the algorithms, the glue and the validation of the MetaX build, on 32-lane NVIDIA warps. What
// it cannot: MACA's own headers, mxcc, and 64-lane MetaX waves (32 lanes here; see docs/metax.md).
#pragma once

#define OPRT_MACA_NVCC_SHIM 1

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

// ---- types ------------------------------------------------------------------------------------
#define mcError_t cudaError_t
#define mcStream_t cudaStream_t
#define mcEvent_t cudaEvent_t
#define mcMemcpyKind cudaMemcpyKind
#define mcDeviceProp_t cudaDeviceProp
#define mcDeviceAttribute_t cudaDeviceAttr
#define __maca_bfloat16 __nv_bfloat16  // __half is __half in both

// ---- status codes -------------------------------------------------------------------------------
#define mcSuccess cudaSuccess
#define mcErrorMemoryAllocation cudaErrorMemoryAllocation
#define mcErrorNoDevice cudaErrorNoDevice
#define mcErrorInsufficientDriver cudaErrorInsufficientDriver
#define mcErrorCallRequiresNewerDriver cudaErrorCallRequiresNewerDriver
#define mcErrorInvalidDevice cudaErrorInvalidDevice

// ---- errors, versions, devices --------------------------------------------------------------------
#define mcGetLastError cudaGetLastError
#define mcGetErrorString cudaGetErrorString
#define mcGetErrorName cudaGetErrorName
#define mcRuntimeGetVersion cudaRuntimeGetVersion
#define mcDriverGetVersion cudaDriverGetVersion
#define mcGetDeviceCount cudaGetDeviceCount
#define mcGetDevice cudaGetDevice
#define mcSetDevice cudaSetDevice
#define mcGetDeviceProperties cudaGetDeviceProperties
#define mcDeviceGetAttribute cudaDeviceGetAttribute
#define mcDeviceSynchronize cudaDeviceSynchronize

// ---- device attributes ------------------------------------------------------------------------------
#define mcDeviceAttributeMultiProcessorCount cudaDevAttrMultiProcessorCount
#define mcDeviceAttributeMaxThreadsPerMultiProcessor cudaDevAttrMaxThreadsPerMultiProcessor
#define mcDeviceAttributeMaxSharedMemoryPerMultiprocessor cudaDevAttrMaxSharedMemoryPerMultiprocessor
#define mcDeviceAttributeWarpSize cudaDevAttrWarpSize
#define mcDeviceAttributeMemoryClockRate cudaDevAttrMemoryClockRate
#define mcDeviceAttributeMemoryBusWidth cudaDevAttrGlobalMemoryBusWidth
#define mcDeviceAttributeComputeCapabilityMajor cudaDevAttrComputeCapabilityMajor
#define mcDeviceAttributeComputeCapabilityMinor cudaDevAttrComputeCapabilityMinor
#define mcDeviceAttributeClockRate cudaDevAttrClockRate
#define mcDeviceAttributeL2CacheSize cudaDevAttrL2CacheSize

// ---- memory ---------------------------------------------------------------------------------------
#define mcMalloc cudaMalloc
#define mcFree cudaFree
#define mcMemcpy cudaMemcpy
#define mcMemcpyAsync cudaMemcpyAsync
#define mcMemsetAsync cudaMemsetAsync
#define mcMemcpyHostToDevice cudaMemcpyHostToDevice
#define mcMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define mcMemcpyDeviceToDevice cudaMemcpyDeviceToDevice

// ---- streams and events -------------------------------------------------------------------------------
#define mcStreamCreate cudaStreamCreate
#define mcStreamCreateWithFlags cudaStreamCreateWithFlags
#define mcStreamNonBlocking cudaStreamNonBlocking
#define mcStreamDestroy cudaStreamDestroy
#define mcStreamSynchronize cudaStreamSynchronize
#define mcEventCreate cudaEventCreate
#define mcEventDestroy cudaEventDestroy
#define mcEventRecord cudaEventRecord
#define mcEventSynchronize cudaEventSynchronize
#define mcEventElapsedTime cudaEventElapsedTime
