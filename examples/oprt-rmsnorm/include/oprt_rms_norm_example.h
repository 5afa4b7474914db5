/* Generated from the op specs by oprt_core.cdecl (python -m oprt_core.cdecl --header); edit the specs,
 * not this. */
#ifndef OPRT_RMS_NORM_EXAMPLE_H_
#define OPRT_RMS_NORM_EXAMPLE_H_

#include "oprt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* OPRT_CDEF_BEGIN */
/* ---- rms_norm_example: out = x / sqrt(mean(x**2 over the last axis) + eps) * weight; weight has shape (x.shape[-1],) ----
 * eps (float): added to the mean of squares before the square root */
typedef struct oprt_rms_norm_example_descriptor *oprt_rms_norm_example_descriptor_t;
oprt_status_t oprt_create_rms_norm_example_descriptor(oprt_rms_norm_example_descriptor_t *desc,
                                                      const oprt_tensor_desc_t *out,
                                                      const oprt_tensor_desc_t *x,
                                                      const oprt_tensor_desc_t *weight, float eps);
oprt_status_t oprt_get_rms_norm_example_workspace_size(oprt_rms_norm_example_descriptor_t desc, size_t *size);
oprt_status_t oprt_rms_norm_example(oprt_rms_norm_example_descriptor_t desc, void *workspace,
                                    size_t workspace_size, void *out, const void *x, const void *weight,
                                    oprt_stream_t stream);
oprt_status_t oprt_destroy_rms_norm_example_descriptor(oprt_rms_norm_example_descriptor_t desc);
/* OPRT_CDEF_END */

#ifdef __cplusplus
}
#endif

/* The entry points around a backend's plan and launch functions: OPRT_DEFINE_OP(<op>, State, plan_fn,
 * launch_fn), with oprt_entry.h included first (it says how). */
/* rms_norm_example: launch_fn(const State *, void *workspace, void *out, const void *x, const void *weight, oprt_stream_t) */
#define OPRT_DEFINE_OP_rms_norm_example(State, plan_fn, launch_fn)                                                       \
    struct oprt_rms_norm_example_descriptor {                                                                            \
        oprt_op_common_t common;                                                                                         \
        State state;                                                                                                     \
    };                                                                                                                   \
    oprt_status_t oprt_create_rms_norm_example_descriptor(oprt_rms_norm_example_descriptor_t *desc,                      \
                                                          const oprt_tensor_desc_t *out,                                 \
                                                          const oprt_tensor_desc_t *x,                                   \
                                                          const oprt_tensor_desc_t *weight, float eps) {                 \
        OPRT_CHECK_NOT_NULL(desc);                                                                                       \
        *desc = NULL;                                                                                                    \
        struct oprt_rms_norm_example_descriptor *d_ = (struct oprt_rms_norm_example_descriptor *)calloc(1, sizeof *d_);  \
        if (d_ == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "rms_norm_example: out of host memory");        \
        const oprt_status_t s_ = plan_fn(&d_->state, &d_->common.workspace_size, out, x, weight, eps);                   \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                                                 \
            free(d_);                                                                                                    \
            return s_;                                                                                                   \
        }                                                                                                                \
        const oprt_tensor_desc_t *ins_[2] = {x, weight};                                                                 \
        oprt_op_common_init(&d_->common, out, ins_, 2);                                                                  \
        *desc = d_;                                                                                                      \
        return OPRT_STATUS_SUCCESS;                                                                                      \
    }                                                                                                                    \
    oprt_status_t oprt_get_rms_norm_example_workspace_size(oprt_rms_norm_example_descriptor_t desc, size_t *size) {      \
        OPRT_CHECK_NOT_NULL(desc);                                                                                       \
        OPRT_CHECK_NOT_NULL(size);                                                                                       \
        *size = desc->common.workspace_size;                                                                             \
        return OPRT_STATUS_SUCCESS;                                                                                      \
    }                                                                                                                    \
    oprt_status_t oprt_rms_norm_example(oprt_rms_norm_example_descriptor_t desc, void *workspace,                        \
                                        size_t workspace_size, void *out, const void *x, const void *weight,             \
                                        oprt_stream_t stream) {                                                          \
        OPRT_CHECK_NOT_NULL(desc);                                                                                       \
        const void *ins_[2] = {x, weight};                                                                               \
        static const char *const names_[2] = {"x", "weight"};                                                            \
        OPRT_CHECK(oprt_check_launch(&desc->common, "rms_norm_example", workspace, workspace_size, out, ins_, names_));  \
        return launch_fn(&desc->state, workspace, out, x, weight, stream);                                               \
    }                                                                                                                    \
    oprt_status_t oprt_destroy_rms_norm_example_descriptor(oprt_rms_norm_example_descriptor_t desc) {                    \
        OPRT_CHECK_NOT_NULL(desc);                                                                                       \
        free(desc);                                                                                                      \
        return OPRT_STATUS_SUCCESS;                                                                                      \
    }

#endif /* OPRT_RMS_NORM_EXAMPLE_H_ */
