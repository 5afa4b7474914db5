// common.cuh: what every kernel translation unit shares (oprt_nvidia's and oprt_metax's builds alike): dtype traits,
// 16-byte packs, warp-width-generic reductions, launch sizing and runtime error -> oprt_status_t mapping. The vendor
// (runtime names, 16-bit types, intrinsics, warp width, capabilities) comes from vendor.h.
#pragma once

#include <stdint.h>

#include <type_traits>

#include "oprt.h"
#include "oprt_validate.h"
#include "oprt_warp.h"
#include "vendor.h"

// Layout and launch arithmetic shared with the other compiled backends (no runtime names, no warp width);
// its one device-side member takes this qualifier.
#define OPRT_DEVICE_INLINE __device__ __forceinline__
#include "oprt_layout.h"

namespace oprt_kernels {

using oprt_common::aligned16;
using oprt_common::ceil_div;
using oprt_common::check_workspace;
using oprt_common::DeviceLimits;
using oprt_common::Indexer;
using oprt_common::Pack;
using oprt_common::pow2_clamp;

using oprt_vendor::bf16_t;
using oprt_vendor::e4m3_t;
using oprt_vendor::half_t;
using oprt_vendor::shfl_xor;
using oprt_warp::MaxOp;
using oprt_warp::MaxSum;
using oprt_warp::maxsum_add;
using oprt_warp::maxsum_combine;
using oprt_warp::SumOp;

// ---- warp width: the vendor's (32 lanes and 32-bit lane masks on NVIDIA, 64 and 64-bit on MetaX) --------------
constexpr int kWarp = oprt_vendor::kWarpSize;
using lane_mask_t = oprt_vendor::lane_mask_t;
using oprt_vendor::kFullMask;

// The kernels' warp policy for oprt_warp.h's templates: the vendor's shuffle over kWarp lanes.
struct DeviceWarp {
    static constexpr int kWidth = kWarp;
    template <typename T> __device__ __forceinline__ T shfl_xor(T v, int offset, int width) const {
        return oprt_vendor::shfl_xor(v, offset, width);
    }
};

constexpr int kBlock = 256;   // default threads per block
constexpr int kMaxThreadsPerBlock = 1024;
static_assert(kMaxThreadsPerBlock / kWarp <= kWarp, "block_reduce: a block's warp partials fit one warp");

// ---- host side: status helpers (runtime.cu) ----------------------------------------------------

// Maps a runtime error to a status, keeping the runtime's own text in oprt_last_error_message(); a sticky error
// (gpu_error_is_sticky) is OPRT_STATUS_DEVICE_FAULT.
oprt_status_t gpu_status(gpuError_t err, const char *what);
bool gpu_error_is_sticky(gpuError_t err);
// Checks the launch that just happened (gpuGetLastError) and maps a failure.
oprt_status_t check_launch(const char *what);

// ---- which kernels an op call launched (oprt_nvidia_last_launch in runtime.cu; oprt_nvidia.last_launch() in
// Python). Each op entry point resets the calling host thread's note to "none" and each launch site names its path
// (the kernel and the variant the launcher chose, e.g. "reduce_rows_trips"; a second kernel, such as a finishing
// pass, as the second name). Tests read it to check that a case reaches the kernel they were written for: a test
// that passes on another kernel says nothing about the one it names. A constant-initialised thread_local: two
// pointer stores a launch, no lock.
struct LaunchNote {
    const char *path[2];
};
inline LaunchNote &launch_note() {
    static thread_local LaunchNote note{{"none", nullptr}};
    return note;
}
inline void note_launch(const char *path) { launch_note() = LaunchNote{{path, nullptr}}; }
inline void note_launch_also(const char *path) { launch_note().path[1] = path; }
// The reset: first in every launch oprt_entry.h's OPRT_DEFINE_OP defines, before its checks (a refused call notes
// "none" too).
#undef OPRT_ENTRY_LAUNCH_PROLOGUE
#define OPRT_ENTRY_LAUNCH_PROLOGUE() oprt_kernels::note_launch("none")

// SM count etc. of the current device (cached per device); sane H200 defaults when no device.
DeviceLimits device_limits();
// Whether the current device launches thread-block clusters (Hopper and newer; cached per device). Always false
// without OPRT_HAS_CLUSTERS.
bool cluster_launch_supported();

// Dynamic shared memory (never touched) that lets at most max_blocks blocks share an SM: max_blocks + 1 of them, with
// static_smem bytes of static arrays each and the runtime's 1 KB a block, overfill the SM's smem_per_sm bytes. 0 where
// there is no cap (max_blocks <= 0) or the SM's shared memory is unknown (smem_per_sm <= 0).
inline size_t smem_cap_request(int smem_per_sm, int max_blocks, size_t static_smem) {
    if (max_blocks <= 0 || smem_per_sm <= 0) return 0;
    const size_t per_block = (size_t)smem_per_sm / (size_t)(max_blocks + 1) + 1;
    return per_block > static_smem + 1024 ? per_block - static_smem - 1024 : 0;
}

// Blocks for a grid-stride kernel: enough to fill every SM `waves` times, never more than the work.
inline unsigned grid_for(int64_t work_items, int threads, int waves = 1) {
    return oprt_common::grid_blocks(device_limits(), work_items, threads, waves);
}

// Blocks for all the work at once (the kernels still grid-stride past 2^31 - 1 blocks). On the H200 a
// grid of every block beat one capped at a wave of resident blocks by 5-10% in every kernel tried (the
// tune harness): the hardware block scheduler balances SMs better than a
// grid-stride loop, and a finished block's slot is refilled at once instead of idling to the end.
inline unsigned grid_all(int64_t work_items, int threads) {
    constexpr int64_t kMaxGrid = 0x7fffffff;
    int64_t need = (work_items + threads - 1) / threads;
    return (unsigned)(need < 1 ? 1 : need < kMaxGrid ? need : kMaxGrid);
}

// ---- programmatic dependent launch (sm_90): a second pass scheduled before the first one ends -----------
// The finishing kernels of split reductions read what the first kernel wrote to the workspace. Launched by
// launch_dependent, their blocks are scheduled as soon as every block of the first kernel has started (the
// first kernel calls allow_dependent_grid() first thing: the rows kernel split or not, the unsplit 16384^2 f16 rows
// reading ~4% faster with the trigger; the columns kernel when split) and wait inside the
// GPU (wait_for_prerequisite_grid(): the first kernel complete and its writes visible) instead of the launch
// beginning after the first kernel ends.
// Elsewhere (no cluster launch, i.e. before Hopper; or no OPRT_HAS_PDL) a plain launch in stream order; both device
// calls are no-ops below sm_90, without OPRT_HAS_PDL and for kernels launched without the attribute.
__device__ __forceinline__ void allow_dependent_grid() {
#if OPRT_HAS_PDL && OPRT_PTX_AT_LEAST(900)
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_for_prerequisite_grid() {
#if OPRT_HAS_PDL && OPRT_PTX_AT_LEAST(900)
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

template <typename... KArgs, typename... Args>
gpuError_t launch_dependent(void (*kernel)(KArgs...), unsigned grid, dim3 block, gpuStream_t stream,
                            Args... args) {
#if OPRT_HAS_PDL
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = 0;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = cluster_launch_supported() ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, kernel, args...);
#else
    kernel<<<grid, block, 0, stream>>>(args...);
    return gpuGetLastError();
#endif
}

// ---- dtypes ----------------------------------------------------------------------------------
__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(half_t v) { return oprt_vendor::half_to_float(v); }
__device__ __forceinline__ float to_f(e4m3_t v) { return oprt_vendor::e4m3_to_float(v); }  // exact
// bf16 -> f32 is exact: the 16 bits are the float's high half. Written as a shift rather than through
// __bfloat162float (inline asm in cuda_bf16.hpp), which kept the compiler from rematerialising the
// conversion: the raw-pack softmax kernels spilled 70-170 bytes in bf16 and none in f16.
__device__ __forceinline__ float to_f(bf16_t v) {
    return __uint_as_float((unsigned)oprt_vendor::bf16_bits(v) << 16);
}

// The f32 values of a pack's elements. bf16: each 32-bit word holds two, the low one shifted up and the high one
// masked in place, one integer op an element; element by element (to_f) the compiler extracted each half first,
// and the bf16 1-D column kernel read 16384^2 ~1.6 points of the copy peak below f16.
template <typename T> __device__ __forceinline__ void pack_to_f(const Pack<T> &p, float (&f)[Pack<T>::N]) {
#pragma unroll
    for (int e = 0; e < Pack<T>::N; ++e) f[e] = to_f(p.v[e]);
}
template <> __device__ __forceinline__ void pack_to_f(const Pack<bf16_t> &p, float (&f)[Pack<bf16_t>::N]) {
    uint32_t w[4];
    memcpy(w, &p, 16);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        f[2 * k] = __uint_as_float(w[k] << 16);
        f[2 * k + 1] = __uint_as_float(w[k] & 0xffff0000u);
    }
}

template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ half_t from_f<half_t>(float v) { return oprt_vendor::float_to_half(v); }
template <> __device__ __forceinline__ bf16_t from_f<bf16_t>(float v) { return oprt_vendor::float_to_bf16(v); }

// A warp's 16-bit packs summed on the tensor cores: one mma.m16n8k16 (f32 accumulation) with each
// thread's pack as its A fragment, B all ones and C = 0, so D[m][n] = A[m][0] + ... + A[m][15] for every n (16
// products, exact: x * 1). A thread's d0 and d2 are D's rows g and g + 8 (g = lane / 4), each held by 4 threads,
// so d0 + d2 added over the warp's 32 threads is 4 x the sum of every element of the warp's 32 packs: the caller
// adds the returned values across the warp and multiplies by kWarpPackSumScale (0.25, exact). One instruction and an
// add where the conversions and adds take 16 (reduce_sum.cu's 16-bit trips kernel). Every thread of the
// warp must call it together (mma.sync). Without the tensor-core instruction (< sm_80, or no OPRT_HAS_PTX): the
// thread's own pack sum, and kWarpPackSumScale 1 (a 4 x there could overflow a bf16 sum that is finite).
#if OPRT_PTX_AT_LEAST(800)
constexpr float kWarpPackSumScale = 0.25f;
#else
constexpr float kWarpPackSumScale = 1.f;
#endif
template <typename T> __device__ __forceinline__ float warp_pack_sum(const Pack<T> &p) {
    static_assert(sizeof(T) == 2, "warp_pack_sum: 16-bit packs");
#if OPRT_PTX_AT_LEAST(800)
    uint32_t a[4];
    memcpy(a, &p, 16);
    constexpr uint32_t kOnes = std::is_same_v<T, bf16_t> ? 0x3f803f80u : 0x3c003c00u;  // two 1.0s
    float d0, d1, d2, d3;
    if constexpr (std::is_same_v<T, bf16_t>)
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%10, %10, %10, %10};"
            : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(kOnes), "r"(kOnes), "f"(0.f));
    else
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%10, %10, %10, %10};"
            : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(kOnes), "r"(kOnes), "f"(0.f));
    (void)d1, (void)d3;
    return d0 + d2;
