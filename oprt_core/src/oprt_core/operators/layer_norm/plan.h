/*
 * operators/layer_norm/plan.h: layer_norm's validation: a rows plan (oprt_validate.h's oprt_plan_rows) of x with the vectors
 * weight and bias.
 * Backends' plan functions call oprt_plan_layer_norm; oprt_entry.h includes this header.
 */
#ifndef OPRT_PLAN_LAYER_NORM_H_
#define OPRT_PLAN_LAYER_NORM_H_

#include "oprt_validate.h"

static inline oprt_status_t oprt_plan_layer_norm(oprt_rows_plan_t *plan, const oprt_tensor_desc_t *out,
                                                 const oprt_tensor_desc_t *x, const oprt_tensor_desc_t *weight,
                                                 const oprt_tensor_desc_t *bias, float eps) {
    static const char *const names[3] = {"x", "weight", "bias"};
    const oprt_tensor_desc_t *vecs[2] = {weight, bias};
    return oprt_plan_rows(plan, "layer_norm", out, x, vecs, 2, names, eps);
}

#endif /* OPRT_PLAN_LAYER_NORM_H_ */
