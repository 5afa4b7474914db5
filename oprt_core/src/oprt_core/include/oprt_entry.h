/*
 * oprt_entry.h: the ops' C entry points, written around a backend's own two functions per op. Generated from the
 * op specs by oprt_core.cdecl (python -m oprt_core.cdecl --write); edit the specs, not this.
 *
 * A backend source that includes oprt_validate.h and this header implements an op by
 *     OPRT_DEFINE_OP(<op>, State, plan_fn, launch_fn)
 * at file scope, inside extern "C" in C++, with
 *     oprt_status_t plan_fn(State *state, size_t *workspace_size, const oprt_tensor_desc_t *out,
 *                           const oprt_tensor_desc_t *<input>..., <ctype> <param>...);
 *     oprt_status_t launch_fn(const State *state, void *workspace, void *out, const void *<input>...,
 *                             oprt_stream_t stream);
 * An op with several outputs takes one tensor and one pointer per output, in its declared order, where these take
 * `out` (add_rms_norm: out, h); its launch also refuses two outputs that share memory (oprt_check_launch_outputs).
 * An optional input (matmul's c) left out is a NULL tensor in create (plan_fn gets NULL and decides what that
 * means) and a pointer the launch checks do not look at (launch_fn gets it as given, NULL from oprt_core).
 * plan_fn validates (the op's oprt_plan_<op>, from its folder's plan.h, included below) and fills the state, a plain
 * struct copied by value and freed with the descriptor; launch_fn runs the kernel. The macro defines the descriptor,
 * its create, workspace size and destroy, and a launch that checks the descriptor, the workspace, NULL pointers and
 * the aliasing the op declares (oprt_check_launch) before calling launch_fn.
 */
#ifndef OPRT_ENTRY_H_
#define OPRT_ENTRY_H_

#include <stdlib.h>

#include "oprt_validate.h"

/* Run first in every launch the macros define, before its checks, so that it runs for a call they refuse too: a
 * backend may define it, before or after including this header, to reset per-call state (the GPU kernels' note of
 * the call's launches: common.cuh). Nothing by default. */
#ifndef OPRT_ENTRY_LAUNCH_PROLOGUE
#define OPRT_ENTRY_LAUNCH_PROLOGUE() ((void)0)
#endif

/* each op's oprt_plan_<op> (oprt_core/operators/<op>/plan.h) */
#include "../operators/copy/plan.h"
#include "../operators/vector_add/plan.h"
#include "../operators/relu/plan.h"
#include "../operators/reduce_sum/plan.h"
#include "../operators/softmax/plan.h"
#include "../operators/rms_norm/plan.h"
#include "../operators/add_rms_norm/plan.h"
#include "../operators/layer_norm/plan.h"
#include "../operators/silu_mul/plan.h"
#include "../operators/cross_entropy/plan.h"
#include "../operators/rope/plan.h"
#include "../operators/matmul/plan.h"

/* Every op of oprt.h, in its order: OPRT_FOR_EACH_OP(X) is X(<op>) for each (with OPRT_DEFINE_OP: the
 * same entry points for all of them, as docs/how-to-add-a-backend.md's skeleton does). */
#define OPRT_FOR_EACH_OP(X) X(copy) X(vector_add) X(relu) X(reduce_sum) X(softmax) X(rms_norm) \
    X(add_rms_norm) X(layer_norm) X(silu_mul) X(cross_entropy) X(rope) X(matmul)

#define OPRT_DEFINE_OP(op, State, plan_fn, launch_fn) OPRT_DEFINE_OP_##op(State, plan_fn, launch_fn)

/* copy: launch_fn(const State *, void *workspace, void *out, const void *x, oprt_stream_t) */
#define OPRT_DEFINE_OP_copy(State, plan_fn, launch_fn)                                                       \
    struct oprt_copy_descriptor {                                                                            \
        oprt_op_common_t common;                                                                             \
        State state;                                                                                         \
    };                                                                                                       \
    oprt_status_t oprt_create_copy_descriptor(oprt_copy_descriptor_t *desc, const oprt_tensor_desc_t *out,   \
                                              const oprt_tensor_desc_t *x) {                                 \
        OPRT_CHECK_NOT_NULL(desc);                                                                           \
        *desc = NULL;                                                                                        \
        struct oprt_copy_descriptor *d_ = (struct oprt_copy_descriptor *)calloc(1, sizeof *d_);              \
        if (d_ == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "copy: out of host memory");        \
        const oprt_status_t s_ = plan_fn(&d_->state, &d_->common.workspace_size, out, x);                    \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                                     \
            free(d_);                                                                                        \
            return s_;                                                                                       \
        }                                                                                                    \
        const oprt_tensor_desc_t *ins_[1] = {x};                                                             \
        oprt_op_common_init(&d_->common, out, ins_, 1);                                                      \
        d_->common.alias.inplace[0] = 1;                                                                     \
        *desc = d_;                                                                                          \
        return OPRT_STATUS_SUCCESS;                                                                          \
    }                                                                                                        \
    oprt_status_t oprt_get_copy_workspace_size(oprt_copy_descriptor_t desc, size_t *size) {                  \
        OPRT_CHECK_NOT_NULL(desc);                                                                           \
        OPRT_CHECK_NOT_NULL(size);                                                                           \
        *size = desc->common.workspace_size;                                                                 \
        return OPRT_STATUS_SUCCESS;                                                                          \
    }                                                                                                        \
    oprt_status_t oprt_copy(oprt_copy_descriptor_t desc, void *workspace, size_t workspace_size, void *out,  \
                            const void *x, oprt_stream_t stream) {                                           \
        OPRT_ENTRY_LAUNCH_PROLOGUE();                                                                        \
        OPRT_CHECK_NOT_NULL(desc);                                                                           \
        const void *ins_[1] = {x};                                                                           \
        static const char *const names_[1] = {"x"};                                                          \
        OPRT_CHECK(oprt_check_launch(&desc->common, "copy", workspace, workspace_size, out, ins_, names_));  \
        return launch_fn(&desc->state, workspace, out, x, stream);                                           \
    }                                                                                                        \
    oprt_status_t oprt_destroy_copy_descriptor(oprt_copy_descriptor_t desc) {                                \
        OPRT_CHECK_NOT_NULL(desc);                                                                           \
        free(desc);                                                                                          \
        return OPRT_STATUS_SUCCESS;                                                                          \
    }