#else
    float f[Pack<T>::N];
    pack_to_f(p, f);
    float s = 0.f;
#pragma unroll
    for (int e = 0; e < Pack<T>::N; ++e) s += f[e];
    return s;
#endif
}

// Calls f.template operator()<T>() with the C++ type of an oprt dtype.
template <typename F> oprt_status_t dispatch_dtype(int32_t dtype, F &&f) {
    switch (dtype) {
    case OPRT_DTYPE_F32: return f(float{});
    case OPRT_DTYPE_F16: return f(half_t{});
    case OPRT_DTYPE_BF16: return f(bf16_t{});
    default:
        return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE, "unsupported dtype code %d", (int)dtype);
    }
}

// ---- 16-byte packs: one LDG.128/STG.128 per access -------------------------------------------
template <typename T> __device__ __forceinline__ Pack<T> load_pack(const T *p) {
    uint4 raw = oprt_vendor::ldg(reinterpret_cast<const uint4 *>(p));
    Pack<T> out;
    memcpy(&out, &raw, 16);
    return out;
}

// A pack of +0 (all bits clear in f32, f16 and bf16), whatever the element type's default constructor does.
template <typename T> __device__ __forceinline__ Pack<T> zero_pack() {
    const uint4 raw = make_uint4(0u, 0u, 0u, 0u);
    Pack<T> out;
    memcpy(&out, &raw, 16);
    return out;
}

