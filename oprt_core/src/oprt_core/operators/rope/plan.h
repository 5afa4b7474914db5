/*
 * operators/rope/plan.h: rope's validation and plan (oprt_rope_plan_t).
 * Backends' plan functions call oprt_plan_rope; oprt_entry.h includes this header.
 */
#ifndef OPRT_PLAN_ROPE_H_
#define OPRT_PLAN_ROPE_H_

#include "oprt_validate.h"

/* rope: q (T, Hq, D) and k (T, Hk, D) rotated into q_out and k_out (q_out may be exactly q, k_out k), cos and sin
 * (P, D/2), positions (T,) of i32 or i64; any strides                          */

#define OPRT_ROPE_NEOX 0
#define OPRT_ROPE_GPTJ 1
#define OPRT_ROPE_MAX_HEAD_DIM 256

typedef struct {
    int32_t dtype;                   /* q's, k's, cos', sin's and the outputs' */
    int32_t pos_dtype;               /* OPRT_DTYPE_I32 or OPRT_DTYPE_I64 */
    int32_t style;                   /* OPRT_ROPE_NEOX or OPRT_ROPE_GPTJ */
    int64_t t, hq, hk, d, p;         /* tokens, q heads, k heads, head_dim, cached positions */
    int64_t q_strides[3], k_strides[3], qo_strides[3], ko_strides[3]; /* token, head, element */
    int64_t cos_strides[2], sin_strides[2];                           /* position, pair */
    int64_t pos_stride;
} oprt_rope_plan_t;

static inline oprt_status_t oprt_rope_shape_error_(const char *name, const oprt_tensor_desc_t *t,
                                                   const char *expected) {
    char st[160];
    oprt_format_shape(t, st, sizeof st);
    return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "rope: shape mismatch: %s has shape %s, expected %s", name, st,
                          expected);
}

static inline oprt_status_t oprt_plan_rope(oprt_rope_plan_t *plan, const oprt_tensor_desc_t *q_out,
                                           const oprt_tensor_desc_t *k_out, const oprt_tensor_desc_t *q,
                                           const oprt_tensor_desc_t *k, const oprt_tensor_desc_t *cos,
                                           const oprt_tensor_desc_t *sin, const oprt_tensor_desc_t *positions,
                                           int32_t style) {
    static const char *const names[6] = {"q_out", "k_out", "q", "k", "cos", "sin"};
    const oprt_tensor_desc_t *vals[6] = {q_out, k_out, q, k, cos, sin};
    OPRT_CHECK_NOT_NULL(plan);
    for (int32_t i = 0; i < 6; ++i) {
        OPRT_CHECK(oprt_check_tensor(vals[i], names[i]));
        if (i > 0) OPRT_CHECK(oprt_check_same_dtype(q_out, vals[i], names[i]));
    }
    OPRT_CHECK(oprt_check_index_tensor(positions, "rope", "positions", 1));
    if (q->ndim != 3) {
        char sq[160];
        oprt_format_shape(q, sq, sizeof sq);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "rope: q must have 3 dims (tokens, heads, head_dim), got "
                              "shape %s", sq);
    }
    const int64_t t = q->shape[0], d = q->shape[2];
    char want[200];
    snprintf(want, sizeof want, "(%lld, kv_heads, %lld): q's tokens and head_dim", (long long)t, (long long)d);
    if (k->ndim != 3 || k->shape[0] != t || k->shape[2] != d) return oprt_rope_shape_error_("k", k, want);
    if (d % 2 != 0 || d < 2 || d > OPRT_ROPE_MAX_HEAD_DIM)
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "rope: head_dim must be even and in [2, %d], got %lld",
                              OPRT_ROPE_MAX_HEAD_DIM, (long long)d);
    snprintf(want, sizeof want, "(positions, %lld): head_dim / 2 wide", (long long)(d / 2));
    if (cos->ndim != 2 || cos->shape[1] != d / 2) return oprt_rope_shape_error_("cos", cos, want);
    if (!oprt_same_shape(sin, cos)) return oprt_rope_shape_error_("sin", sin, "cos' shape");
    if (cos->shape[0] == 0 && t > 0)
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "rope: cos and sin have no position for %lld tokens",
                              (long long)t);
    snprintf(want, sizeof want, "(%lld,): one position per token", (long long)t);
    if (positions->ndim != 1 || positions->shape[0] != t)
        return oprt_rope_shape_error_("positions", positions, want);
    if (!oprt_same_shape(q_out, q)) return oprt_rope_shape_error_("q_out", q_out, "q's shape");
    if (!oprt_same_shape(k_out, k)) return oprt_rope_shape_error_("k_out", k_out, "k's shape");
    if (style != OPRT_ROPE_NEOX && style != OPRT_ROPE_GPTJ)
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "rope: style must be 0 (neox) or 1 (gptj), got %d", (int)style);
    OPRT_CHECK(oprt_check_output_strides(q_out, "q_out"));
    OPRT_CHECK(oprt_check_output_strides(k_out, "k_out"));
    memset(plan, 0, sizeof *plan);
    plan->dtype = q->dtype;
    plan->pos_dtype = positions->dtype;
    plan->style = style;
    plan->t = t;
    plan->hq = q->shape[1];
    plan->hk = k->shape[1];
    plan->d = d;
    plan->p = cos->shape[0];
    for (int32_t i = 0; i < 3; ++i) {
        plan->q_strides[i] = q->strides[i];
        plan->k_strides[i] = k->strides[i];
        plan->qo_strides[i] = q_out->strides[i];
        plan->ko_strides[i] = k_out->strides[i];
    }
    for (int32_t i = 0; i < 2; ++i) {
        plan->cos_strides[i] = cos->strides[i];
        plan->sin_strides[i] = sin->strides[i];
    }
    plan->pos_stride = positions->strides[0];
    return OPRT_STATUS_SUCCESS;
}

/* Element offsets of pair i's two elements within a head (stride `s` along head_dim). */
static inline void oprt_rope_pair(const oprt_rope_plan_t *p, int64_t i, int64_t s, int64_t *o1, int64_t *o2) {
    if (p->style == OPRT_ROPE_NEOX) {
        *o1 = i * s;
        *o2 = (i + p->d / 2) * s;
    } else {
        *o1 = 2 * i * s;
        *o2 = (2 * i + 1) * s;
    }
}

#endif /* OPRT_PLAN_ROPE_H_ */
