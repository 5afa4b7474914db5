/*
 * oprt.h: the backend-agnostic C ABI of oprt.
 *
 * Every compiled backend (oprt_nvidia, oprt_metax, a test host library) implements
 * every function declared here. Python drives any such library through
 * oprt_core.compiled.CompiledBackend, which reads the region between the
 * OPRT_CDEF markers below with cffi: keep that region plain C declarations
 * (no #if, no macros other than integer #defines).
 *
 * Conventions
 *  - Every entry point validates its arguments and returns an oprt_status_t;
 *    bad input never crashes the process. On failure the thread-local text of
 *    oprt_last_error_message() says what was wrong (and keeps the underlying
 *    runtime's own error text for OPRT_STATUS_DEVICE_ERROR).
 *  - OPRT_STATUS_DEVICE_FAULT is a device error after which the device context
 *    is unusable (illegal address or instruction, misaligned address, trap or
 *    other launch failure, device-side assert, hardware stack error,
 *    uncorrectable ECC or NVLink error): every later call in this process fails
 *    too, so the caller must leave the process (oprt-bench replaces its worker).
 *    OPRT_STATUS_DEVICE_ERROR is any other runtime error; the process may go on.
 *  - Tensor descriptors hold dtype, ndim, shape and strides counted in
 *    elements (negative and zero strides allowed for inputs); no data pointer,
 *    so an op descriptor is reusable across buffers of the same layout.
 *  - Pointers passed to ops point at element [0,...,0] of the tensor.
 *  - Aliasing: an op launch refuses (OPRT_STATUS_OVERLAP) an out whose bytes
 *    intersect an input's, unless out is exactly that input (same pointer,
 *    shape and strides) and the op runs in place on it: copy, relu,
 *    vector_add and silu_mul (either input) and softmax do, rope's q_out
 *    over q and k_out over k, and matmul's out over c; reduce_sum,
 *    rms_norm, layer_norm and cross_entropy do not.
 *  - Optional inputs (matmul's c): a caller leaving one out passes NULL for
 *    its tensor descriptor at create and for its pointer at launch (the
 *    pointer is then not read); the op's comment says what its absence means.
 *  - Dtypes: values are f32, f16 or bf16, one dtype for out and every value
 *    input; index inputs (cross_entropy's target, rope's positions) are i32 or i64 as the op
 *    declares, and any other dtype there is OPRT_STATUS_UNSUPPORTED_DTYPE.
 *  - Backends write each op's four entry points with oprt_entry.h's
 *    OPRT_DEFINE_OP (generated, like the op declarations below, from the
 *    op specs by oprt_core.cdecl).
 */
#ifndef OPRT_H_
#define OPRT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* OPRT_CDEF_BEGIN */
#define OPRT_ABI_VERSION 7
#define OPRT_MAX_NDIM 8
#define OPRT_AXIS_ALL -128

typedef enum {
    OPRT_STATUS_SUCCESS = 0,
    OPRT_STATUS_NULL_POINTER = 1,
    OPRT_STATUS_BAD_SHAPE = 2,
    OPRT_STATUS_BAD_STRIDES = 3,
    OPRT_STATUS_BAD_PARAM = 4,
    OPRT_STATUS_UNSUPPORTED_DTYPE = 5,
    OPRT_STATUS_UNSUPPORTED_CASE = 6,
    OPRT_STATUS_INSUFFICIENT_WORKSPACE = 7,
    OPRT_STATUS_DEVICE_ERROR = 8,
    OPRT_STATUS_OUT_OF_MEMORY = 9,
    OPRT_STATUS_NO_DEVICE = 10,
    OPRT_STATUS_BAD_DEVICE = 11,
    OPRT_STATUS_OVERLAP = 12,
    OPRT_STATUS_DEVICE_FAULT = 13       /* a sticky device error: the context is unusable (see below) */
} oprt_status_t;

typedef enum {
    OPRT_DTYPE_F32 = 0,
    OPRT_DTYPE_F16 = 1,
    OPRT_DTYPE_BF16 = 2,
    OPRT_DTYPE_I32 = 3,                 /* index tensors only (an op declares which inputs take them) */
    OPRT_DTYPE_I64 = 4
} oprt_dtype_t;

