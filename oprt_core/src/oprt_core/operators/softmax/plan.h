/*
 * operators/softmax/plan.h: softmax's validation: an axis plan (oprt_validate.h) of x along one axis, out of x's shape; out may be
 * exactly x.
 * Backends' plan functions call oprt_plan_softmax; oprt_entry.h includes this header.
 */
#ifndef OPRT_PLAN_SOFTMAX_H_
#define OPRT_PLAN_SOFTMAX_H_

#include "oprt_validate.h"

static inline oprt_status_t oprt_plan_softmax(oprt_axis_plan_t *plan, const oprt_tensor_desc_t *out,
                                              const oprt_tensor_desc_t *x, int32_t axis) {
    OPRT_CHECK_NOT_NULL(plan);
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    OPRT_CHECK(oprt_check_tensor(x, "x"));
    OPRT_CHECK(oprt_check_same_dtype(out, x, "x"));
    if (!oprt_same_shape(out, x)) {
        char so[160], sx[160];
        oprt_format_shape(out, so, sizeof so);
        oprt_format_shape(x, sx, sizeof sx);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "shape mismatch: softmax needs out %s to equal x %s", so, sx);
    }
    OPRT_CHECK(oprt_check_output_strides(out, "out"));
    memset(plan, 0, sizeof *plan);
    plan->dtype = x->dtype;
    OPRT_CHECK(oprt_normalize_axis(axis, x->ndim, &plan->axis, "softmax"));
    oprt_axis_split(plan, x);
    for (int32_t i = 0; i < x->ndim; ++i) plan->out_strides[i] = out->strides[i];
    plan->numel_out = plan->numel_in;
    plan->contiguous = oprt_is_contiguous(x) && oprt_is_contiguous(out);
    oprt_plan_alias(&plan->alias, out, &x, 1);
    plan->alias.inplace[0] = 1; /* a slice's elements are read (max, sum) before any of them is written */
    return OPRT_STATUS_SUCCESS;
}

#endif /* OPRT_PLAN_SOFTMAX_H_ */
