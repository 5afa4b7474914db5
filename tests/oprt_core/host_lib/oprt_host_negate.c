/*
 * oprt_host_negate.c: an op library of the kind an op package ships (oprt_core.compiled.c_library), on the CPU: the
 * test op `negate` (out = -x, any strides, in place allowed) behind the entry points generated from its spec
 * (oprt_negate.h, written by the test from oprt_core.cdecl.header), with oprt_validate.h's runtime (the error text,
 * oprt_library_abi_version) compiled in, so the library is self-contained. tests/oprt_core/test_op_library.py builds
 * it with the system C compiler and drives it through CompiledBackend over the host library.
 *
 * Build variants (the test's -D flags): NEGATE_NO_RUNTIME leaves OPRT_IMPLEMENTATION out (oprt_set_error unresolved:
 * the library fails to load); NEGATE_FAKE_ABI=<n> reports ABI version n; renaming an entry point with
 * -Doprt_destroy_negate_descriptor=other leaves the library without it.
 */
#ifndef NEGATE_NO_RUNTIME
#define OPRT_IMPLEMENTATION
#endif
#ifdef NEGATE_FAKE_ABI
#define oprt_library_abi_version oprt_library_abi_version_real
#endif
#include "oprt_validate.h"
#include "oprt_entry.h"
#include "oprt_negate.h"
#ifdef NEGATE_FAKE_ABI
#undef oprt_library_abi_version
int32_t oprt_library_abi_version(void) { return NEGATE_FAKE_ABI; }
#endif

#include <stdint.h>
#include <string.h>

typedef struct {
    oprt_elementwise_plan_t plan;
} negate_state_t;

static oprt_status_t negate_plan(negate_state_t *s, size_t *workspace, const oprt_tensor_desc_t *out,
                                 const oprt_tensor_desc_t *x) {
    *workspace = 0;
    if (out != NULL && x != NULL && out->ndim == x->ndim && out->ndim > 0 && out->shape[0] != x->shape[0])
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "negate (host op library): out has %lld rows, x %lld",
                              (long long)out->shape[0], (long long)x->shape[0]);
    return oprt_plan_copy(&s->plan, out, x);
}

/* Flips the sign bit of each element: exact in f32, f16 and bf16 alike. */
static oprt_status_t negate_launch(const negate_state_t *s, void *workspace, void *out, const void *x,
                                   oprt_stream_t stream) {
    (void)workspace;
    (void)stream;  /* the host runs synchronously on any stream */
    const oprt_elementwise_plan_t *p = &s->plan;
    const size_t size = oprt_dtype_size(p->dtype);
    for (int64_t i = 0; i < p->numel; ++i) {
        const int64_t xo = oprt_offset_of(i, p->ndim, p->shape, p->in_strides[0]);
        const int64_t oo = oprt_offset_of(i, p->ndim, p->shape, p->out_strides);
        if (size == 4) {
            uint32_t v;
            memcpy(&v, (const char *)x + xo * 4, 4);
            v ^= 0x80000000u;
            memcpy((char *)out + oo * 4, &v, 4);
        } else {
            uint16_t v;
            memcpy(&v, (const char *)x + xo * 2, 2);
            v ^= 0x8000u;
            memcpy((char *)out + oo * 2, &v, 2);
        }
    }
    return OPRT_STATUS_SUCCESS;
}

OPRT_DEFINE_OP(negate, negate_state_t, negate_plan, negate_launch)