typedef enum {
    OPRT_MEMCPY_HOST_TO_DEVICE = 0,
    OPRT_MEMCPY_DEVICE_TO_HOST = 1,
    OPRT_MEMCPY_DEVICE_TO_DEVICE = 2
} oprt_memcpy_kind_t;

typedef struct {
    int32_t dtype;                    /* an oprt_dtype_t */
    int32_t ndim;                     /* 0 .. OPRT_MAX_NDIM */
    int64_t shape[8];
    int64_t strides[8];               /* in elements */
} oprt_tensor_desc_t;

typedef struct {
    char name[256];
    char vendor[64];
    uint64_t total_memory_bytes;
    uint64_t l2_cache_bytes;
    int32_t sm_count;
    int32_t warp_size;
    int32_t memory_clock_khz;
    int32_t memory_bus_width_bits;
    int32_t compute_major;
    int32_t compute_minor;
    int32_t clock_khz;
} oprt_device_properties_t;

typedef struct {
    int32_t abi_version;               /* OPRT_ABI_VERSION the library was built against */
    char backend[64];                  /* e.g. "nvidia", "metax", "host" */
    char flavour[64];                  /* build flavour, e.g. "nvcc", "mxcc", "nvcc-shim", "host-c" */
    char toolchain[128];               /* e.g. "nvcc 13.0" */
    char architectures[128];           /* e.g. "sm_90 compute_90" */
    char runtime_version[64];          /* runtime/driver version seen at call time */
} oprt_library_info_t;

typedef void *oprt_stream_t;           /* NULL: the default stream */
typedef void *oprt_event_t;

/* ---- errors and library ---- */
const char *oprt_status_string(oprt_status_t status);
const char *oprt_last_error_message(void);
oprt_status_t oprt_get_library_info(oprt_library_info_t *info);

/* ---- devices ---- */
oprt_status_t oprt_get_device_count(int32_t *count);
oprt_status_t oprt_set_device(int32_t device);
oprt_status_t oprt_get_device_properties(int32_t device, oprt_device_properties_t *props);
oprt_status_t oprt_device_synchronize(void);

/* ---- memory ---- */
oprt_status_t oprt_malloc(void **ptr, size_t bytes);
oprt_status_t oprt_free(void *ptr);
oprt_status_t oprt_memcpy(void *dst, const void *src, size_t bytes, oprt_memcpy_kind_t kind);
oprt_status_t oprt_memset(void *ptr, int32_t value, size_t bytes);

/* ---- streams and events ---- */
oprt_status_t oprt_stream_create(oprt_stream_t *stream);
oprt_status_t oprt_stream_destroy(oprt_stream_t stream);
oprt_status_t oprt_stream_synchronize(oprt_stream_t stream);
oprt_status_t oprt_event_create(oprt_event_t *event);
oprt_status_t oprt_event_destroy(oprt_event_t event);
oprt_status_t oprt_event_record(oprt_event_t event, oprt_stream_t stream);
oprt_status_t oprt_event_synchronize(oprt_event_t event);
oprt_status_t oprt_event_elapsed_ms(float *ms, oprt_event_t start, oprt_event_t end);

/* ---- ops: one descriptor per op, created once from tensor descriptors and the op's params (their C
 * types and order as the op's spec declares them), a workspace size, the launch on device pointers, the
 * destroy. Generated from the specs by oprt_core.cdecl (python -m oprt_core.cdecl --write). ---- */
/* OPRT_OPS_BEGIN */

/* ---- copy: out = x; any input strides (transposed, stepped, broadcast, reversed) ---- */
typedef struct oprt_copy_descriptor *oprt_copy_descriptor_t;
oprt_status_t oprt_create_copy_descriptor(oprt_copy_descriptor_t *desc, const oprt_tensor_desc_t *out,
                                          const oprt_tensor_desc_t *x);
oprt_status_t oprt_get_copy_workspace_size(oprt_copy_descriptor_t desc, size_t *size);
oprt_status_t oprt_copy(oprt_copy_descriptor_t desc, void *workspace, size_t workspace_size, void *out,
                        const void *x, oprt_stream_t stream);