/* vector_add: launch_fn(const State *, void *workspace, void *out, const void *a, const void *b, oprt_stream_t) */
#define OPRT_DEFINE_OP_vector_add(State, plan_fn, launch_fn)                                                       \
    struct oprt_vector_add_descriptor {                                                                            \
        oprt_op_common_t common;                                                                                   \
        State state;                                                                                               \
    };                                                                                                             \
    oprt_status_t oprt_create_vector_add_descriptor(oprt_vector_add_descriptor_t *desc,                            \
                                                    const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *a,    \
                                                    const oprt_tensor_desc_t *b) {                                 \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        *desc = NULL;                                                                                              \
        struct oprt_vector_add_descriptor *d_ = (struct oprt_vector_add_descriptor *)calloc(1, sizeof *d_);        \
        if (d_ == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "vector_add: out of host memory");        \
        const oprt_status_t s_ = plan_fn(&d_->state, &d_->common.workspace_size, out, a, b);                       \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                                           \
            free(d_);                                                                                              \
            return s_;                                                                                             \
        }                                                                                                          \
        const oprt_tensor_desc_t *ins_[2] = {a, b};                                                                \
        oprt_op_common_init(&d_->common, out, ins_, 2);                                                            \
        d_->common.alias.inplace[0] = 1;                                                                           \
        d_->common.alias.inplace[1] = 1;                                                                           \
        *desc = d_;                                                                                                \
        return OPRT_STATUS_SUCCESS;                                                                                \
    }                                                                                                              \
    oprt_status_t oprt_get_vector_add_workspace_size(oprt_vector_add_descriptor_t desc, size_t *size) {            \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        OPRT_CHECK_NOT_NULL(size);                                                                                 \
        *size = desc->common.workspace_size;                                                                       \
        return OPRT_STATUS_SUCCESS;                                                                                \
    }                                                                                                              \
    oprt_status_t oprt_vector_add(oprt_vector_add_descriptor_t desc, void *workspace, size_t workspace_size,       \
                                  void *out, const void *a, const void *b, oprt_stream_t stream) {                 \
        OPRT_ENTRY_LAUNCH_PROLOGUE();                                                                              \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        const void *ins_[2] = {a, b};                                                                              \
        static const char *const names_[2] = {"a", "b"};                                                           \
        OPRT_CHECK(oprt_check_launch(&desc->common, "vector_add", workspace, workspace_size, out, ins_, names_));  \
        return launch_fn(&desc->state, workspace, out, a, b, stream);                                              \
    }                                                                                                              \
    oprt_status_t oprt_destroy_vector_add_descriptor(oprt_vector_add_descriptor_t desc) {                          \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        free(desc);                                                                                                \
        return OPRT_STATUS_SUCCESS;                                                                                \
    }

