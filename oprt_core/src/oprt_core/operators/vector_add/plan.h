/*
 * operators/vector_add/plan.h: vector_add's validation: a and b broadcast to exactly out's shape, an elementwise plan in which
 * out may be exactly a or b.
 * Backends' plan functions call oprt_plan_vector_add; oprt_entry.h includes this header.
 */
#ifndef OPRT_PLAN_VECTOR_ADD_H_
#define OPRT_PLAN_VECTOR_ADD_H_

#include "oprt_validate.h"

static inline oprt_status_t oprt_plan_vector_add(oprt_elementwise_plan_t *plan, const oprt_tensor_desc_t *out,
                                                 const oprt_tensor_desc_t *a, const oprt_tensor_desc_t *b) {
    const oprt_tensor_desc_t *ins[2] = {a, b};
    const char *names[2] = {"a", "b"};
    OPRT_CHECK(oprt_check_tensor(a, "a"));
    OPRT_CHECK(oprt_check_tensor(b, "b"));
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    /* out must be exactly the broadcast shape of a and b, not something larger */
    int32_t nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    int ok = out->ndim == nd;
    for (int32_t i = 0; ok && i < nd; ++i) {
        int32_t ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
        int64_t ea = ia >= 0 ? a->shape[ia] : 1, eb = ib >= 0 ? b->shape[ib] : 1;
        int64_t e = ea == 1 ? eb : ea;
        if (ea != 1 && eb != 1 && ea != eb) ok = 0;
        else if (out->shape[i] != e) ok = 0;
    }
    if (!ok) {
        char so[160], sa[160], sb[160];
        oprt_format_shape(out, so, sizeof so);
        oprt_format_shape(a, sa, sizeof sa);
        oprt_format_shape(b, sb, sizeof sb);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE,
                              "shape mismatch: a %s and b %s do not broadcast to out %s", sa, sb, so);
    }
    OPRT_CHECK(oprt_plan_elementwise(plan, out, ins, 2, names));
    plan->alias.inplace[0] = plan->alias.inplace[1] = 1;
    return OPRT_STATUS_SUCCESS;
}

#endif /* OPRT_PLAN_VECTOR_ADD_H_ */