oprt_status_t oprt_destroy_copy_descriptor(oprt_copy_descriptor_t desc);

/* ---- vector_add: out = a + b with numpy broadcasting; any strides ---- */
typedef struct oprt_vector_add_descriptor *oprt_vector_add_descriptor_t;
oprt_status_t oprt_create_vector_add_descriptor(oprt_vector_add_descriptor_t *desc,
                                                const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *a,
                                                const oprt_tensor_desc_t *b);
oprt_status_t oprt_get_vector_add_workspace_size(oprt_vector_add_descriptor_t desc, size_t *size);
oprt_status_t oprt_vector_add(oprt_vector_add_descriptor_t desc, void *workspace, size_t workspace_size,
                              void *out, const void *a, const void *b, oprt_stream_t stream);
oprt_status_t oprt_destroy_vector_add_descriptor(oprt_vector_add_descriptor_t desc);

/* ---- relu: out = x > 0 ? x : x * negative_slope (leaky relu when negative_slope != 0) ----
 * negative_slope (float): slope applied to negative inputs */
typedef struct oprt_relu_descriptor *oprt_relu_descriptor_t;
oprt_status_t oprt_create_relu_descriptor(oprt_relu_descriptor_t *desc, const oprt_tensor_desc_t *out,
                                          const oprt_tensor_desc_t *x, float negative_slope);
oprt_status_t oprt_get_relu_workspace_size(oprt_relu_descriptor_t desc, size_t *size);
oprt_status_t oprt_relu(oprt_relu_descriptor_t desc, void *workspace, size_t workspace_size, void *out,
                        const void *x, oprt_stream_t stream);
oprt_status_t oprt_destroy_relu_descriptor(oprt_relu_descriptor_t desc);

/* ---- reduce_sum: Sum over one axis (negative allowed) or over all (axis=None); f32 accumulation ----
 * axis (int32_t): axis to reduce, negative counts from the end; None for all (None is passed as -128)
 * keepdims (int32_t, 0 or 1): keep the reduced axis as extent 1 */
typedef struct oprt_reduce_sum_descriptor *oprt_reduce_sum_descriptor_t;
oprt_status_t oprt_create_reduce_sum_descriptor(oprt_reduce_sum_descriptor_t *desc,
                                                const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *x,
                                                int32_t axis, int32_t keepdims);
oprt_status_t oprt_get_reduce_sum_workspace_size(oprt_reduce_sum_descriptor_t desc, size_t *size);
oprt_status_t oprt_reduce_sum(oprt_reduce_sum_descriptor_t desc, void *workspace, size_t workspace_size,
                              void *out, const void *x, oprt_stream_t stream);
oprt_status_t oprt_destroy_reduce_sum_descriptor(oprt_reduce_sum_descriptor_t desc);

/* ---- softmax: Numerically stable softmax over one axis (negative allowed) ----
 * axis (int32_t): axis along which the outputs sum to 1, negative counts from the end */
typedef struct oprt_softmax_descriptor *oprt_softmax_descriptor_t;
oprt_status_t oprt_create_softmax_descriptor(oprt_softmax_descriptor_t *desc, const oprt_tensor_desc_t *out,
                                             const oprt_tensor_desc_t *x, int32_t axis);
oprt_status_t oprt_get_softmax_workspace_size(oprt_softmax_descriptor_t desc, size_t *size);
oprt_status_t oprt_softmax(oprt_softmax_descriptor_t desc, void *workspace, size_t workspace_size, void *out,
                           const void *x, oprt_stream_t stream);
oprt_status_t oprt_destroy_softmax_descriptor(oprt_softmax_descriptor_t desc);

/* ---- rms_norm: out = x / sqrt(mean(x**2 over the last axis) + eps) * weight; weight has shape (x.shape[-1],) ----
 * eps (float): added to the variance (mean of squares) before the square root */
typedef struct oprt_rms_norm_descriptor *oprt_rms_norm_descriptor_t;
oprt_status_t oprt_create_rms_norm_descriptor(oprt_rms_norm_descriptor_t *desc, const oprt_tensor_desc_t *out,
                                              const oprt_tensor_desc_t *x, const oprt_tensor_desc_t *weight,
                                              float eps);
