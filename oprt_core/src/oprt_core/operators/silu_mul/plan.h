/*
 * operators/silu_mul/plan.h: silu_mul's validation: gate, up and out of one shape, an elementwise plan.
 * Backends' plan functions call oprt_plan_silu_mul; oprt_entry.h includes this header.
 */
#ifndef OPRT_PLAN_SILU_MUL_H_
#define OPRT_PLAN_SILU_MUL_H_

#include "oprt_validate.h"

/* silu_mul: gate, up and out of one shape and dtype; any strides (an elementwise plan, no broadcasting). */
static inline oprt_status_t oprt_plan_silu_mul(oprt_elementwise_plan_t *plan, const oprt_tensor_desc_t *out,
                                               const oprt_tensor_desc_t *gate, const oprt_tensor_desc_t *up) {
    static const char *const names[2] = {"gate", "up"};
    const oprt_tensor_desc_t *ins[2] = {gate, up};
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    for (int32_t k = 0; k < 2; ++k) {
        OPRT_CHECK(oprt_check_tensor(ins[k], names[k]));
        if (!oprt_same_shape(out, ins[k])) {
            char so[160], si[160];
            oprt_format_shape(out, so, sizeof so);
            oprt_format_shape(ins[k], si, sizeof si);
            return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "shape mismatch: silu_mul needs %s %s to equal out %s "
                                  "(gate, up and out of one shape)", names[k], si, so);
        }
    }
    return oprt_plan_elementwise(plan, out, ins, 2, names);
}

#endif /* OPRT_PLAN_SILU_MUL_H_ */
