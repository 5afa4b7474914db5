/*
 * operators/relu/plan.h: relu's validation: copy's, and a finite negative_slope.
 * Backends' plan functions call oprt_plan_relu; oprt_entry.h includes this header.
 */
#ifndef OPRT_PLAN_RELU_H_
#define OPRT_PLAN_RELU_H_

#include "oprt_validate.h"
#include "../copy/plan.h"

static inline oprt_status_t oprt_plan_relu(oprt_elementwise_plan_t *plan, const oprt_tensor_desc_t *out,
                                           const oprt_tensor_desc_t *x, float negative_slope) {
    if (!isfinite(negative_slope))
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "relu: negative_slope must be finite, got %g",
                              (double)negative_slope);
    return oprt_plan_copy(plan, out, x);
}

#endif /* OPRT_PLAN_RELU_H_ */
