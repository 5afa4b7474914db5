/*
 * operators/rms_norm/plan.h: rms_norm's validation: a rows plan (oprt_validate.h's oprt_plan_rows) of x with the vector weight.
 * Backends' plan functions call oprt_plan_rms_norm; oprt_entry.h includes this header.
 */
#ifndef OPRT_PLAN_RMS_NORM_H_
#define OPRT_PLAN_RMS_NORM_H_

#include "oprt_validate.h"

static inline oprt_status_t oprt_plan_rms_norm(oprt_rows_plan_t *plan, const oprt_tensor_desc_t *out,
                                               const oprt_tensor_desc_t *x, const oprt_tensor_desc_t *weight,
                                               float eps) {
    static const char *const names[2] = {"x", "weight"};
    const oprt_tensor_desc_t *vecs[1] = {weight};
    return oprt_plan_rows(plan, "rms_norm", out, x, vecs, 1, names, eps);
}

#endif /* OPRT_PLAN_RMS_NORM_H_ */
