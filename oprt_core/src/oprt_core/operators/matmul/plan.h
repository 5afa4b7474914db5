/*
 * operators/matmul/plan.h: matmul's validation and plan (oprt_matmul_plan_t).
 * Backends' plan functions call oprt_plan_matmul; oprt_entry.h includes this header.
 */
#ifndef OPRT_PLAN_MATMUL_H_
#define OPRT_PLAN_MATMUL_H_

#include "oprt_validate.h"

/* matmul: out = alpha * a @ b + beta * c, a (M, K) @ b (K, N) -> (M, N), or batched (B, M, K) @ (B, K, N) ->
 * (B, M, N), c optional and of out's shape; any strides (a transposed view is a column-major operand)          */

typedef struct {
    int32_t dtype;                   /* out's and c's; a's and b's too, but where in_dtype says e4m3 */
    int32_t allow_tf32;              /* 0 or 1: f32 inputs may be rounded to TF32 */
    int64_t batch, m, n, k;          /* batch 1 for 2-D operands */
    int64_t a_bs, a_rs, a_cs;        /* a[p, i, l] at p * a_bs + i * a_rs + l * a_cs (a_bs 0 for 2-D) */
    int64_t b_bs, b_rs, b_cs;        /* b[p, l, j] at p * b_bs + l * b_rs + j * b_cs */
    int64_t o_bs, o_rs, o_cs;        /* out[p, i, j] at p * o_bs + i * o_rs + j * o_cs */
    float alpha;
    float beta;                      /* 0 where has_c is 0 */
    int32_t has_c;                   /* 1: c is read (given and beta != 0); 0: out = alpha * a @ b, c unread */
    int64_t c_bs, c_rs, c_cs;        /* c[p, i, j] at p * c_bs + i * c_rs + j * c_cs (0 where has_c is 0) */
    int32_t in_dtype;                /* a's and b's: dtype, or OPRT_DTYPE_F8E4M3 (dtype then bf16) */
} oprt_matmul_plan_t;

static inline oprt_status_t oprt_matmul_shape_error_(const char *what, const oprt_tensor_desc_t *a,
                                                    const oprt_tensor_desc_t *b) {
    char sa[160], sb[160];
    oprt_format_shape(a, sa, sizeof sa);
    oprt_format_shape(b, sb, sizeof sb);
    return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "matmul: %s; got a of shape %s and b of shape %s", what, sa, sb);
}

/* Validates a, b and out (one value dtype, or a and b e4m3 with out bf16; ranks 2 or 3, alike; a's K = b's K;
 * batched, one batch extent; out of shape (..., M, N)), c (NULL, or of out's dtype and exactly its shape, any strides), alpha and beta (finite; beta
 * != 0 needs c) and allow_tf32 (0 or 1), and plans the product as strided (B, rows, cols) views. c given with beta
 * == 0 is validated and not read (has_c 0), as BLAS defines it. Aliasing is the launch's (oprt_check_launch): out
 * may be exactly c, nothing else. */
