// runtime.cu: the runtime half of oprt.h (library info, devices, memory, streams, events) and the
// one translation unit that emits oprt_validate.h's error buffer and status strings.
#define OPRT_IMPLEMENTATION
#include "common.cuh"
#include "extensions.cuh"

#include <mutex>

#ifndef OPRT_NV_TOOLCHAIN
#define OPRT_NV_TOOLCHAIN "nvcc unknown"
#endif
#ifndef OPRT_NV_ARCHS
#define OPRT_NV_ARCHS "unknown"
#endif

namespace oprt_nv {

oprt_status_t cuda_status(cudaError_t err, const char *what) {
    oprt_status_t status;
    switch (err) {
    case cudaSuccess: return OPRT_STATUS_SUCCESS;
    case cudaErrorMemoryAllocation: status = OPRT_STATUS_OUT_OF_MEMORY; break;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorCallRequiresNewerDriver: status = OPRT_STATUS_NO_DEVICE; break;
    case cudaErrorInvalidDevice: status = OPRT_STATUS_BAD_DEVICE; break;
    default: status = OPRT_STATUS_DEVICE_ERROR; break;
    }
    (void)cudaGetLastError();  // clear a non-sticky error so the next call starts clean
    return oprt_set_error(status, "%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
}

oprt_status_t check_launch(const char *what) {
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return cuda_status(err, what);
    return OPRT_STATUS_SUCCESS;
}

namespace {
constexpr int kMaxDevices = 64;
DeviceLimits g_limits[kMaxDevices];
std::once_flag g_limits_once[kMaxDevices];
}  // namespace

DeviceLimits device_limits() {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) {
        (void)cudaGetLastError();
        return {132, 2048, 233472};  // no device (descriptor creation on a CPU-only machine): H200 figures
    }
    std::call_once(g_limits_once[dev], [dev] {
        int sms = 0, threads = 0, smem = 0;
        if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms <= 0) sms = 132;
        if (cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, dev) != cudaSuccess ||
            threads <= 0)
            threads = 2048;
        if (cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) != cudaSuccess || smem < 0)
            smem = 0;
        (void)cudaGetLastError();
        g_limits[dev] = {sms, threads, smem};
    });
    return g_limits[dev];
}

bool cluster_launch_supported() {
    static int cached[kMaxDevices];  // 0 unknown, 1 yes, 2 no
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) {
        (void)cudaGetLastError();
        return false;
    }
    if (cached[dev] == 0) {
        int v = 0;
        bool ok = cudaDeviceGetAttribute(&v, cudaDevAttrClusterLaunch, dev) == cudaSuccess && v == 1;
        (void)cudaGetLastError();
        cached[dev] = ok ? 1 : 2;  // a benign race: every writer writes the same value
    }
    return cached[dev] == 1;
}

}  // namespace oprt_nv

using oprt_nv::cuda_status;

namespace {
void copy_str(char *dst, size_t n, const char *src) {
    snprintf(dst, n, "%s", src);
}

// Device count, with "no device" (no GPU, or no driver) as OPRT_STATUS_NO_DEVICE.
oprt_status_t device_count(int *count) {
    *count = 0;
    cudaError_t err = cudaGetDeviceCount(count);
    if (err != cudaSuccess) {
        *count = 0;
        return cuda_status(err, "cudaGetDeviceCount");
    }
    if (*count == 0) return oprt_set_error(OPRT_STATUS_NO_DEVICE, "no CUDA device is visible");
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
    copy_str(info->backend, sizeof info->backend, "nvidia");
    copy_str(info->flavour, sizeof info->flavour, "nvcc");
    copy_str(info->toolchain, sizeof info->toolchain, OPRT_NV_TOOLCHAIN);
    copy_str(info->architectures, sizeof info->architectures, OPRT_NV_ARCHS);
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);  // 0 when no driver is installed
    (void)cudaGetLastError();
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
    return cuda_status(cudaSetDevice(device), "cudaSetDevice");
}

