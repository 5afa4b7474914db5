/*
 * oprt_host_gelu_tanh.c: the host (CPU) analogue of oprt-gelu's liboprt_gelu_nvidia.so, for tests/examples/
 * test_gelu.py: gelu_tanh behind the entry points of the package's generated header (include/oprt_gelu_tanh.h) and
 * OPRT_DEFINE_OP, with oprt_validate.h's runtime compiled in (the library's own error text and ABI version), built
 * with the system C compiler and loaded through oprt_core.compiled.c_library by a CompiledBackend over the host
 * library. f32 only, any strides (the elementwise plan of copy), in place allowed; f16 and bf16 are refused with
 * OPRT_STATUS_UNSUPPORTED_DTYPE and this library's message.
 */
#define OPRT_IMPLEMENTATION
#include "oprt_validate.h"
#include "oprt_entry.h"
#include "oprt_gelu_tanh.h"

#include <math.h>
#include <string.h>

typedef struct {
    oprt_elementwise_plan_t plan;
} gelu_state_t;

static oprt_status_t gelu_plan(gelu_state_t *s, size_t *workspace, const oprt_tensor_desc_t *out,
                               const oprt_tensor_desc_t *x) {
    *workspace = 0;
    OPRT_CHECK(oprt_plan_copy(&s->plan, out, x));
    if (s->plan.dtype != OPRT_DTYPE_F32)
        return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE, "gelu_tanh (host op library): f32 only, got dtype %d",
                              (int)s->plan.dtype);
    return OPRT_STATUS_SUCCESS;
}

/* f32 arithmetic with tanhf, as the CUDA kernel computes it */
static oprt_status_t gelu_launch(const gelu_state_t *s, void *workspace, void *out, const void *x,
                                 oprt_stream_t stream) {
    (void)workspace;
    (void)stream;
    const oprt_elementwise_plan_t *p = &s->plan;
    for (int64_t i = 0; i < p->numel; ++i) {
        const float v = ((const float *)x)[oprt_offset_of(i, p->ndim, p->shape, p->in_strides[0])];
        const float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
        ((float *)out)[oprt_offset_of(i, p->ndim, p->shape, p->out_strides)] = 0.5f * v * (1.0f + tanhf(u));
    }
    return OPRT_STATUS_SUCCESS;
}

OPRT_DEFINE_OP(gelu_tanh, gelu_state_t, gelu_plan, gelu_launch)