static inline oprt_status_t oprt_plan_matmul(oprt_matmul_plan_t *plan, const oprt_tensor_desc_t *out,
                                             const oprt_tensor_desc_t *a, const oprt_tensor_desc_t *b,
                                             const oprt_tensor_desc_t *c, float alpha, float beta,
                                             int32_t allow_tf32) {
    OPRT_CHECK_NOT_NULL(plan);
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    OPRT_CHECK(oprt_check_tensor_or_e4m3(a, "a"));
    OPRT_CHECK(oprt_check_tensor_or_e4m3(b, "b"));
    if (c != NULL) OPRT_CHECK(oprt_check_tensor(c, "c"));
    if (a->dtype == OPRT_DTYPE_F8E4M3 || b->dtype == OPRT_DTYPE_F8E4M3) {
        /* the one mix: e4m3 a and b, bf16 out (and c, checked below against out) */
        if (a->dtype != b->dtype || out->dtype != OPRT_DTYPE_BF16)
            return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE,
                                  "matmul: dtype mismatch: a is %s, b is %s and out is %s; the only mixed dtypes "
                                  "matmul takes are e4m3 a and b with bf16 out and c", oprt_dtype_name(a->dtype),
                                  oprt_dtype_name(b->dtype), oprt_dtype_name(out->dtype));
    } else {
        OPRT_CHECK(oprt_check_same_dtype(out, a, "a"));
        OPRT_CHECK(oprt_check_same_dtype(out, b, "b"));
    }
    if (c != NULL) OPRT_CHECK(oprt_check_same_dtype(out, c, "c"));
    if ((a->ndim != 2 && a->ndim != 3) || (b->ndim != 2 && b->ndim != 3))
        return oprt_matmul_shape_error_("a and b must be 2-D (M, K) and (K, N), or 3-D (B, M, K) and (B, K, N)", a,
                                        b);
    if (a->ndim != b->ndim)
        return oprt_matmul_shape_error_("a and b must have the same rank (both 2-D or both 3-D, batched)", a, b);
    const int32_t nd = a->ndim;
    if (a->shape[nd - 1] != b->shape[nd - 2])
        return oprt_matmul_shape_error_("inner dims mismatch: a's last extent (K) must equal b's second-to-last",
                                        a, b);
    if (nd == 3 && a->shape[0] != b->shape[0])
        return oprt_matmul_shape_error_("batch mismatch: batched inputs must have the same batch extent", a, b);
    const int64_t m = a->shape[nd - 2], n = b->shape[nd - 1];
    if (out->ndim != nd || out->shape[nd - 2] != m || out->shape[nd - 1] != n ||
        (nd == 3 && out->shape[0] != a->shape[0])) {
        char so[160], sa[160], sb[160];
        oprt_format_shape(out, so, sizeof so);
        oprt_format_shape(a, sa, sizeof sa);
        oprt_format_shape(b, sb, sizeof sb);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "matmul: shape mismatch: out has shape %s, expected %s(%lld, "
                              "%lld) for a of shape %s and b of shape %s", so, nd == 3 ? "a batch of " : "",
                              (long long)m, (long long)n, sa, sb);
    }
    if (c != NULL && !oprt_same_shape(c, out)) {
        char sc[160], so[160];
        oprt_format_shape(c, sc, sizeof sc);
        oprt_format_shape(out, so, sizeof so);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "matmul: c has shape %s, expected out's shape %s (c is not "
                              "broadcast)", sc, so);
    }
    if (!isfinite(alpha))
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "matmul: alpha must be finite, got %g", (double)alpha);
    if (!isfinite(beta))
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "matmul: beta must be finite, got %g", (double)beta);
    if (beta != 0.0f && c == NULL)
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "matmul: beta is %g but c is NULL: alpha * a @ b + beta * c "
                              "needs c, of out's shape (pass c, or beta 0)", (double)beta);
    if (allow_tf32 != 0 && allow_tf32 != 1)
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "matmul: allow_tf32 must be 0 or 1, got %d", (int)allow_tf32);
    OPRT_CHECK(oprt_check_output_strides(out, "out"));
    memset(plan, 0, sizeof *plan);
    plan->dtype = out->dtype;
    plan->in_dtype = a->dtype;
    plan->allow_tf32 = allow_tf32;
    plan->batch = nd == 3 ? a->shape[0] : 1;
    plan->m = m;
    plan->n = n;
    plan->k = a->shape[nd - 1];
    const int32_t o = nd - 2; /* the first of the two matrix dims */
    plan->a_bs = nd == 3 ? a->strides[0] : 0;
    plan->b_bs = nd == 3 ? b->strides[0] : 0;
    plan->o_bs = nd == 3 ? out->strides[0] : 0;
    plan->a_rs = a->strides[o];
    plan->a_cs = a->strides[o + 1];
    plan->b_rs = b->strides[o];
    plan->b_cs = b->strides[o + 1];
    plan->o_rs = out->strides[o];
    plan->o_cs = out->strides[o + 1];
    plan->alpha = alpha;
    if (c != NULL && beta != 0.0f) {
        plan->has_c = 1;
        plan->beta = beta;
        plan->c_bs = nd == 3 ? c->strides[0] : 0;
        plan->c_rs = c->strides[o];
        plan->c_cs = c->strides[o + 1];
    }
    return OPRT_STATUS_SUCCESS;
}

#endif /* OPRT_PLAN_MATMUL_H_ */