/* relu: launch_fn(const State *, void *workspace, void *out, const void *x, oprt_stream_t) */
#define OPRT_DEFINE_OP_relu(State, plan_fn, launch_fn)                                                       \
    struct oprt_relu_descriptor {                                                                            \
        oprt_op_common_t common;                                                                             \
        State state;                                                                                         \
    };                                                                                                       \
    oprt_status_t oprt_create_relu_descriptor(oprt_relu_descriptor_t *desc, const oprt_tensor_desc_t *out,   \
                                              const oprt_tensor_desc_t *x, float negative_slope) {           \
        OPRT_CHECK_NOT_NULL(desc);                                                                           \
        *desc = NULL;                                                                                        \
        struct oprt_relu_descriptor *d_ = (struct oprt_relu_descriptor *)calloc(1, sizeof *d_);              \
        if (d_ == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "relu: out of host memory");        \
        const oprt_status_t s_ = plan_fn(&d_->state, &d_->common.workspace_size, out, x, negative_slope);    \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                                     \
            free(d_);                                                                                        \
            return s_;                                                                                       \
        }                                                                                                    \
        const oprt_tensor_desc_t *ins_[1] = {x};                                                             \
        oprt_op_common_init(&d_->common, out, ins_, 1);                                                      \
        d_->common.alias.inplace[0] = 1;                                                                     \
        *desc = d_;                                                                                          \
        return OPRT_STATUS_SUCCESS;                                                                          \
    }                                                                                                        \
    oprt_status_t oprt_get_relu_workspace_size(oprt_relu_descriptor_t desc, size_t *size) {                  \
        OPRT_CHECK_NOT_NULL(desc);                                                                           \
        OPRT_CHECK_NOT_NULL(size);                                                                           \
        *size = desc->common.workspace_size;                                                                 \
        return OPRT_STATUS_SUCCESS;                                                                          \
    }                                                                                                        \
    oprt_status_t oprt_relu(oprt_relu_descriptor_t desc, void *workspace, size_t workspace_size, void *out,  \
                            const void *x, oprt_stream_t stream) {                                           \
        OPRT_ENTRY_LAUNCH_PROLOGUE();                                                                        \
        OPRT_CHECK_NOT_NULL(desc);                                                                           \
        const void *ins_[1] = {x};                                                                           \
        static const char *const names_[1] = {"x"};                                                          \
        OPRT_CHECK(oprt_check_launch(&desc->common, "relu", workspace, workspace_size, out, ins_, names_));  \
        return launch_fn(&desc->state, workspace, out, x, stream);                                           \
    }                                                                                                        \
    oprt_status_t oprt_destroy_relu_descriptor(oprt_relu_descriptor_t desc) {                                \
        OPRT_CHECK_NOT_NULL(desc);                                                                           \
        free(desc);                                                                                          \
        return OPRT_STATUS_SUCCESS;                                                                          \
    }

/* reduce_sum: launch_fn(const State *, void *workspace, void *out, const void *x, oprt_stream_t) */
#define OPRT_DEFINE_OP_reduce_sum(State, plan_fn, launch_fn)                                                       \
    struct oprt_reduce_sum_descriptor {                                                                            \
        oprt_op_common_t common;                                                                                   \
        State state;                                                                                               \
    };                                                                                                             \
    oprt_status_t oprt_create_reduce_sum_descriptor(oprt_reduce_sum_descriptor_t *desc,                            \
                                                    const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *x,    \
                                                    int32_t axis, int32_t keepdims) {                              \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        *desc = NULL;                                                                                              \
        struct oprt_reduce_sum_descriptor *d_ = (struct oprt_reduce_sum_descriptor *)calloc(1, sizeof *d_);        \
        if (d_ == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "reduce_sum: out of host memory");        \
        const oprt_status_t s_ = plan_fn(&d_->state, &d_->common.workspace_size, out, x, axis, keepdims);          \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                                           \
            free(d_);                                                                                              \
            return s_;                                                                                             \
        }                                                                                                          \
        const oprt_tensor_desc_t *ins_[1] = {x};                                                                   \
        oprt_op_common_init(&d_->common, out, ins_, 1);                                                            \
        *desc = d_;                                                                                                \
        return OPRT_STATUS_SUCCESS;                                                                                \
    }                                                                                                              \
    oprt_status_t oprt_get_reduce_sum_workspace_size(oprt_reduce_sum_descriptor_t desc, size_t *size) {            \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        OPRT_CHECK_NOT_NULL(size);                                                                                 \
        *size = desc->common.workspace_size;                                                                       \
        return OPRT_STATUS_SUCCESS;                                                                                \
    }                                                                                                              \
    oprt_status_t oprt_reduce_sum(oprt_reduce_sum_descriptor_t desc, void *workspace, size_t workspace_size,       \
                                  void *out, const void *x, oprt_stream_t stream) {                                \
        OPRT_ENTRY_LAUNCH_PROLOGUE();                                                                              \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        const void *ins_[1] = {x};                                                                                 \
        static const char *const names_[1] = {"x"};                                                                \
        OPRT_CHECK(oprt_check_launch(&desc->common, "reduce_sum", workspace, workspace_size, out, ins_, names_));  \
        return launch_fn(&desc->state, workspace, out, x, stream);                                                 \
    }                                                                                                              \
    oprt_status_t oprt_destroy_reduce_sum_descriptor(oprt_reduce_sum_descriptor_t desc) {                          \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        free(desc);                                                                                                \
        return OPRT_STATUS_SUCCESS;                                                                                \
    }