oprt_status_t oprt_get_device_properties(int32_t device, oprt_device_properties_t *props) {
    OPRT_CHECK_NOT_NULL(props);
    OPRT_CHECK(check_device_index(device));
    memset(props, 0, sizeof *props);
    cudaDeviceProp p;
    OPRT_CHECK(cuda_status(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties"));
    copy_str(props->name, sizeof props->name, p.name);
    copy_str(props->vendor, sizeof props->vendor, "NVIDIA");
    props->total_memory_bytes = (uint64_t)p.totalGlobalMem;
    struct {
        cudaDeviceAttr attr;
        int32_t *dst;
    } attrs[] = {
        {cudaDevAttrMultiProcessorCount, &props->sm_count},
        {cudaDevAttrWarpSize, &props->warp_size},
        {cudaDevAttrMemoryClockRate, &props->memory_clock_khz},
        {cudaDevAttrGlobalMemoryBusWidth, &props->memory_bus_width_bits},
        {cudaDevAttrComputeCapabilityMajor, &props->compute_major},
        {cudaDevAttrComputeCapabilityMinor, &props->compute_minor},
        {cudaDevAttrClockRate, &props->clock_khz},
    };
    for (auto &a : attrs) {
        int v = 0;
        OPRT_CHECK(cuda_status(cudaDeviceGetAttribute(&v, a.attr, device), "cudaDeviceGetAttribute"));
        *a.dst = v;
    }
    int l2 = 0;
    OPRT_CHECK(cuda_status(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute"));
    props->l2_cache_bytes = (uint64_t)l2;
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_device_synchronize(void) {
    return cuda_status(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

oprt_status_t oprt_malloc(void **ptr, size_t bytes) {
    OPRT_CHECK_NOT_NULL(ptr);
    *ptr = NULL;
    if (bytes == 0) return OPRT_STATUS_SUCCESS;
    cudaError_t err = cudaMalloc(ptr, bytes);
    if (err != cudaSuccess) {
        *ptr = NULL;
        oprt_status_t st = cuda_status(err, "cudaMalloc");
        if (st == OPRT_STATUS_OUT_OF_MEMORY)
            return oprt_set_error(st, "cudaMalloc of %zu bytes: %s", bytes, cudaGetErrorString(err));
        return st;
    }
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_free(void *ptr) {
    if (ptr == NULL) return OPRT_STATUS_SUCCESS;  // like free(NULL)
    return cuda_status(cudaFree(ptr), "cudaFree");
}

oprt_status_t oprt_memcpy(void *dst, const void *src, size_t bytes, oprt_memcpy_kind_t kind) {
    cudaMemcpyKind k;
    switch (kind) {
    case OPRT_MEMCPY_HOST_TO_DEVICE: k = cudaMemcpyHostToDevice; break;
    case OPRT_MEMCPY_DEVICE_TO_HOST: k = cudaMemcpyDeviceToHost; break;
    case OPRT_MEMCPY_DEVICE_TO_DEVICE: k = cudaMemcpyDeviceToDevice; break;
    default: return oprt_set_error(OPRT_STATUS_BAD_PARAM, "oprt_memcpy: unknown kind %d", (int)kind);
    }
    if (bytes == 0) return OPRT_STATUS_SUCCESS;
    OPRT_CHECK_NOT_NULL(dst);
    OPRT_CHECK_NOT_NULL(src);
    return cuda_status(cudaMemcpy(dst, src, bytes, k), "cudaMemcpy");
}

namespace {
__global__ void memset16_kernel(uint4 *__restrict__ p, uint4 v, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = v;
}
}  // namespace

// Enqueued on the legacy default stream, as cudaMemset on device memory is (it does not wait for the host either).
// The 16-byte-aligned part is written by a kernel of 16-byte stores, the rest by cudaMemsetAsync: as oprt-bench's
// cold flush (2 x L2) the driver's memset (cudaMemset or cudaMemsetAsync alike) made the op timed after it read
// ~0.1-0.2 us slower than after torch's zero_ or fill_ (kernels), for either backend's op (scripts/timing_compare.py);
// after this kernel the op reads as after torch's. The mechanism is not known.
oprt_status_t oprt_memset(void *ptr, int32_t value, size_t bytes) {
    if (bytes == 0) return OPRT_STATUS_SUCCESS;
    OPRT_CHECK_NOT_NULL(ptr);
    size_t head = 0;
    if (oprt_common::aligned16(ptr) && bytes >= 16) {
        const size_t n = bytes / 16;
        const unsigned b = (unsigned)value & 0xffu, w = b * 0x01010101u;
        const unsigned grid = oprt_nv::grid_for((int64_t)n, 256, 8);
        memset16_kernel<<<grid, 256>>>(static_cast<uint4 *>(ptr), make_uint4(w, w, w, w), n);
        OPRT_CHECK(oprt_nv::check_launch("oprt_memset kernel"));
        head = n * 16;
    }
    if (head == bytes) return OPRT_STATUS_SUCCESS;
    return cuda_status(cudaMemsetAsync(static_cast<char *>(ptr) + head, value, bytes - head, 0), "cudaMemsetAsync");
}

oprt_status_t oprt_stream_create(oprt_stream_t *stream) {
    OPRT_CHECK_NOT_NULL(stream);
    cudaStream_t s = NULL;
    OPRT_CHECK(cuda_status(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"));
    *stream = (oprt_stream_t)s;
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_stream_destroy(oprt_stream_t stream) {
    OPRT_CHECK_NOT_NULL(stream);  // the default stream is not ours to destroy
    return cuda_status(cudaStreamDestroy((cudaStream_t)stream), "cudaStreamDestroy");
}

oprt_status_t oprt_stream_synchronize(oprt_stream_t stream) {
    return cuda_status(cudaStreamSynchronize((cudaStream_t)stream), "cudaStreamSynchronize");
}

oprt_status_t oprt_event_create(oprt_event_t *event) {
    OPRT_CHECK_NOT_NULL(event);
    cudaEvent_t e = NULL;
    OPRT_CHECK(cuda_status(cudaEventCreate(&e), "cudaEventCreate"));
    *event = (oprt_event_t)e;
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_event_destroy(oprt_event_t event) {
    OPRT_CHECK_NOT_NULL(event);
    return cuda_status(cudaEventDestroy((cudaEvent_t)event), "cudaEventDestroy");
}

oprt_status_t oprt_event_record(oprt_event_t event, oprt_stream_t stream) {
    OPRT_CHECK_NOT_NULL(event);
    return cuda_status(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream), "cudaEventRecord");
}

oprt_status_t oprt_event_synchronize(oprt_event_t event) {
    OPRT_CHECK_NOT_NULL(event);
    return cuda_status(cudaEventSynchronize((cudaEvent_t)event), "cudaEventSynchronize");
}

// oprt_nvidia's own, outside oprt.h (declared in extensions.cuh; oprt_nvidia.last_launch() in Python): the kernels the
// calling host thread's last op call launched, "name" or "name+second" (common.cuh, note_launch), "none" where it
// launched nothing (an empty tensor; a call refused before its launch; a launch that fails keeps the names it tried).
// BAD_PARAM, buf emptied (where size > 0), where `size` bytes (the NUL counted) cannot hold the name.
oprt_status_t oprt_nvidia_last_launch(char *buf, size_t size) {
    OPRT_CHECK_NOT_NULL(buf);
    const oprt_nv::LaunchNote &n = oprt_nv::launch_note();
    const int len = n.path[1] != nullptr ? snprintf(buf, size, "%s+%s", n.path[0], n.path[1])
                                         : snprintf(buf, size, "%s", n.path[0]);
    if (len < 0 || (size_t)len >= size) {
        if (size > 0) buf[0] = '\0';
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "oprt_nvidia_last_launch: %zu bytes cannot hold the %d-character name",
                              size, len);
    }
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_event_elapsed_ms(float *ms, oprt_event_t start, oprt_event_t end) {
    OPRT_CHECK_NOT_NULL(ms);
    OPRT_CHECK_NOT_NULL(start);
    OPRT_CHECK_NOT_NULL(end);
    return cuda_status(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end), "cudaEventElapsedTime");
}

}  // extern "C"
