/*
 * operators/add_rms_norm/plan.h: add_rms_norm's validation and plan (oprt_add_rows_plan_t: a rows plan and residual's and h's
 * strides).
 * Backends' plan functions call oprt_plan_add_rms_norm; oprt_entry.h includes this header.
 */
#ifndef OPRT_PLAN_ADD_RMS_NORM_H_
#define OPRT_PLAN_ADD_RMS_NORM_H_

#include "oprt_validate.h"

/* add_rms_norm: h = x + residual and out = rms_norm(h) * weight. A rows plan of x and out (the leading dims merged
 * only where residual's and h's merge too), with residual's and h's strides on the same leading dims. */
typedef struct {
    oprt_rows_plan_t rows;
    int64_t res_strides[OPRT_MAX_NDIM], h_strides[OPRT_MAX_NDIM];
    int64_t res_inner, h_inner;
} oprt_add_rows_plan_t;

static inline oprt_status_t oprt_plan_add_rms_norm(oprt_add_rows_plan_t *plan, const oprt_tensor_desc_t *out,
                                                   const oprt_tensor_desc_t *h, const oprt_tensor_desc_t *x,
                                                   const oprt_tensor_desc_t *residual,
                                                   const oprt_tensor_desc_t *weight, float eps) {
    static const char *const names[2] = {"x", "weight"};
    static const char *const same_names[2] = {"residual", "h"};
    const oprt_tensor_desc_t *vecs[1] = {weight};
    const oprt_tensor_desc_t *same[2] = {residual, h};
    OPRT_CHECK_NOT_NULL(plan);
    OPRT_CHECK(oprt_plan_rows(&plan->rows, "add_rms_norm", out, x, vecs, 1, names, eps));
    for (int32_t k = 0; k < 2; ++k) {
        OPRT_CHECK(oprt_check_tensor(same[k], same_names[k]));
        OPRT_CHECK(oprt_check_same_dtype(out, same[k], same_names[k]));
        if (!oprt_same_shape(same[k], x)) {
            char s1[160], sx[160];
            oprt_format_shape(same[k], s1, sizeof s1);
            oprt_format_shape(x, sx, sizeof sx);
            return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "add_rms_norm: shape mismatch: %s has shape %s, expected "
                                  "x's shape %s", same_names[k], s1, sx);
        }
    }
    OPRT_CHECK(oprt_check_output_strides(h, "h"));
    const int64_t n = plan->rows.n;
    plan->res_inner = n > 1 ? residual->strides[x->ndim - 1] : 0;
    plan->h_inner = n > 1 ? h->strides[x->ndim - 1] : 0;
    /* the leading dims again, merged only where all four tensors merge */
    oprt_rows_plan_t *r = &plan->rows;
    const int64_t *const strides[4] = {x->strides, out->strides, residual->strides, h->strides};
    int64_t *const merged[4] = {r->x_strides, r->out_strides, plan->res_strides, plan->h_strides};
    r->ndim = oprt_merge_leading(x->ndim - 1, x->shape, 4, strides, r->shape, merged);
    return OPRT_STATUS_SUCCESS;
}

/* Element offsets of row r's first element in residual and h (r in [0, rows)). */
static inline void oprt_add_row_offsets(const oprt_add_rows_plan_t *p, int64_t r, int64_t *ro, int64_t *ho) {
    int64_t a = 0, b = 0;
    for (int32_t i = p->rows.ndim - 1; i >= 0; --i) {
        const int64_t e = p->rows.shape[i], q = r % e;
        a += q * p->res_strides[i];
        b += q * p->h_strides[i];
        r /= e;
    }
    *ro = a;
    *ho = b;
}

#endif /* OPRT_PLAN_ADD_RMS_NORM_H_ */