/* softmax: launch_fn(const State *, void *workspace, void *out, const void *x, oprt_stream_t) */
#define OPRT_DEFINE_OP_softmax(State, plan_fn, launch_fn)                                                          \
    struct oprt_softmax_descriptor {                                                                               \
        oprt_op_common_t common;                                                                                   \
        State state;                                                                                               \
    };                                                                                                             \
    oprt_status_t oprt_create_softmax_descriptor(oprt_softmax_descriptor_t *desc, const oprt_tensor_desc_t *out,   \
                                                 const oprt_tensor_desc_t *x, int32_t axis) {                      \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        *desc = NULL;                                                                                              \
        struct oprt_softmax_descriptor *d_ = (struct oprt_softmax_descriptor *)calloc(1, sizeof *d_);              \
        if (d_ == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "softmax: out of host memory");           \
        const oprt_status_t s_ = plan_fn(&d_->state, &d_->common.workspace_size, out, x, axis);                    \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                                           \
            free(d_);                                                                                              \
            return s_;                                                                                             \
        }                                                                                                          \
        const oprt_tensor_desc_t *ins_[1] = {x};                                                                   \
        oprt_op_common_init(&d_->common, out, ins_, 1);                                                            \
        d_->common.alias.inplace[0] = 1;                                                                           \
        *desc = d_;                                                                                                \
        return OPRT_STATUS_SUCCESS;                                                                                \
    }                                                                                                              \
    oprt_status_t oprt_get_softmax_workspace_size(oprt_softmax_descriptor_t desc, size_t *size) {                  \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        OPRT_CHECK_NOT_NULL(size);                                                                                 \
        *size = desc->common.workspace_size;                                                                       \
        return OPRT_STATUS_SUCCESS;                                                                                \
    }                                                                                                              \
    oprt_status_t oprt_softmax(oprt_softmax_descriptor_t desc, void *workspace, size_t workspace_size, void *out,  \
                               const void *x, oprt_stream_t stream) {                                              \
        OPRT_ENTRY_LAUNCH_PROLOGUE();                                                                              \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        const void *ins_[1] = {x};                                                                                 \
        static const char *const names_[1] = {"x"};                                                                \
        OPRT_CHECK(oprt_check_launch(&desc->common, "softmax", workspace, workspace_size, out, ins_, names_));     \
        return launch_fn(&desc->state, workspace, out, x, stream);                                                 \
    }                                                                                                              \
    oprt_status_t oprt_destroy_softmax_descriptor(oprt_softmax_descriptor_t desc) {                                \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        free(desc);                                                                                                \
        return OPRT_STATUS_SUCCESS;                                                                                \
    }

/* rms_norm: launch_fn(const State *, void *workspace, void *out, const void *x, const void *weight, oprt_stream_t) */
#define OPRT_DEFINE_OP_rms_norm(State, plan_fn, launch_fn)                                                          \
    struct oprt_rms_norm_descriptor {                                                                               \
        oprt_op_common_t common;                                                                                    \
        State state;                                                                                                \
    };                                                                                                              \
    oprt_status_t oprt_create_rms_norm_descriptor(oprt_rms_norm_descriptor_t *desc, const oprt_tensor_desc_t *out,  \
                                                  const oprt_tensor_desc_t *x, const oprt_tensor_desc_t *weight,    \
                                                  float eps) {                                                      \
        OPRT_CHECK_NOT_NULL(desc);                                                                                  \
        *desc = NULL;                                                                                               \
        struct oprt_rms_norm_descriptor *d_ = (struct oprt_rms_norm_descriptor *)calloc(1, sizeof *d_);             \
        if (d_ == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "rms_norm: out of host memory");           \
        const oprt_status_t s_ = plan_fn(&d_->state, &d_->common.workspace_size, out, x, weight, eps);              \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                                            \
            free(d_);                                                                                               \
            return s_;                                                                                              \
        }                                                                                                           \
        const oprt_tensor_desc_t *ins_[2] = {x, weight};                                                            \
        oprt_op_common_init(&d_->common, out, ins_, 2);                                                             \
        *desc = d_;                                                                                                 \
        return OPRT_STATUS_SUCCESS;                                                                                 \
    }                                                                                                               \
    oprt_status_t oprt_get_rms_norm_workspace_size(oprt_rms_norm_descriptor_t desc, size_t *size) {                 \
        OPRT_CHECK_NOT_NULL(desc);                                                                                  \
        OPRT_CHECK_NOT_NULL(size);                                                                                  \
        *size = desc->common.workspace_size;                                                                        \
        return OPRT_STATUS_SUCCESS;                                                                                 \
    }                                                                                                               \
    oprt_status_t oprt_rms_norm(oprt_rms_norm_descriptor_t desc, void *workspace, size_t workspace_size,            \
                                void *out, const void *x, const void *weight, oprt_stream_t stream) {               \
        OPRT_ENTRY_LAUNCH_PROLOGUE();                                                                               \
        OPRT_CHECK_NOT_NULL(desc);                                                                                  \
        const void *ins_[2] = {x, weight};                                                                          \
        static const char *const names_[2] = {"x", "weight"};                                                       \
        OPRT_CHECK(oprt_check_launch(&desc->common, "rms_norm", workspace, workspace_size, out, ins_, names_));     \
        return launch_fn(&desc->state, workspace, out, x, weight, stream);                                          \
    }                                                                                                               \
    oprt_status_t oprt_destroy_rms_norm_descriptor(oprt_rms_norm_descriptor_t desc) {                               \
        OPRT_CHECK_NOT_NULL(desc);                                                                                  \
        free(desc);                                                                                                 \
        return OPRT_STATUS_SUCCESS;                                                                                 \
    }