oprt_status_t oprt_get_rms_norm_workspace_size(oprt_rms_norm_descriptor_t desc, size_t *size);
oprt_status_t oprt_rms_norm(oprt_rms_norm_descriptor_t desc, void *workspace, size_t workspace_size,
                            void *out, const void *x, const void *weight, oprt_stream_t stream);
oprt_status_t oprt_destroy_rms_norm_descriptor(oprt_rms_norm_descriptor_t desc);

/* ---- add_rms_norm: h = x + residual; out = h / sqrt(mean(h**2 over the last axis) + eps) * weight (two outputs: out, h); weight has shape (x.shape[-1],) ----
 * out (output): the normalised h, times weight; may be exactly x or residual (in place)
 * h (output): x + residual (the residual stream of the next block); may be exactly x or residual (in place)
 * eps (float): added to the variance (mean of squares) before the square root */
typedef struct oprt_add_rms_norm_descriptor *oprt_add_rms_norm_descriptor_t;
oprt_status_t oprt_create_add_rms_norm_descriptor(oprt_add_rms_norm_descriptor_t *desc,
                                                  const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *h,
                                                  const oprt_tensor_desc_t *x,
                                                  const oprt_tensor_desc_t *residual,
                                                  const oprt_tensor_desc_t *weight, float eps);
oprt_status_t oprt_get_add_rms_norm_workspace_size(oprt_add_rms_norm_descriptor_t desc, size_t *size);
oprt_status_t oprt_add_rms_norm(oprt_add_rms_norm_descriptor_t desc, void *workspace, size_t workspace_size,
                                void *out, void *h, const void *x, const void *residual, const void *weight,
                                oprt_stream_t stream);
oprt_status_t oprt_destroy_add_rms_norm_descriptor(oprt_add_rms_norm_descriptor_t desc);

/* ---- layer_norm: out = (x - mean) / sqrt(var + eps) * weight + bias over the last axis (biased variance); weight and bias have shape (x.shape[-1],) ----
 * eps (float): added to the variance (mean of squares) before the square root */
typedef struct oprt_layer_norm_descriptor *oprt_layer_norm_descriptor_t;
oprt_status_t oprt_create_layer_norm_descriptor(oprt_layer_norm_descriptor_t *desc,
                                                const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *x,
                                                const oprt_tensor_desc_t *weight,
                                                const oprt_tensor_desc_t *bias, float eps);
oprt_status_t oprt_get_layer_norm_workspace_size(oprt_layer_norm_descriptor_t desc, size_t *size);
oprt_status_t oprt_layer_norm(oprt_layer_norm_descriptor_t desc, void *workspace, size_t workspace_size,
                              void *out, const void *x, const void *weight, const void *bias,
                              oprt_stream_t stream);
oprt_status_t oprt_destroy_layer_norm_descriptor(oprt_layer_norm_descriptor_t desc);

/* ---- silu_mul: out = silu(gate) * up = gate / (1 + exp(-gate)) * up, elementwise (the SwiGLU gate); any strides ---- */
typedef struct oprt_silu_mul_descriptor *oprt_silu_mul_descriptor_t;
oprt_status_t oprt_create_silu_mul_descriptor(oprt_silu_mul_descriptor_t *desc, const oprt_tensor_desc_t *out,
                                              const oprt_tensor_desc_t *gate, const oprt_tensor_desc_t *up);
oprt_status_t oprt_get_silu_mul_workspace_size(oprt_silu_mul_descriptor_t desc, size_t *size);
oprt_status_t oprt_silu_mul(oprt_silu_mul_descriptor_t desc, void *workspace, size_t workspace_size,
                            void *out, const void *gate, const void *up, oprt_stream_t stream);
oprt_status_t oprt_destroy_silu_mul_descriptor(oprt_silu_mul_descriptor_t desc);

/* ---- cross_entropy: out = logsumexp(logits) - logits[target] per row (0 where target == ignore_index); reduction none: per row, mean: the mean over the rows not ignored ----
 * target (an index tensor): i64
 * ignore_index (int32_t): rows whose target equals it are ignored (loss 0, not in the mean)
 * reduction (int32_t: 0 none, 1 mean): none: the loss of each row; mean: their mean over the rows not ignored */