// Streaming read of data read once: non-coherent path, no L1 allocation, 256-byte L2 prefetch hint (the
// access pattern of every streaming kernel here: a warp covers 512 contiguous bytes). Same contract as
// __ldg: the data must not be written during the kernel (an in-place op reads each element before the
// same thread writes it, which is fine). Without PTX (sm_80): load_pack.
template <typename T> __device__ __forceinline__ Pack<T> load_pack_stream(const T *p) {
#if OPRT_PTX_AT_LEAST(800)
    uint4 raw;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(raw.x), "=r"(raw.y), "=r"(raw.z), "=r"(raw.w)
                 : "l"(p));
    Pack<T> out;
    memcpy(&out, &raw, 16);
    return out;
#else
    return load_pack(p);
#endif
}

// load_pack where kPlain, else load_pack_stream: for kernels whose template picks the load (the L2::256B hint
// costs on some access patterns: reduce_sum.cu's split rows and 1-D column blocks).
template <bool kPlain, typename T> __device__ __forceinline__ Pack<T> load_pack_as(const T *p) {
    if constexpr (kPlain) return load_pack(p);
    else return load_pack_stream(p);
}

// An explicit st.global.v4: a plain uint4 store was split by the compiler into four 4-byte stores for
// some packs (seen in the relu kernel's PTX: it could not prove the 16-byte alignment of one address). Without
// PTX: a plain 16-byte store.
template <typename T> __device__ __forceinline__ void store_pack(T *p, const Pack<T> &v) {
    uint4 raw;
    memcpy(&raw, &v, 16);
#if OPRT_PTX_AT_LEAST(0)
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(raw.x), "r"(raw.y), "r"(raw.z), "r"(raw.w)
                 : "memory");