/* add_rms_norm: launch_fn(const State *, void *workspace, void *out, void *h, const void *x, const void *residual, const void *weight, oprt_stream_t) */
#define OPRT_DEFINE_OP_add_rms_norm(State, plan_fn, launch_fn)                                                                \
    struct oprt_add_rms_norm_descriptor {                                                                                     \
        oprt_op_outputs_t common;                                                                                             \
        State state;                                                                                                          \
    };                                                                                                                        \
    oprt_status_t oprt_create_add_rms_norm_descriptor(oprt_add_rms_norm_descriptor_t *desc,                                   \
                                                      const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *h,             \
                                                      const oprt_tensor_desc_t *x,                                            \
                                                      const oprt_tensor_desc_t *residual,                                     \
                                                      const oprt_tensor_desc_t *weight, float eps) {                          \
        OPRT_CHECK_NOT_NULL(desc);                                                                                            \
        *desc = NULL;                                                                                                         \
        struct oprt_add_rms_norm_descriptor *d_ = (struct oprt_add_rms_norm_descriptor *)calloc(1, sizeof *d_);               \
        if (d_ == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "add_rms_norm: out of host memory");                 \
        const oprt_status_t s_ = plan_fn(&d_->state, &d_->common.workspace_size, out, h, x, residual, weight, eps);           \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                                                      \
            free(d_);                                                                                                         \
            return s_;                                                                                                        \
        }                                                                                                                     \
        const oprt_tensor_desc_t *outs_[2] = {out, h};                                                                        \
        const oprt_tensor_desc_t *ins_[3] = {x, residual, weight};                                                            \
        oprt_op_outputs_init(&d_->common, outs_, 2, ins_, 3);                                                                 \
        d_->common.alias[0].inplace[0] = 1;                                                                                   \
        d_->common.alias[0].inplace[1] = 1;                                                                                   \
        d_->common.alias[1].inplace[0] = 1;                                                                                   \
        d_->common.alias[1].inplace[1] = 1;                                                                                   \
        *desc = d_;                                                                                                           \
        return OPRT_STATUS_SUCCESS;                                                                                           \
    }                                                                                                                         \
    oprt_status_t oprt_get_add_rms_norm_workspace_size(oprt_add_rms_norm_descriptor_t desc, size_t *size) {                   \
        OPRT_CHECK_NOT_NULL(desc);                                                                                            \
        OPRT_CHECK_NOT_NULL(size);                                                                                            \
        *size = desc->common.workspace_size;                                                                                  \
        return OPRT_STATUS_SUCCESS;                                                                                           \
    }                                                                                                                         \
    oprt_status_t oprt_add_rms_norm(oprt_add_rms_norm_descriptor_t desc, void *workspace, size_t workspace_size,              \
                                    void *out, void *h, const void *x, const void *residual, const void *weight,              \
                                    oprt_stream_t stream) {                                                                   \
        OPRT_ENTRY_LAUNCH_PROLOGUE();                                                                                         \
        OPRT_CHECK_NOT_NULL(desc);                                                                                            \
        void *const outs_[2] = {out, h};                                                                                      \
        const void *ins_[3] = {x, residual, weight};                                                                          \
        static const char *const onames_[2] = {"out", "h"};                                                                   \
        static const char *const names_[3] = {"x", "residual", "weight"};                                                     \
        OPRT_CHECK(oprt_check_launch_outputs(&desc->common, "add_rms_norm", workspace, workspace_size, outs_, onames_, ins_,  \
                                             names_));                                                                        \
        return launch_fn(&desc->state, workspace, out, h, x, residual, weight, stream);                                       \
    }                                                                                                                         \
    oprt_status_t oprt_destroy_add_rms_norm_descriptor(oprt_add_rms_norm_descriptor_t desc) {                                 \
        OPRT_CHECK_NOT_NULL(desc);                                                                                            \
        free(desc);                                                                                                           \
        return OPRT_STATUS_SUCCESS;                                                                                           \
    }

