/*
 * operators/cross_entropy/plan.h: cross_entropy's validation and plan (oprt_xent_plan_t).
 * Backends' plan functions call oprt_plan_cross_entropy; oprt_entry.h includes this header.
 */
#ifndef OPRT_PLAN_CROSS_ENTROPY_H_
#define OPRT_PLAN_CROSS_ENTROPY_H_

#include "oprt_validate.h"

/* cross_entropy: logits of shape (..., V) taken row by row, an i64 target per row (the leading shape), out per
 * row (reduction none) or one element (mean)                                  */

#define OPRT_REDUCTION_NONE 0
#define OPRT_REDUCTION_MEAN 1

typedef struct {
    int32_t dtype;                   /* logits' and out's */
    int32_t reduction;               /* OPRT_REDUCTION_NONE or OPRT_REDUCTION_MEAN */
    int64_t ignore_index;
    int64_t rows, v;                 /* logits seen as rows x v */
    int64_t numel;                   /* of logits */
    int32_t ndim;                    /* leading dims, extent-1 dims dropped and mergeable dims merged; rows is their
                                      * product (0 dims: one row) */
    int64_t shape[OPRT_MAX_NDIM];
    int64_t x_strides[OPRT_MAX_NDIM], t_strides[OPRT_MAX_NDIM], out_strides[OPRT_MAX_NDIM]; /* out's 0 for mean */
    int64_t x_inner;                 /* logits' stride along the classes (0 where v == 1) */
} oprt_xent_plan_t;

/* Validates logits (..., V) of a value dtype with V >= 1 (or no row), target of logits' leading shape and dtype
 * i64, out of logits' dtype and of target's shape (reduction none) or 0-d (mean), and plans the rows. */
static inline oprt_status_t oprt_plan_cross_entropy(oprt_xent_plan_t *plan, const oprt_tensor_desc_t *out,
                                                    const oprt_tensor_desc_t *logits,
                                                    const oprt_tensor_desc_t *target, int32_t ignore_index,
                                                    int32_t reduction) {
    OPRT_CHECK_NOT_NULL(plan);
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    OPRT_CHECK(oprt_check_tensor(logits, "logits"));
    OPRT_CHECK(oprt_check_same_dtype(out, logits, "logits"));
    OPRT_CHECK(oprt_check_index_tensor(target, "cross_entropy", "target", 0));
    if (logits->ndim < 1)
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "cross_entropy: logits must have at least 1 dim (classes along "
                              "its last axis), got a 0-d tensor");
    const int32_t lead = logits->ndim - 1;
    const int64_t v = logits->shape[lead];
    int same = target->ndim == lead;
    for (int32_t i = 0; same && i < lead; ++i) same = target->shape[i] == logits->shape[i];
    if (!same) {
        char st[160], sl[160];
        oprt_format_shape(target, st, sizeof st);
        oprt_format_shape(logits, sl, sizeof sl);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "cross_entropy: shape mismatch: target has shape %s, expected "
                              "logits' shape without its last dim, for logits of shape %s", st, sl);
    }
    int64_t rows = 1;
    for (int32_t i = 0; i < lead; ++i) rows *= logits->shape[i];
    if (v == 0 && rows > 0)
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "cross_entropy: logits have no class (a last dim of 0)");
    if (reduction != OPRT_REDUCTION_NONE && reduction != OPRT_REDUCTION_MEAN)
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "cross_entropy: reduction must be 0 (none) or 1 (mean), got %d",
                              (int)reduction);
    const int mean = reduction == OPRT_REDUCTION_MEAN;
    if (mean ? out->ndim != 0 : !oprt_same_shape(out, target)) {
        char so[160], st[160];
        oprt_format_shape(out, so, sizeof so);
        oprt_format_shape(target, st, sizeof st);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "cross_entropy: shape mismatch: out has shape %s, expected %s",
                              so, mean ? "() for reduction mean" : st);
    }
    OPRT_CHECK(oprt_check_output_strides(out, "out"));
    memset(plan, 0, sizeof *plan);
    plan->dtype = logits->dtype;
    plan->reduction = reduction;
    plan->ignore_index = ignore_index;
    plan->rows = rows;
    plan->v = v;
    plan->numel = oprt_numel(logits);
    plan->x_inner = v > 1 ? logits->strides[lead] : 0;
    const int64_t *const strides[3] = {logits->strides, target->strides, mean ? NULL : out->strides};
    int64_t *const merged[3] = {plan->x_strides, plan->t_strides, plan->out_strides};
    plan->ndim = oprt_merge_leading(lead, logits->shape, 3, strides, plan->shape, merged);
    return OPRT_STATUS_SUCCESS;
}

/* Element offsets of row r's first logit, its target and its loss (r in [0, rows)). */
static inline void oprt_xent_row_offsets(const oprt_xent_plan_t *p, int64_t r, int64_t *xo, int64_t *to,
                                         int64_t *oo) {
    int64_t a = 0, b = 0, c = 0;
    for (int32_t i = p->ndim - 1; i >= 0; --i) {
        const int64_t e = p->shape[i], q = r % e;
        a += q * p->x_strides[i];
        b += q * p->t_strides[i];
        c += q * p->out_strides[i];
        r /= e;
    }
    *xo = a;
    *to = b;
    *oo = c;
}

#endif /* OPRT_PLAN_CROSS_ENTROPY_H_ */
