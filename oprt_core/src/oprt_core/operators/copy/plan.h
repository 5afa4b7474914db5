/*
 * operators/copy/plan.h: copy's validation: out of x's shape and dtype, an elementwise plan in which out may be exactly x.
 * Backends' plan functions call oprt_plan_copy; oprt_entry.h includes this header.
 */
#ifndef OPRT_PLAN_COPY_H_
#define OPRT_PLAN_COPY_H_

#include "oprt_validate.h"

static inline oprt_status_t oprt_plan_copy(oprt_elementwise_plan_t *plan, const oprt_tensor_desc_t *out,
                                           const oprt_tensor_desc_t *x) {
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    OPRT_CHECK(oprt_check_tensor(x, "x"));
    if (!oprt_same_shape(out, x)) {
        char so[160], sx[160];
        oprt_format_shape(out, so, sizeof so);
        oprt_format_shape(x, sx, sizeof sx);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "shape mismatch: copy needs out %s to equal x %s", so, sx);
    }
    const oprt_tensor_desc_t *ins[1] = {x};
    const char *names[1] = {"x"};
    OPRT_CHECK(oprt_plan_elementwise(plan, out, ins, 1, names));
    plan->alias.inplace[0] = 1; /* each element is read before it is written */
    return OPRT_STATUS_SUCCESS;
}

#endif /* OPRT_PLAN_COPY_H_ */