/* layer_norm: launch_fn(const State *, void *workspace, void *out, const void *x, const void *weight, const void *bias, oprt_stream_t) */
#define OPRT_DEFINE_OP_layer_norm(State, plan_fn, launch_fn)                                                       \
    struct oprt_layer_norm_descriptor {                                                                            \
        oprt_op_common_t common;                                                                                   \
        State state;                                                                                               \
    };                                                                                                             \
    oprt_status_t oprt_create_layer_norm_descriptor(oprt_layer_norm_descriptor_t *desc,                            \
                                                    const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *x,    \
                                                    const oprt_tensor_desc_t *weight,                              \
                                                    const oprt_tensor_desc_t *bias, float eps) {                   \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        *desc = NULL;                                                                                              \
        struct oprt_layer_norm_descriptor *d_ = (struct oprt_layer_norm_descriptor *)calloc(1, sizeof *d_);        \
        if (d_ == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "layer_norm: out of host memory");        \
        const oprt_status_t s_ = plan_fn(&d_->state, &d_->common.workspace_size, out, x, weight, bias, eps);       \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                                           \
            free(d_);                                                                                              \
            return s_;                                                                                             \
        }                                                                                                          \
        const oprt_tensor_desc_t *ins_[3] = {x, weight, bias};                                                     \
        oprt_op_common_init(&d_->common, out, ins_, 3);                                                            \
        *desc = d_;                                                                                                \
        return OPRT_STATUS_SUCCESS;                                                                                \
    }                                                                                                              \
    oprt_status_t oprt_get_layer_norm_workspace_size(oprt_layer_norm_descriptor_t desc, size_t *size) {            \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        OPRT_CHECK_NOT_NULL(size);                                                                                 \
        *size = desc->common.workspace_size;                                                                       \
        return OPRT_STATUS_SUCCESS;                                                                                \
    }                                                                                                              \
    oprt_status_t oprt_layer_norm(oprt_layer_norm_descriptor_t desc, void *workspace, size_t workspace_size,       \
                                  void *out, const void *x, const void *weight, const void *bias,                  \
                                  oprt_stream_t stream) {                                                          \
        OPRT_ENTRY_LAUNCH_PROLOGUE();                                                                              \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        const void *ins_[3] = {x, weight, bias};                                                                   \
        static const char *const names_[3] = {"x", "weight", "bias"};                                              \
        OPRT_CHECK(oprt_check_launch(&desc->common, "layer_norm", workspace, workspace_size, out, ins_, names_));  \
        return launch_fn(&desc->state, workspace, out, x, weight, bias, stream);                                   \
    }                                                                                                              \
    oprt_status_t oprt_destroy_layer_norm_descriptor(oprt_layer_norm_descriptor_t desc) {                          \
        OPRT_CHECK_NOT_NULL(desc);                                                                                 \
        free(desc);                                                                                                \
        return OPRT_STATUS_SUCCESS;                                                                                \
    }

/* silu_mul: launch_fn(const State *, void *workspace, void *out, const void *gate, const void *up, oprt_stream_t) */
#define OPRT_DEFINE_OP_silu_mul(State, plan_fn, launch_fn)                                                          \
    struct oprt_silu_mul_descriptor {                                                                               \
        oprt_op_common_t common;                                                                                    \
        State state;                                                                                                \
    };                                                                                                              \
    oprt_status_t oprt_create_silu_mul_descriptor(oprt_silu_mul_descriptor_t *desc, const oprt_tensor_desc_t *out,  \
                                                  const oprt_tensor_desc_t *gate, const oprt_tensor_desc_t *up) {   \
        OPRT_CHECK_NOT_NULL(desc);                                                                                  \
        *desc = NULL;                                                                                               \
        struct oprt_silu_mul_descriptor *d_ = (struct oprt_silu_mul_descriptor *)calloc(1, sizeof *d_);             \
        if (d_ == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "silu_mul: out of host memory");           \
        const oprt_status_t s_ = plan_fn(&d_->state, &d_->common.workspace_size, out, gate, up);                    \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                                            \
            free(d_);                                                                                               \
            return s_;                                                                                              \
        }                                                                                                           \
        const oprt_tensor_desc_t *ins_[2] = {gate, up};                                                             \
        oprt_op_common_init(&d_->common, out, ins_, 2);                                                             \
        d_->common.alias.inplace[0] = 1;                                                                            \
        d_->common.alias.inplace[1] = 1;                                                                            \
        *desc = d_;                                                                                                 \
        return OPRT_STATUS_SUCCESS;                                                                                 \
    }                                                                                                               \
    oprt_status_t oprt_get_silu_mul_workspace_size(oprt_silu_mul_descriptor_t desc, size_t *size) {                 \
        OPRT_CHECK_NOT_NULL(desc);                                                                                  \
        OPRT_CHECK_NOT_NULL(size);                                                                                  \
        *size = desc->common.workspace_size;                                                                        \
        return OPRT_STATUS_SUCCESS;                                                                                 \
    }                                                                                                               \
    oprt_status_t oprt_silu_mul(oprt_silu_mul_descriptor_t desc, void *workspace, size_t workspace_size,            \
                                void *out, const void *gate, const void *up, oprt_stream_t stream) {                \
        OPRT_ENTRY_LAUNCH_PROLOGUE();                                                                               \
        OPRT_CHECK_NOT_NULL(desc);                                                                                  \
        const void *ins_[2] = {gate, up};                                                                           \
        static const char *const names_[2] = {"gate", "up"};                                                        \
        OPRT_CHECK(oprt_check_launch(&desc->common, "silu_mul", workspace, workspace_size, out, ins_, names_));     \
        return launch_fn(&desc->state, workspace, out, gate, up, stream);                                           \
    }                                                                                                               \
    oprt_status_t oprt_destroy_silu_mul_descriptor(oprt_silu_mul_descriptor_t desc) {                               \
        OPRT_CHECK_NOT_NULL(desc);                                                                                  \
        free(desc);                                                                                                 \
        return OPRT_STATUS_SUCCESS;                                                                                 \
    }

