// gelu_tanh.cu: the CUDA kernel of gelu_tanh behind the C ABI generated from the spec (include/oprt_gelu_tanh.h,
// python -m oprt_core.cdecl --header oprt_gelu.spec:gelu_tanh_spec). The package's setup.py compiles it (with
// oprt-core's include folder and this package's include/ on the include path) into liboprt_gelu_nvidia.so, which
// exports the op's four entry points and which backend nvidia loads (oprt_core.compiled.c_library); OPRT_DEFINE_OP
// makes them around the plan and launch below, with every check the generated code makes (descriptor, workspace,
// NULL pointers, out aliasing x only exactly: in place). Kernels launch on the stream the entry point is given (the
// backend's: NULL, the default stream its events are recorded on, or a caller's).
//
// Paths: contiguous x and out (the elementwise plan's `contiguous`): a grid-stride loop over the flat index;
// otherwise the plan's merged dims and strides (any strides, broadcast and negative ones included), one element a
// thread. f32 arithmetic with tanhf (~2 ulp), one rounding to the dtype.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "oprt_entry.h"  // OPRT_DEFINE_OP and the checks it makes; the built-in ops' plans (oprt_plan_copy)
#include "oprt_gelu_tanh.h"

namespace {

__device__ __forceinline__ float gelu_tanh_f(float x) {
    const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + tanhf(u));
}

// The plan's dims and strides as a kernel argument (elements), for the strided path.
struct GeluLayout {
    int32_t ndim;
    int64_t shape[OPRT_MAX_NDIM], out_strides[OPRT_MAX_NDIM], x_strides[OPRT_MAX_NDIM];
};

template <typename T> __global__ void gelu_contiguous(T *out, const T *x, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = (T)gelu_tanh_f((float)x[i]);
}

template <typename T> __global__ void gelu_strided(T *out, const T *x, int64_t n, GeluLayout l) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t idx = i, xo = 0, oo = 0;
        for (int32_t d = l.ndim - 1; d >= 0; --d) {
            const int64_t e = l.shape[d], q = idx % e;
            xo += q * l.x_strides[d];
            oo += q * l.out_strides[d];
            idx /= e;
        }
        out[oo] = (T)gelu_tanh_f((float)x[xo]);
    }
}

struct GeluState {
    oprt_elementwise_plan_t plan;
};

// Once, at create: out has x's shape and dtype; any strides (the elementwise plan of copy).
oprt_status_t gelu_plan(GeluState *s, size_t *workspace, const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *x) {
    *workspace = 0;
    return oprt_plan_copy(&s->plan, out, x);
}

template <typename T> oprt_status_t gelu_run(const GeluState *s, void *out_, const void *x_, cudaStream_t st) {
    const oprt_elementwise_plan_t *p = &s->plan;
    const int64_t n = p->numel;
    const int block = 256;
    const unsigned grid = (unsigned)((n + block - 1) / block < 65535 ? (n + block - 1) / block : 65535);
    T *out = static_cast<T *>(out_);
    const T *x = static_cast<const T *>(x_);
    if (p->contiguous) {
        gelu_contiguous<T><<<grid, block, 0, st>>>(out, x, n);
    } else {
        GeluLayout l{};
        l.ndim = p->ndim;
        for (int32_t d = 0; d < p->ndim; ++d) {
            l.shape[d] = p->shape[d];
            l.out_strides[d] = p->out_strides[d];
            l.x_strides[d] = p->in_strides[0][d];
        }
        gelu_strided<T><<<grid, block, 0, st>>>(out, x, n, l);
    }
    const cudaError_t err = cudaGetLastError();
    return err == cudaSuccess ? OPRT_STATUS_SUCCESS
                              : oprt_set_error(OPRT_STATUS_DEVICE_ERROR, "gelu_tanh: %s", cudaGetErrorString(err));
}

// Each launch, after the generated entry point has checked the pointers and their overlap.
oprt_status_t gelu_launch(const GeluState *s, void *, void *out, const void *x, oprt_stream_t stream) {
    if (s->plan.numel == 0) return OPRT_STATUS_SUCCESS;
    cudaStream_t st = (cudaStream_t)stream;
    switch (s->plan.dtype) {
    case OPRT_DTYPE_F32: return gelu_run<float>(s, out, x, st);
    case OPRT_DTYPE_F16: return gelu_run<__half>(s, out, x, st);
    case OPRT_DTYPE_BF16: return gelu_run<__nv_bfloat16>(s, out, x, st);
    default: return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE, "gelu_tanh: unsupported dtype");
    }
}

}  // namespace

extern "C" {
OPRT_DEFINE_OP(gelu_tanh, GeluState, gelu_plan, gelu_launch)
}