#else
    *reinterpret_cast<uint4 *>(p) = raw;
#endif
}

// L2 eviction-priority policies (createpolicy) and the 16-byte load / store that carry one: evict_last for
// data read again soon, evict_first for data read or written once (it then replaces other evict_first lines
// before anything else in L2). Used by softmax_cols.cuh's kColsL2Hint and reduce_cols.cuh's kEvictFirst. Without PTX
// (sm_80): no policy, plain loads and stores.
__device__ __forceinline__ uint64_t l2_policy(bool last) {
    uint64_t p = 0;
#if OPRT_PTX_AT_LEAST(800)
    if (last) asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    else asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
#endif
    return p;
}
__device__ __forceinline__ uint4 ld_policy(const void *ptr, uint64_t pol) {
    uint4 r;
#if OPRT_PTX_AT_LEAST(800)
    asm("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
        : "l"(ptr), "l"(pol));
#else
    r = oprt_vendor::ldg(reinterpret_cast<const uint4 *>(ptr));
#endif
    return r;
}
__device__ __forceinline__ void st_f32_policy(float *ptr, float v, uint64_t pol) {
#if OPRT_PTX_AT_LEAST(800)
    asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" ::"l"(ptr), "f"(v), "l"(pol) : "memory");
#else
    *ptr = v;
#endif
}
template <typename T> __device__ __forceinline__ void st_policy(T *ptr, const Pack<T> &v, uint64_t pol) {
#if OPRT_PTX_AT_LEAST(800)
    uint4 raw;
    memcpy(&raw, &v, 16);
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(ptr), "r"(raw.x), "r"(raw.y),
                 "r"(raw.z), "r"(raw.w), "l"(pol)
                 : "memory");
#else
    store_pack(ptr, v);
#endif
}

// A load through L2 only (cache-global), for data another kernel wrote; a plain load without OPRT_HAS_CACHE_HINTS.
template <typename T> __device__ __forceinline__ T ld_cg(const T *p) {
#if OPRT_HAS_CACHE_HINTS
    return __ldcg(p);
#else
    return *p;
#endif
}

// Elements before p reaches a 16-byte boundary (p must be element-aligned), at most n.
template <typename T> __device__ __forceinline__ int64_t head_to_align(const T *p, int64_t n) {
    int64_t mis = (int64_t)((uintptr_t)p & 15u);
    int64_t head = mis == 0 ? 0 : (16 - mis) / (int64_t)sizeof(T);
    return head < n ? head : n;
}

// ---- reductions (warp-width generic: oprt_warp.h's templates over DeviceWarp) ------------------------------
template <typename Op> __device__ __forceinline__ float warp_reduce(float v, Op op) {
    return oprt_warp::warp_allreduce(DeviceWarp{}, v, op);
}

// Reduces over the whole block; every thread gets the result. `smem` holds kMaxThreadsPerBlock / kWarp
// floats; the call ends with a barrier so smem may be reused right after.
template <typename Op> __device__ __forceinline__ float block_reduce(float v, Op op, float identity, float *smem) {
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const int nwarps = (blockDim.x + kWarp - 1) / kWarp;
    v = warp_reduce(v, op);
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    float r = lane < nwarps ? smem[lane] : identity;
    r = warp_reduce(r, op);
    __syncthreads();
    return r;
}

// Online softmax state (oprt_warp.h: MaxSum, maxsum_combine, maxsum_add) reduced over a warp.
__device__ __forceinline__ MaxSum warp_reduce_maxsum(MaxSum v) { return oprt_warp::warp_allreduce_maxsum(DeviceWarp{}, v); }
// smem holds 2 * kMaxThreadsPerBlock / kWarp floats.
__device__ __forceinline__ MaxSum block_reduce_maxsum(MaxSum v, float *smem) {
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const int nwarps = (blockDim.x + kWarp - 1) / kWarp;
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

}  // namespace oprt_kernels