/* cross_entropy: launch_fn(const State *, void *workspace, void *out, const void *logits, const void *target, oprt_stream_t) */
#define OPRT_DEFINE_OP_cross_entropy(State, plan_fn, launch_fn)                                                                  \
    struct oprt_cross_entropy_descriptor {                                                                                       \
        oprt_op_common_t common;                                                                                                 \
        State state;                                                                                                             \
    };                                                                                                                           \
    oprt_status_t oprt_create_cross_entropy_descriptor(oprt_cross_entropy_descriptor_t *desc,                                    \
                                                       const oprt_tensor_desc_t *out,                                            \
                                                       const oprt_tensor_desc_t *logits,                                         \
                                                       const oprt_tensor_desc_t *target, int32_t ignore_index,                   \
                                                       int32_t reduction) {                                                      \
        OPRT_CHECK_NOT_NULL(desc);                                                                                               \
        *desc = NULL;                                                                                                            \
        struct oprt_cross_entropy_descriptor *d_ = (struct oprt_cross_entropy_descriptor *)calloc(1, sizeof *d_);                \
        if (d_ == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "cross_entropy: out of host memory");                   \
        const oprt_status_t s_ = plan_fn(&d_->state, &d_->common.workspace_size, out, logits, target, ignore_index, reduction);  \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                                                         \
            free(d_);                                                                                                            \
            return s_;                                                                                                           \
        }                                                                                                                        \
        const oprt_tensor_desc_t *ins_[2] = {logits, target};                                                                    \
        oprt_op_common_init(&d_->common, out, ins_, 2);                                                                          \
        *desc = d_;                                                                                                              \
        return OPRT_STATUS_SUCCESS;                                                                                              \
    }                                                                                                                            \
    oprt_status_t oprt_get_cross_entropy_workspace_size(oprt_cross_entropy_descriptor_t desc, size_t *size) {                    \
        OPRT_CHECK_NOT_NULL(desc);                                                                                               \
        OPRT_CHECK_NOT_NULL(size);                                                                                               \
        *size = desc->common.workspace_size;                                                                                     \
        return OPRT_STATUS_SUCCESS;                                                                                              \
    }                                                                                                                            \
    oprt_status_t oprt_cross_entropy(oprt_cross_entropy_descriptor_t desc, void *workspace, size_t workspace_size,               \
                                     void *out, const void *logits, const void *target, oprt_stream_t stream) {                  \
        OPRT_ENTRY_LAUNCH_PROLOGUE();                                                                                            \
        OPRT_CHECK_NOT_NULL(desc);                                                                                               \
        const void *ins_[2] = {logits, target};                                                                                  \
        static const char *const names_[2] = {"logits", "target"};                                                               \
        OPRT_CHECK(oprt_check_launch(&desc->common, "cross_entropy", workspace, workspace_size, out, ins_, names_));             \
        return launch_fn(&desc->state, workspace, out, logits, target, stream);                                                  \
    }                                                                                                                            \
    oprt_status_t oprt_destroy_cross_entropy_descriptor(oprt_cross_entropy_descriptor_t desc) {                                  \
        OPRT_CHECK_NOT_NULL(desc);                                                                                               \
        free(desc);                                                                                                              \
        return OPRT_STATUS_SUCCESS;                                                                                              \
    }

/* rope: launch_fn(const State *, void *workspace, void *q_out, void *k_out, const void *q, const void *k, const void *cos, const void *sin, const void *positions, oprt_stream_t) */
#define OPRT_DEFINE_OP_rope(State, plan_fn, launch_fn)                                                                             \
    struct oprt_rope_descriptor {                                                                                                  \
        oprt_op_outputs_t common;                                                                                                  \
        State state;                                                                                                               \
    };                                                                                                                             \
    oprt_status_t oprt_create_rope_descriptor(oprt_rope_descriptor_t *desc, const oprt_tensor_desc_t *q_out,                       \
                                              const oprt_tensor_desc_t *k_out, const oprt_tensor_desc_t *q,                        \
                                              const oprt_tensor_desc_t *k, const oprt_tensor_desc_t *cos,                          \
                                              const oprt_tensor_desc_t *sin, const oprt_tensor_desc_t *positions,                  \
                                              int32_t style) {                                                                     \
        OPRT_CHECK_NOT_NULL(desc);                                                                                                 \
        *desc = NULL;                                                                                                              \
        struct oprt_rope_descriptor *d_ = (struct oprt_rope_descriptor *)calloc(1, sizeof *d_);                                    \
        if (d_ == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "rope: out of host memory");                              \
        const oprt_status_t s_ = plan_fn(&d_->state, &d_->common.workspace_size, q_out, k_out, q, k, cos, sin, positions, style);  \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                                                           \
            free(d_);                                                                                                              \
            return s_;                                                                                                             \
        }                                                                                                                          \
        const oprt_tensor_desc_t *outs_[2] = {q_out, k_out};                                                                       \
        const oprt_tensor_desc_t *ins_[5] = {q, k, cos, sin, positions};                                                           \
        oprt_op_outputs_init(&d_->common, outs_, 2, ins_, 5);                                                                      \
        d_->common.alias[0].inplace[0] = 1;                                                                                        \
        d_->common.alias[1].inplace[1] = 1;                                                                                        \
        *desc = d_;                                                                                                                \
        return OPRT_STATUS_SUCCESS;                                                                                                \
    }                                                                                                                              \
    oprt_status_t oprt_get_rope_workspace_size(oprt_rope_descriptor_t desc, size_t *size) {                                        \
        OPRT_CHECK_NOT_NULL(desc);                                                                                                 \
        OPRT_CHECK_NOT_NULL(size);                                                                                                 \
        *size = desc->common.workspace_size;                                                                                       \
        return OPRT_STATUS_SUCCESS;                                                                                                \
    }                                                                                                                              \
    oprt_status_t oprt_rope(oprt_rope_descriptor_t desc, void *workspace, size_t workspace_size, void *q_out,                      \
                            void *k_out, const void *q, const void *k, const void *cos, const void *sin,                           \
                            const void *positions, oprt_stream_t stream) {                                                         \
        OPRT_ENTRY_LAUNCH_PROLOGUE();                                                                                              \
        OPRT_CHECK_NOT_NULL(desc);                                                                                                 \
        void *const outs_[2] = {q_out, k_out};                                                                                     \
        const void *ins_[5] = {q, k, cos, sin, positions};                                                                         \
        static const char *const onames_[2] = {"q_out", "k_out"};                                                                  \
        static const char *const names_[5] = {"q", "k", "cos", "sin", "positions"};                                                \
        OPRT_CHECK(oprt_check_launch_outputs(&desc->common, "rope", workspace, workspace_size, outs_, onames_, ins_,               \
                                             names_));                                                                             \
        return launch_fn(&desc->state, workspace, q_out, k_out, q, k, cos, sin, positions, stream);                                \
    }                                                                                                                              \
    oprt_status_t oprt_destroy_rope_descriptor(oprt_rope_descriptor_t desc) {                                                      \
        OPRT_CHECK_NOT_NULL(desc);                                                                                                 \
        free(desc);                                                                                                                \
        return OPRT_STATUS_SUCCESS;                                                                                                \
    }

