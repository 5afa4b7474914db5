/*
 * operators/reduce_sum/plan.h: reduce_sum's validation: an axis plan (oprt_validate.h) of x over one axis or all, out of the
 * reduced shape; never in place.
 * Backends' plan functions call oprt_plan_reduce_sum; oprt_entry.h includes this header.
 */
#ifndef OPRT_PLAN_REDUCE_SUM_H_
#define OPRT_PLAN_REDUCE_SUM_H_

#include "oprt_validate.h"

static inline oprt_status_t oprt_plan_reduce_sum(oprt_axis_plan_t *plan, const oprt_tensor_desc_t *out,
                                                 const oprt_tensor_desc_t *x, int32_t axis, int32_t keepdims) {
    OPRT_CHECK_NOT_NULL(plan);
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    OPRT_CHECK(oprt_check_tensor(x, "x"));
    OPRT_CHECK(oprt_check_same_dtype(out, x, "x"));
    memset(plan, 0, sizeof *plan);
    plan->dtype = x->dtype;
    plan->keepdims = keepdims != 0;
    if (axis == OPRT_AXIS_ALL) plan->axis = -1;
    else OPRT_CHECK(oprt_normalize_axis(axis, x->ndim, &plan->axis, "reduce_sum"));
    oprt_axis_split(plan, x);
    /* expected out shape */
    oprt_tensor_desc_t expect;
    memset(&expect, 0, sizeof expect);
    expect.dtype = x->dtype;
    int32_t map[OPRT_MAX_NDIM]; /* out dim -> x dim */
    for (int32_t i = 0; i < x->ndim; ++i) {
        int reduced = plan->axis < 0 || i == plan->axis;
        if (reduced && !plan->keepdims) continue;
        map[expect.ndim] = i;
        expect.shape[expect.ndim++] = reduced ? 1 : x->shape[i];
    }
    if (!oprt_same_shape(out, &expect)) {
        char so[160], se[160];
        oprt_format_shape(out, so, sizeof so);
        oprt_format_shape(&expect, se, sizeof se);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "shape mismatch: reduce_sum out has shape %s, expected %s",
                              so, se);
    }
    OPRT_CHECK(oprt_check_output_strides(out, "out"));
    for (int32_t i = 0; i < x->ndim; ++i) plan->out_strides[i] = 0;
    for (int32_t j = 0; j < out->ndim; ++j)
        plan->out_strides[map[j]] = out->shape[j] == 1 ? 0 : out->strides[j];
    plan->numel_out = oprt_numel(out);
    plan->contiguous = oprt_is_contiguous(x) && oprt_is_contiguous(out);
    oprt_plan_alias(&plan->alias, out, &x, 1); /* never in place: a sum may land on x while others still read it */
    return OPRT_STATUS_SUCCESS;
}

#endif /* OPRT_PLAN_REDUCE_SUM_H_ */
