/* Generated from the op specs by oprt_core.cdecl (python -m oprt_core.cdecl --header); edit the specs,
 * not this. */
#ifndef OPRT_GELU_TANH_H_
#define OPRT_GELU_TANH_H_

#include "oprt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* OPRT_CDEF_BEGIN */
/* ---- gelu_tanh: out = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3))), elementwise (GELU, tanh approximation) ---- */
typedef struct oprt_gelu_tanh_descriptor *oprt_gelu_tanh_descriptor_t;
oprt_status_t oprt_create_gelu_tanh_descriptor(oprt_gelu_tanh_descriptor_t *desc,
                                               const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *x);
oprt_status_t oprt_get_gelu_tanh_workspace_size(oprt_gelu_tanh_descriptor_t desc, size_t *size);
oprt_status_t oprt_gelu_tanh(oprt_gelu_tanh_descriptor_t desc, void *workspace, size_t workspace_size,
                             void *out, const void *x, oprt_stream_t stream);
oprt_status_t oprt_destroy_gelu_tanh_descriptor(oprt_gelu_tanh_descriptor_t desc);
/* OPRT_CDEF_END */

#ifdef __cplusplus
}
#endif

/* The entry points around a backend's plan and launch functions: OPRT_DEFINE_OP(<op>, State, plan_fn,
 * launch_fn), with oprt_entry.h included first (it says how). */
/* gelu_tanh: launch_fn(const State *, void *workspace, void *out, const void *x, oprt_stream_t) */
#define OPRT_DEFINE_OP_gelu_tanh(State, plan_fn, launch_fn)                                                       \
    struct oprt_gelu_tanh_descriptor {                                                                            \
        oprt_op_common_t common;                                                                                  \
        State state;                                                                                              \
    };                                                                                                            \
    oprt_status_t oprt_create_gelu_tanh_descriptor(oprt_gelu_tanh_descriptor_t *desc,                             \
                                                   const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *x) {  \
        OPRT_CHECK_NOT_NULL(desc);                                                                                \
        *desc = NULL;                                                                                             \
        struct oprt_gelu_tanh_descriptor *d_ = (struct oprt_gelu_tanh_descriptor *)calloc(1, sizeof *d_);         \
        if (d_ == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "gelu_tanh: out of host memory");        \
        const oprt_status_t s_ = plan_fn(&d_->state, &d_->common.workspace_size, out, x);                         \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                                          \
            free(d_);                                                                                             \
            return s_;                                                                                            \
        }                                                                                                         \
        const oprt_tensor_desc_t *ins_[1] = {x};                                                                  \
        oprt_op_common_init(&d_->common, out, ins_, 1);                                                           \
        d_->common.alias.inplace[0] = 1;                                                                          \
        *desc = d_;                                                                                               \
        return OPRT_STATUS_SUCCESS;                                                                               \
    }                                                                                                             \
    oprt_status_t oprt_get_gelu_tanh_workspace_size(oprt_gelu_tanh_descriptor_t desc, size_t *size) {             \
        OPRT_CHECK_NOT_NULL(desc);                                                                                \
        OPRT_CHECK_NOT_NULL(size);                                                                                \
        *size = desc->common.workspace_size;                                                                      \
        return OPRT_STATUS_SUCCESS;                                                                               \
    }                                                                                                             \
    oprt_status_t oprt_gelu_tanh(oprt_gelu_tanh_descriptor_t desc, void *workspace, size_t workspace_size,        \
                                 void *out, const void *x, oprt_stream_t stream) {                                \
        OPRT_ENTRY_LAUNCH_PROLOGUE();                                                                             \
        OPRT_CHECK_NOT_NULL(desc);                                                                                \
        const void *ins_[1] = {x};                                                                                \
        static const char *const names_[1] = {"x"};                                                               \
        OPRT_CHECK(oprt_check_launch(&desc->common, "gelu_tanh", workspace, workspace_size, out, ins_, names_));  \
        return launch_fn(&desc->state, workspace, out, x, stream);                                                \
    }                                                                                                             \
    oprt_status_t oprt_destroy_gelu_tanh_descriptor(oprt_gelu_tanh_descriptor_t desc) {                           \
        OPRT_CHECK_NOT_NULL(desc);                                                                                \
        free(desc);                                                                                               \
        return OPRT_STATUS_SUCCESS;                                                                               \
    }

#endif /* OPRT_GELU_TANH_H_ */