typedef struct oprt_cross_entropy_descriptor *oprt_cross_entropy_descriptor_t;
oprt_status_t oprt_create_cross_entropy_descriptor(oprt_cross_entropy_descriptor_t *desc,
                                                   const oprt_tensor_desc_t *out,
                                                   const oprt_tensor_desc_t *logits,
                                                   const oprt_tensor_desc_t *target, int32_t ignore_index,
                                                   int32_t reduction);
oprt_status_t oprt_get_cross_entropy_workspace_size(oprt_cross_entropy_descriptor_t desc, size_t *size);
oprt_status_t oprt_cross_entropy(oprt_cross_entropy_descriptor_t desc, void *workspace, size_t workspace_size,
                                 void *out, const void *logits, const void *target, oprt_stream_t stream);
oprt_status_t oprt_destroy_cross_entropy_descriptor(oprt_cross_entropy_descriptor_t desc);

/* ---- rope: rotary embedding of q and k (two outputs: q_out, k_out): pairs (x1, x2) of each head -> (x1 c - x2 s, x2 c + x1 s), c = cos[positions[t], i], s = sin[positions[t], i]; style neox pairs (i, i + D/2), gptj (2i, 2i + 1) ----
 * positions (an index tensor): i64 or i32
 * q_out (output): q rotated; may be exactly q (in place)
 * k_out (output): k rotated; may be exactly k (in place)
 * style (int32_t: 0 neox, 1 gptj): neox: pairs (i, i + D/2); gptj: pairs (2i, 2i + 1) */
typedef struct oprt_rope_descriptor *oprt_rope_descriptor_t;
oprt_status_t oprt_create_rope_descriptor(oprt_rope_descriptor_t *desc, const oprt_tensor_desc_t *q_out,
                                          const oprt_tensor_desc_t *k_out, const oprt_tensor_desc_t *q,
                                          const oprt_tensor_desc_t *k, const oprt_tensor_desc_t *cos,
                                          const oprt_tensor_desc_t *sin, const oprt_tensor_desc_t *positions,
                                          int32_t style);
oprt_status_t oprt_get_rope_workspace_size(oprt_rope_descriptor_t desc, size_t *size);
oprt_status_t oprt_rope(oprt_rope_descriptor_t desc, void *workspace, size_t workspace_size, void *q_out,
                        void *k_out, const void *q, const void *k, const void *cos, const void *sin,
                        const void *positions, oprt_stream_t stream);
oprt_status_t oprt_destroy_rope_descriptor(oprt_rope_descriptor_t desc);

/* ---- matmul: out = alpha * a @ b + beta * c: (M, K) @ (K, N) -> (M, N), or batched (B, M, K) @ (B, K, N) -> (B, M, N); c optional, of out's shape; f32 accumulation ----
 * c (optional): NULL tensor and pointer where left out; out may be exactly it (in place)
 * alpha (float): scales the product a @ b
 * beta (float): scales c in alpha * a @ b + beta * c; not 0 needs c, 0 leaves c unread
 * allow_tf32 (int32_t, 0 or 1): f32 inputs may be rounded to TF32 on tensor cores */
typedef struct oprt_matmul_descriptor *oprt_matmul_descriptor_t;
oprt_status_t oprt_create_matmul_descriptor(oprt_matmul_descriptor_t *desc, const oprt_tensor_desc_t *out,
                                            const oprt_tensor_desc_t *a, const oprt_tensor_desc_t *b,
                                            const oprt_tensor_desc_t *c, float alpha, float beta,
                                            int32_t allow_tf32);
oprt_status_t oprt_get_matmul_workspace_size(oprt_matmul_descriptor_t desc, size_t *size);
oprt_status_t oprt_matmul(oprt_matmul_descriptor_t desc, void *workspace, size_t workspace_size, void *out,
                          const void *a, const void *b, const void *c, oprt_stream_t stream);
oprt_status_t oprt_destroy_matmul_descriptor(oprt_matmul_descriptor_t desc);
/* OPRT_OPS_END */
/* OPRT_CDEF_END */

#ifdef __cplusplus
}
#endif

#endif /* OPRT_H_ */
