// copy.cu: oprt.h's copy (entry points from oprt_entry.h around a plan and a launch): the elementwise paths
// (elementwise_launch.cuh) on the elements' bytes, or the driver's device-to-device copy.
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "elementwise_launch.cuh"
#include "oprt_entry.h"

using namespace oprt_kernels;

namespace {

// Contiguous copies of up to this many bytes go to the driver's device-to-device copy (gpuMemcpyAsync, what
// torch's copy_ of contiguous tensors calls): on the H200 it is ahead of the library's copy kernel below 64 MiB,
// level at 64-256 MiB and behind at 512 MiB (results/h200/tune/copy-driver-vs-kernel.log).
// OPRT_NVIDIA_COPY=kernel (read when the descriptor is created) keeps the kernel at every size (tests).
constexpr size_t kDriverCopyMaxBytes = (size_t)64 << 20;

// The byte-sized storage type a copy moves (bit-exact, one instantiation per element size).
template <typename T> struct Storage { using type = typename std::conditional<sizeof(T) == 4, uint32_t, uint16_t>::type; };

oprt_status_t plan_copy(EwDesc *d, size_t *workspace, const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *x) {
    *workspace = 0;
    OPRT_CHECK(oprt_plan_copy(&d->plan, out, x));
    OPRT_CHECK(plan_paths(d));
    if (d->path == EwPath::kContig) {
        const size_t bytes = (size_t)d->plan.numel * oprt_dtype_size(d->plan.dtype);
        const char *force = getenv("OPRT_NVIDIA_COPY");
        if (bytes <= kDriverCopyMaxBytes && !(force && strcmp(force, "kernel") == 0)) d->driver_bytes = bytes;
    }
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t run_copy(const EwDesc *d, void *, void *out, const void *x, oprt_stream_t stream) {
    note_launch("none");
    if (const size_t n = d->driver_bytes) {
        // overlapping ranges are undefined for cudaMemcpyAsync: those keep the kernel
        const uintptr_t o = (uintptr_t)out, i = (uintptr_t)x;
        if (o + n <= i || i + n <= o) {
            note_launch(OPRT_DRIVER_COPY_NAME);
            const gpuError_t err = gpuMemcpyAsync(out, x, n, gpuMemcpyDeviceToDevice, (gpuStream_t)stream);
            return err == gpuSuccess ? OPRT_STATUS_SUCCESS : gpu_status(err, "copy (" OPRT_DRIVER_COPY_NAME ")");
        }
    }
    return dispatch_dtype(d->plan.dtype, [&](auto tag) {
        using S = typename Storage<decltype(tag)>::type;
        return launch<S, 1>(*d, out, x, NULL, (gpuStream_t)stream, CopyOp{}, "copy kernel");
    });
}

}  // namespace

extern "C" {
OPRT_DEFINE_OP(copy, EwDesc, plan_copy, run_copy)
}  // extern "C"
