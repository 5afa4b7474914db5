// runtime.cu: the runtime half of oprt.h (library info, devices, memory, streams, events) and the
// one translation unit that emits oprt_validate.h's error buffer and status strings; the vendor's runtime through
// vendor.h's gpu* names.
#define OPRT_IMPLEMENTATION
#include "common.cuh"
#include "extensions.cuh"

#include <mutex>

// What the library reports about its build (setup.py passes the toolchain and architectures).
#if defined(OPRT_VENDOR_MACA)
#define OPRT_BACKEND_NAME "metax"
#ifdef OPRT_MACA_NVCC_SHIM
#define OPRT_FLAVOUR "nvcc-shim"
#else
#define OPRT_FLAVOUR "mxcc"
#endif
#else
#define OPRT_BACKEND_NAME "nvidia"
#define OPRT_FLAVOUR "nvcc"
#endif
#ifndef OPRT_TOOLCHAIN
#define OPRT_TOOLCHAIN "unknown"
#endif
#ifndef OPRT_ARCHS
#define OPRT_ARCHS "unknown"
#endif
// The CUTLASS kernels (oprt_nvidia only; setup.py defines OPRT_HAS_CUTE and OPRT_CUTE where it builds them).
#if defined(OPRT_VENDOR_MACA) || defined(OPRT_HAS_CUTE)
#define OPRT_NO_CUTE nullptr
#else
#define OPRT_NO_CUTE "cute"
#endif

namespace oprt_kernels {

// The runtime errors after which the context is unusable ("the process must be terminated and relaunched" in CUDA's
// driver_types.h; uncorrectable ECC and NVLink errors too), by code: MACA numbers its mcError_t as CUDA numbers
// cudaError_t (mcErrorIllegalAddress = 700, ...). docs/reliability.md lists them; oprt_bench/faults.py holds the same
// table for the errors torch, cupy and triton raise.
bool gpu_error_is_sticky(gpuError_t err) {
    switch (static_cast<int>(err)) {
    case 214:  // ECCUncorrectable
    case 220:  // NvlinkUncorrectable
    case 226:  // Contained
    case 700:  // IllegalAddress
    case 702:  // LaunchTimeout
    case 709:  // ContextIsDestroyed
    case 710:  // Assert
    case 714:  // HardwareStackError
    case 715:  // IllegalInstruction
    case 716:  // MisalignedAddress
    case 717:  // InvalidAddressSpace
    case 718:  // InvalidPc
    case 719:  // LaunchFailure
    case 721:  // TensorMemoryLeak
    case 810:  // MpsClientTerminated
    case 911:  // ExternalDevice
        return true;
    default: return false;
    }
}

oprt_status_t gpu_status(gpuError_t err, const char *what) {
    oprt_status_t status;
    if (err != gpuSuccess && gpu_error_is_sticky(err))
        return oprt_set_error(OPRT_STATUS_DEVICE_FAULT, "%s: %s (%s; sticky: the device context is unusable)", what,
                              gpuGetErrorString(err), gpuGetErrorName(err));
    switch (err) {
    case gpuSuccess: return OPRT_STATUS_SUCCESS;
    case gpuErrorMemoryAllocation: status = OPRT_STATUS_OUT_OF_MEMORY; break;
    case gpuErrorNoDevice:
    case gpuErrorInsufficientDriver:
    case gpuErrorCallRequiresNewerDriver: status = OPRT_STATUS_NO_DEVICE; break;
    case gpuErrorInvalidDevice: status = OPRT_STATUS_BAD_DEVICE; break;
    default: status = OPRT_STATUS_DEVICE_ERROR; break;
    }
    (void)gpuGetLastError();  // clear a non-sticky error so the next call starts clean
    return oprt_set_error(status, "%s: %s (%s)", what, gpuGetErrorString(err), gpuGetErrorName(err));
}

oprt_status_t check_launch(const char *what) {
    gpuError_t err = gpuGetLastError();
    if (err != gpuSuccess) return gpu_status(err, what);
    return OPRT_STATUS_SUCCESS;
}

namespace {
constexpr int kMaxDevices = 64;
DeviceLimits g_limits[kMaxDevices];
std::once_flag g_limits_once[kMaxDevices];
}  // namespace

DeviceLimits device_limits() {
    int dev = 0;
    if (gpuGetDevice(&dev) != gpuSuccess || dev < 0 || dev >= kMaxDevices) {
        (void)gpuGetLastError();
        return {132, 2048, 233472};  // no device (descriptor creation on a CPU-only machine): H200 figures
    }
    std::call_once(g_limits_once[dev], [dev] {
        int sms = 0, threads = 0, smem = 0;
        if (gpuDeviceGetAttribute(&sms, gpuDevAttrMultiProcessorCount, dev) != gpuSuccess || sms <= 0) sms = 132;
        if (gpuDeviceGetAttribute(&threads, gpuDevAttrMaxThreadsPerMultiProcessor, dev) != gpuSuccess ||
            threads <= 0)
            threads = 2048;
        if (gpuDeviceGetAttribute(&smem, gpuDevAttrMaxSharedMemoryPerMultiprocessor, dev) != gpuSuccess || smem < 0)
            smem = 0;
        (void)gpuGetLastError();
        g_limits[dev] = {sms, threads, smem};
    });
    return g_limits[dev];
}

bool cluster_launch_supported() {
#if OPRT_HAS_CLUSTERS
    static int cached[kMaxDevices];  // 0 unknown, 1 yes, 2 no
    int dev = 0;
    if (gpuGetDevice(&dev) != gpuSuccess || dev < 0 || dev >= kMaxDevices) {
        (void)gpuGetLastError();
        return false;
    }
    if (cached[dev] == 0) {
        int v = 0;
        bool ok = gpuDeviceGetAttribute(&v, cudaDevAttrClusterLaunch, dev) == gpuSuccess && v == 1;
        (void)gpuGetLastError();
        cached[dev] = ok ? 1 : 2;  // a benign race: every writer writes the same value
    }
    return cached[dev] == 1;
#else
    return false;
#endif
}

}  // namespace oprt_kernels