/* matmul: launch_fn(const State *, void *workspace, void *out, const void *a, const void *b, const void *c, oprt_stream_t) */
#define OPRT_DEFINE_OP_matmul(State, plan_fn, launch_fn)                                                                  \
    struct oprt_matmul_descriptor {                                                                                       \
        oprt_op_common_t common;                                                                                          \
        State state;                                                                                                      \
    };                                                                                                                    \
    oprt_status_t oprt_create_matmul_descriptor(oprt_matmul_descriptor_t *desc, const oprt_tensor_desc_t *out,            \
                                                const oprt_tensor_desc_t *a, const oprt_tensor_desc_t *b,                 \
                                                const oprt_tensor_desc_t *c, float alpha, float beta,                     \
                                                int32_t allow_tf32) {                                                     \
        OPRT_CHECK_NOT_NULL(desc);                                                                                        \
        *desc = NULL;                                                                                                     \
        struct oprt_matmul_descriptor *d_ = (struct oprt_matmul_descriptor *)calloc(1, sizeof *d_);                       \
        if (d_ == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "matmul: out of host memory");                   \
        const oprt_status_t s_ = plan_fn(&d_->state, &d_->common.workspace_size, out, a, b, c, alpha, beta, allow_tf32);  \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                                                  \
            free(d_);                                                                                                     \
            return s_;                                                                                                    \
        }                                                                                                                 \
        const oprt_tensor_desc_t *ins_[3] = {a, b, c};                                                                    \
        oprt_op_common_init(&d_->common, out, ins_, 3);                                                                   \
        d_->common.alias.inplace[2] = 1;                                                                                  \
        *desc = d_;                                                                                                       \
        return OPRT_STATUS_SUCCESS;                                                                                       \
    }                                                                                                                     \
    oprt_status_t oprt_get_matmul_workspace_size(oprt_matmul_descriptor_t desc, size_t *size) {                           \
        OPRT_CHECK_NOT_NULL(desc);                                                                                        \
        OPRT_CHECK_NOT_NULL(size);                                                                                        \
        *size = desc->common.workspace_size;                                                                              \
        return OPRT_STATUS_SUCCESS;                                                                                       \
    }                                                                                                                     \
    oprt_status_t oprt_matmul(oprt_matmul_descriptor_t desc, void *workspace, size_t workspace_size, void *out,           \
                              const void *a, const void *b, const void *c, oprt_stream_t stream) {                        \
        OPRT_ENTRY_LAUNCH_PROLOGUE();                                                                                     \
        OPRT_CHECK_NOT_NULL(desc);                                                                                        \
        const void *ins_[3] = {a, b, c};                                                                                  \
        static const char *const names_[3] = {"a", "b", "c"};                                                             \
        OPRT_CHECK(oprt_check_launch(&desc->common, "matmul", workspace, workspace_size, out, ins_, names_));             \
        return launch_fn(&desc->state, workspace, out, a, b, c, stream);                                                  \
    }                                                                                                                     \
    oprt_status_t oprt_destroy_matmul_descriptor(oprt_matmul_descriptor_t desc) {                                         \
        OPRT_CHECK_NOT_NULL(desc);                                                                                        \
        free(desc);                                                                                                       \
        return OPRT_STATUS_SUCCESS;                                                                                       \
    }

#endif /* OPRT_ENTRY_H_ */