using oprt_kernels::gpu_status;

namespace {
void copy_str(char *dst, size_t n, const char *src) {
    snprintf(dst, n, "%s", src);
}

// Device count, with "no device" (no GPU, or no driver) as OPRT_STATUS_NO_DEVICE.
oprt_status_t device_count(int *count) {
    *count = 0;
    gpuError_t err = gpuGetDeviceCount(count);
    if (err != gpuSuccess) {
        *count = 0;
        return gpu_status(err, "gpuGetDeviceCount");
    }
    if (*count == 0) return oprt_set_error(OPRT_STATUS_NO_DEVICE, "no " OPRT_VENDOR_NAME " device is visible");
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t check_device_index(int32_t device) {
    int count = 0;
    OPRT_CHECK(device_count(&count));
    if (device < 0 || device >= count)
        return oprt_set_error(OPRT_STATUS_BAD_DEVICE, "device index %d is out of range (%d device%s: 0..%d)",
                              (int)device, count, count == 1 ? "" : "s", count - 1);
    return OPRT_STATUS_SUCCESS;
}
}  // namespace

extern "C" {

oprt_status_t oprt_get_library_info(oprt_library_info_t *info) {
    OPRT_CHECK_NOT_NULL(info);
    memset(info, 0, sizeof *info);
    info->abi_version = OPRT_ABI_VERSION;
    copy_str(info->backend, sizeof info->backend, OPRT_BACKEND_NAME);
    copy_str(info->flavour, sizeof info->flavour, OPRT_FLAVOUR);
    copy_str(info->toolchain, sizeof info->toolchain, OPRT_TOOLCHAIN);
    // the architectures, and the capabilities (vendor.h) this build lacks: the paths that need one never run
    // and, for nvidia, whether the CUTLASS sm_90a matmul kernels are in (OPRT_HAS_CUTE: "..., cute sm_90a (CUTLASS
    // 4.2.0)") or not ("without ... cute")
    const char *absent[] = {OPRT_HAS_PTX ? nullptr : "ptx", OPRT_HAS_PDL ? nullptr : "pdl",
                            OPRT_HAS_CLUSTERS ? nullptr : "clusters", OPRT_HAS_CACHE_HINTS ? nullptr : "cache-hints",
                            OPRT_NO_CUTE};
#if defined(OPRT_HAS_CUTE) && defined(OPRT_CUTE)
    int len = snprintf(info->architectures, sizeof info->architectures, "%s, cute sm_90a (%s)", OPRT_ARCHS, OPRT_CUTE);
#else
    int len = snprintf(info->architectures, sizeof info->architectures, "%s", OPRT_ARCHS);
#endif
    const char *sep = ", without ";
    for (const char *name : absent) {
        if (name == nullptr || len < 0 || (size_t)len >= sizeof info->architectures) continue;
        len += snprintf(info->architectures + len, sizeof info->architectures - len, "%s%s", sep, name);
        sep = " ";
    }
    int runtime = 0, driver = 0;
    gpuRuntimeGetVersion(&runtime);
    gpuDriverGetVersion(&driver);  // 0 when no driver is installed
    (void)gpuGetLastError();
    if (driver > 0)
        snprintf(info->runtime_version, sizeof info->runtime_version, "runtime %d.%d, driver %d.%d",
                 runtime / 1000, runtime % 1000 / 10, driver / 1000, driver % 1000 / 10);
    else
        snprintf(info->runtime_version, sizeof info->runtime_version, "runtime %d.%d, no driver",
                 runtime / 1000, runtime % 1000 / 10);
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_get_device_count(int32_t *count) {
    OPRT_CHECK_NOT_NULL(count);
    int n = 0;
    oprt_status_t st = device_count(&n);
    *count = n;
    return st;
}

oprt_status_t oprt_set_device(int32_t device) {
    OPRT_CHECK(check_device_index(device));
    return gpu_status(gpuSetDevice(device), "gpuSetDevice");
}

oprt_status_t oprt_get_device_properties(int32_t device, oprt_device_properties_t *props) {
    OPRT_CHECK_NOT_NULL(props);
    OPRT_CHECK(check_device_index(device));
    memset(props, 0, sizeof *props);
    gpuDeviceProp_t p;
    OPRT_CHECK(gpu_status(gpuGetDeviceProperties(&p, device), "gpuGetDeviceProperties"));
    copy_str(props->name, sizeof props->name, p.name);
    copy_str(props->vendor, sizeof props->vendor, OPRT_VENDOR_NAME);
    props->total_memory_bytes = (uint64_t)p.totalGlobalMem;
    struct {
        gpuDeviceAttr_t attr;
        int32_t *dst;
    } attrs[] = {
        {gpuDevAttrMultiProcessorCount, &props->sm_count},
        {gpuDevAttrWarpSize, &props->warp_size},
        {gpuDevAttrMemoryClockRate, &props->memory_clock_khz},
        {gpuDevAttrGlobalMemoryBusWidth, &props->memory_bus_width_bits},
        {gpuDevAttrComputeCapabilityMajor, &props->compute_major},
        {gpuDevAttrComputeCapabilityMinor, &props->compute_minor},
        {gpuDevAttrClockRate, &props->clock_khz},
    };
    for (auto &a : attrs) {
        int v = 0;
        OPRT_CHECK(gpu_status(gpuDeviceGetAttribute(&v, a.attr, device), "gpuDeviceGetAttribute"));
        *a.dst = v;
    }
    int l2 = 0;
    OPRT_CHECK(gpu_status(gpuDeviceGetAttribute(&l2, gpuDevAttrL2CacheSize, device), "gpuDeviceGetAttribute"));
    props->l2_cache_bytes = (uint64_t)l2;
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_device_synchronize(void) {
    return gpu_status(gpuDeviceSynchronize(), "gpuDeviceSynchronize");
}

oprt_status_t oprt_malloc(void **ptr, size_t bytes) {
    OPRT_CHECK_NOT_NULL(ptr);
    *ptr = NULL;
    if (bytes == 0) return OPRT_STATUS_SUCCESS;
    gpuError_t err = gpuMalloc(ptr, bytes);
    if (err != gpuSuccess) {
        *ptr = NULL;
        oprt_status_t st = gpu_status(err, "gpuMalloc");
        if (st == OPRT_STATUS_OUT_OF_MEMORY)
            return oprt_set_error(st, "gpuMalloc of %zu bytes: %s", bytes, gpuGetErrorString(err));
        return st;
    }
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_free(void *ptr) {
    if (ptr == NULL) return OPRT_STATUS_SUCCESS;  // like free(NULL)
    return gpu_status(gpuFree(ptr), "gpuFree");
}

oprt_status_t oprt_memcpy(void *dst, const void *src, size_t bytes, oprt_memcpy_kind_t kind) {
    gpuMemcpyKind k;
    switch (kind) {
    case OPRT_MEMCPY_HOST_TO_DEVICE: k = gpuMemcpyHostToDevice; break;
    case OPRT_MEMCPY_DEVICE_TO_HOST: k = gpuMemcpyDeviceToHost; break;
    case OPRT_MEMCPY_DEVICE_TO_DEVICE: k = gpuMemcpyDeviceToDevice; break;
    default: return oprt_set_error(OPRT_STATUS_BAD_PARAM, "oprt_memcpy: unknown kind %d", (int)kind);
    }
    if (bytes == 0) return OPRT_STATUS_SUCCESS;
    OPRT_CHECK_NOT_NULL(dst);
    OPRT_CHECK_NOT_NULL(src);
    return gpu_status(gpuMemcpy(dst, src, bytes, k), "gpuMemcpy");
}

namespace {
__global__ void memset16_kernel(uint4 *__restrict__ p, uint4 v, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = v;
}
}  // namespace

// Enqueued on the legacy default stream, as gpuMemset on device memory is (it does not wait for the host either).
// The 16-byte-aligned part is written by a kernel of 16-byte stores, the rest by gpuMemsetAsync: as oprt-bench's
// cold flush (2 x L2) the driver's memset (gpuMemset or gpuMemsetAsync alike) made the op timed after it read
// ~0.1-0.2 us slower than after torch's zero_ or fill_ (kernels), for either backend's op
// (scripts/check_baselines.py --parts offset);
// after this kernel the op reads as after torch's. The mechanism is not known.
oprt_status_t oprt_memset(void *ptr, int32_t value, size_t bytes) {
    if (bytes == 0) return OPRT_STATUS_SUCCESS;
    OPRT_CHECK_NOT_NULL(ptr);
    size_t head = 0;
    if (oprt_common::aligned16(ptr) && bytes >= 16) {
        const size_t n = bytes / 16;
        const unsigned b = (unsigned)value & 0xffu, w = b * 0x01010101u;
        const unsigned grid = oprt_kernels::grid_for((int64_t)n, 256, 8);
        memset16_kernel<<<grid, 256>>>(static_cast<uint4 *>(ptr), make_uint4(w, w, w, w), n);
        OPRT_CHECK(oprt_kernels::check_launch("oprt_memset kernel"));
        head = n * 16;
    }
    if (head == bytes) return OPRT_STATUS_SUCCESS;
    return gpu_status(gpuMemsetAsync(static_cast<char *>(ptr) + head, value, bytes - head, 0), "gpuMemsetAsync");
}

oprt_status_t oprt_stream_create(oprt_stream_t *stream) {
    OPRT_CHECK_NOT_NULL(stream);
    gpuStream_t s = NULL;
    OPRT_CHECK(gpu_status(gpuStreamCreateWithFlags(&s, gpuStreamNonBlocking), "gpuStreamCreate"));
    *stream = (oprt_stream_t)s;
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_stream_destroy(oprt_stream_t stream) {
    OPRT_CHECK_NOT_NULL(stream);  // the default stream is not ours to destroy
    return gpu_status(gpuStreamDestroy((gpuStream_t)stream), "gpuStreamDestroy");
}

oprt_status_t oprt_stream_synchronize(oprt_stream_t stream) {
    return gpu_status(gpuStreamSynchronize((gpuStream_t)stream), "gpuStreamSynchronize");
}

oprt_status_t oprt_event_create(oprt_event_t *event) {
    OPRT_CHECK_NOT_NULL(event);
    gpuEvent_t e = NULL;
    OPRT_CHECK(gpu_status(gpuEventCreate(&e), "gpuEventCreate"));
    *event = (oprt_event_t)e;
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_event_destroy(oprt_event_t event) {
    OPRT_CHECK_NOT_NULL(event);
    return gpu_status(gpuEventDestroy((gpuEvent_t)event), "gpuEventDestroy");
}

oprt_status_t oprt_event_record(oprt_event_t event, oprt_stream_t stream) {
    OPRT_CHECK_NOT_NULL(event);
    return gpu_status(gpuEventRecord((gpuEvent_t)event, (gpuStream_t)stream), "gpuEventRecord");
}

oprt_status_t oprt_event_synchronize(oprt_event_t event) {
    OPRT_CHECK_NOT_NULL(event);
    return gpu_status(gpuEventSynchronize((gpuEvent_t)event), "gpuEventSynchronize");
}

// The library's own, outside oprt.h (declared in extensions.cuh as oprt_nvidia_last_launch or oprt_metax_last_launch;
// oprt_nvidia.last_launch() in Python): the kernels the
// calling host thread's last op call launched, "name" or "name+second" (common.cuh, note_launch), "none" where it
// launched nothing (an empty tensor; a call refused before its launch; a launch that fails keeps the names it tried).
// BAD_PARAM, buf emptied (where size > 0), where `size` bytes (the NUL counted) cannot hold the name.
oprt_status_t OPRT_LAST_LAUNCH(char *buf, size_t size) {
    OPRT_CHECK_NOT_NULL(buf);
    const oprt_kernels::LaunchNote &n = oprt_kernels::launch_note();
    const int len = n.path[1] != nullptr ? snprintf(buf, size, "%s+%s", n.path[0], n.path[1])
                                         : snprintf(buf, size, "%s", n.path[0]);
    if (len < 0 || (size_t)len >= size) {
        if (size > 0) buf[0] = '\0';
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "%s: %zu bytes cannot hold the %d-character name", OPRT_LAST_LAUNCH_NAME,
                              size, len);
    }
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_event_elapsed_ms(float *ms, oprt_event_t start, oprt_event_t end) {
    OPRT_CHECK_NOT_NULL(ms);
    OPRT_CHECK_NOT_NULL(start);
    OPRT_CHECK_NOT_NULL(end);
    return gpu_status(gpuEventElapsedTime(ms, (gpuEvent_t)start, (gpuEvent_t)end), "gpuEventElapsedTime");
}

}  // extern "C"
