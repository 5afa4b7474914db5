/*
 * oprt_validate.h: argument validation and launch plans shared by every
 * compiled backend. Header-only (C99 and C++), in the style of stb: every
 * translation unit may include it; exactly one translation unit per library
 * defines OPRT_IMPLEMENTATION before including it, which emits
 * oprt_status_string(), oprt_last_error_message(), oprt_library_abi_version()
 * and the thread-local error buffer behind oprt_set_error().
 *
 * A backend's oprt_create_<op>_descriptor() calls oprt_plan_<op>() and keeps
 * the plan; the plan is all a kernel launcher needs besides data pointers. Each
 * op's oprt_plan_<op> lies in its folder (operators/<op>/plan.h, which
 * oprt_entry.h includes); this header holds the checks and the plans several
 * ops share:
 *  - elementwise plans (copy, vector_add, relu, silu_mul): inputs broadcast to
 *    the output shape (stride 0 on broadcast dims), size-1 dims dropped,
 *    mergeable dims merged, and a flag for the all-contiguous fast path;
 *  - axis plans (reduce_sum, softmax): the tensor seen as [outer, reduce, inner]
 *    when contiguous, and per-dim strides of x and out otherwise;
 *  - rows plans (rms_norm, layer_norm, add_rms_norm): x as rows along its last
 *    axis, with per-element vectors.
 * Every plan also holds the byte spans of out and the inputs (oprt_alias_t): a
 * descriptor has no data pointers, so the launch decides overlap with
 * oprt_check_alias() on the pointers it is given.
 */
#ifndef OPRT_VALIDATE_H_
#define OPRT_VALIDATE_H_

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "oprt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Records a formatted message as oprt_last_error_message() and returns status. */
oprt_status_t oprt_set_error(oprt_status_t status, const char *fmt, ...);
/* Clears the message (called by successful entry points that want to). */
void oprt_clear_error(void);
/* OPRT_ABI_VERSION of the oprt.h the library was compiled against: CompiledBackend compares it with oprt-core's
 * before it drives an op package's own library (oprt_core.compiled.c_library). */
int32_t oprt_library_abi_version(void);

#define OPRT_CHECK(expr)                                   \
    do {                                                   \
        oprt_status_t oprt_check_status_ = (expr);         \
        if (oprt_check_status_ != OPRT_STATUS_SUCCESS)     \
            return oprt_check_status_;                     \
    } while (0)

#define OPRT_CHECK_NOT_NULL(ptr)                                                   \
    do {                                                                           \
        if ((ptr) == NULL)                                                         \
            return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: argument '%s' is NULL", \
                                  __func__, #ptr);                                 \
    } while (0)

static inline size_t oprt_dtype_size(int32_t dtype) {
    switch (dtype) {
    case OPRT_DTYPE_F32: return 4;
    case OPRT_DTYPE_F16: return 2;
    case OPRT_DTYPE_BF16: return 2;
    case OPRT_DTYPE_I32: return 4;
    case OPRT_DTYPE_I64: return 8;
    case OPRT_DTYPE_F8E4M3: return 1;
    default: return 0;
    }
}

static inline const char *oprt_dtype_name(int32_t dtype) {
    switch (dtype) {
    case OPRT_DTYPE_F32: return "f32";
    case OPRT_DTYPE_F16: return "f16";
    case OPRT_DTYPE_BF16: return "bf16";
    case OPRT_DTYPE_I32: return "i32";
    case OPRT_DTYPE_I64: return "i64";
    case OPRT_DTYPE_F8E4M3: return "e4m3";
    default: return "unknown";
    }
}

static inline int64_t oprt_numel(const oprt_tensor_desc_t *t) {
    int64_t n = 1;
    for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
    return n;
}

/* Checks dtype, ndim and shape of one tensor descriptor; `name` is used in messages. */
/* |s| without overflow: INT64_MIN (whose negation is UB) saturates to INT64_MAX. oprt_check_tensor
 * refuses INT64_MIN strides outright, so past validation this is plain |s|. */
static inline int64_t oprt_abs_stride(int64_t s) {
    return s >= 0 ? s : (s == INT64_MIN ? INT64_MAX : -s);
}

static inline int oprt_is_value_dtype(int32_t dtype) {
    return dtype == OPRT_DTYPE_F32 || dtype == OPRT_DTYPE_F16 || dtype == OPRT_DTYPE_BF16;
}

static inline oprt_status_t oprt_check_layout_(const oprt_tensor_desc_t *t, const char *name);

/* A value tensor (out and the value inputs of every op): f32, f16 or bf16. */
static inline oprt_status_t oprt_check_tensor(const oprt_tensor_desc_t *t, const char *name) {
    if (t == NULL)
        return oprt_set_error(OPRT_STATUS_NULL_POINTER, "tensor descriptor '%s' is NULL", name);
    if (oprt_dtype_size(t->dtype) == 0)
        return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE,
                              "tensor '%s' has unknown dtype code %d (valid: 0=f32, 1=f16, 2=bf16)",
                              name, (int)t->dtype);
    if (t->dtype == OPRT_DTYPE_F8E4M3)
        return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE,
                              "tensor '%s' has dtype e4m3 where f32, f16 or bf16 is needed (e4m3 is matmul's a and b "
                              "only, with a bf16 out)", name);
    if (!oprt_is_value_dtype(t->dtype))
        return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE,
                              "tensor '%s' has dtype %s (an index dtype) where f32, f16 or bf16 is needed", name,
                              oprt_dtype_name(t->dtype));
    return oprt_check_layout_(t, name);
}

/* A tensor of a value dtype or e4m3 (matmul's a and b). */
static inline oprt_status_t oprt_check_tensor_or_e4m3(const oprt_tensor_desc_t *t, const char *name) {
    if (t != NULL && t->dtype == OPRT_DTYPE_F8E4M3) return oprt_check_layout_(t, name);
    return oprt_check_tensor(t, name);
}

/* An index tensor (cross_entropy's target): dtype i64 where `allow_i32` is 0, i32 or i64 where it is 1. */
static inline oprt_status_t oprt_check_index_tensor(const oprt_tensor_desc_t *t, const char *op, const char *name,
                                                    int allow_i32) {
    if (t == NULL)
        return oprt_set_error(OPRT_STATUS_NULL_POINTER, "tensor descriptor '%s' is NULL", name);
    if (t->dtype != OPRT_DTYPE_I64 && !(allow_i32 && t->dtype == OPRT_DTYPE_I32))
        return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE, "%s: %s must be an index tensor of %s, got %s (code %d)",
                              op, name, allow_i32 ? "i32 or i64" : "i64", oprt_dtype_name(t->dtype), (int)t->dtype);
    return oprt_check_layout_(t, name);
}

/* ndim, shape and strides of a tensor whose dtype is checked. */
static inline oprt_status_t oprt_check_layout_(const oprt_tensor_desc_t *t, const char *name) {
    if (t->ndim < 0 || t->ndim > OPRT_MAX_NDIM)
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "tensor '%s' has ndim %d (valid: 0..%d)", name,
                              (int)t->ndim, OPRT_MAX_NDIM);
    /* on every dim, whatever its extent: backends negate strides (oprt_layout.h's canonicalize) */
    for (int32_t i = 0; i < t->ndim; ++i)
        if (t->strides[i] == INT64_MIN)
            return oprt_set_error(OPRT_STATUS_BAD_STRIDES, "tensor '%s' has stride %lld in dim %d that overflows",
                                  name, (long long)t->strides[i], (int)i);
    int64_t numel = 1;
    for (int32_t i = 0; i < t->ndim; ++i) {
        if (t->shape[i] < 0)
            return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "tensor '%s' has negative extent %lld in dim %d",
                                  name, (long long)t->shape[i], (int)i);
        if (t->shape[i] > 0 && numel > (INT64_MAX / 16) / t->shape[i])
            return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "tensor '%s' has too many elements", name);
        numel *= t->shape[i];
    }
    if (numel > 1) {
        for (int32_t i = 0; i < t->ndim; ++i) {
            int64_t s = oprt_abs_stride(t->strides[i]);
            if (t->shape[i] > 1 && s > (INT64_MAX / 16) / t->shape[i])
                return oprt_set_error(OPRT_STATUS_BAD_STRIDES, "tensor '%s' has stride %lld in dim %d that overflows",
                                      name, (long long)t->strides[i], (int)i);
        }
    }
    return OPRT_STATUS_SUCCESS;
}

/* An output may not have two index tuples mapping to the same element (no zero
 * or overlapping strides on dims of extent > 1). */
static inline oprt_status_t oprt_check_output_strides(const oprt_tensor_desc_t *t, const char *name) {
    if (oprt_numel(t) <= 1) return OPRT_STATUS_SUCCESS;
    int32_t order[OPRT_MAX_NDIM];
    int32_t n = 0;
    for (int32_t i = 0; i < t->ndim; ++i)
        if (t->shape[i] > 1) order[n++] = i;
    /* insertion sort of the non-trivial dims by |stride| */
    for (int32_t i = 1; i < n; ++i) {
        int32_t d = order[i];
        int64_t sd = oprt_abs_stride(t->strides[d]);
        int32_t j = i - 1;
        while (j >= 0) {
            int64_t sj = oprt_abs_stride(t->strides[order[j]]);
            if (sj <= sd) break;
            order[j + 1] = order[j];
            --j;
        }
        order[j + 1] = d;
    }
    int64_t span = 1; /* elements covered by the smaller dims */
    for (int32_t i = 0; i < n; ++i) {
        int32_t d = order[i];
        int64_t s = oprt_abs_stride(t->strides[d]);
        if (s < span)
            return oprt_set_error(OPRT_STATUS_BAD_STRIDES,
                                  "output '%s' has overlapping strides (dim %d has stride %lld): "
                                  "an output element would be written twice",
                                  name, (int)d, (long long)t->strides[d]);
        span = s * t->shape[d];
    }
    return OPRT_STATUS_SUCCESS;
}

static inline int oprt_same_shape(const oprt_tensor_desc_t *a, const oprt_tensor_desc_t *b) {
    if (a->ndim != b->ndim) return 0;
    for (int32_t i = 0; i < a->ndim; ++i)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

static inline int oprt_is_contiguous(const oprt_tensor_desc_t *t) {
    int64_t expected = 1;
    for (int32_t i = t->ndim - 1; i >= 0; --i) {
        if (t->shape[i] != 1 && t->strides[i] != expected) return 0;
        expected *= t->shape[i];
    }
    return 1;
}

static inline void oprt_format_shape(const oprt_tensor_desc_t *t, char *buf, size_t n) {
    size_t used = 0;
    used += (size_t)snprintf(buf + used, n - used, "(");
    for (int32_t i = 0; i < t->ndim && used < n; ++i)
        used += (size_t)snprintf(buf + used, n - used, i ? ", %lld" : "%lld", (long long)t->shape[i]);
    if (used < n) snprintf(buf + used, n - used, t->ndim == 1 ? ",)" : ")");
}

static inline oprt_status_t oprt_check_same_dtype(const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *in,
                                                  const char *in_name) {
    if (out->dtype != in->dtype)
        return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE,
                              "dtype mismatch: out is %s but %s is %s (mixed dtypes are not supported)",
                              oprt_dtype_name(out->dtype), in_name, oprt_dtype_name(in->dtype));
    return OPRT_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Aliasing of out and the inputs                                             */

#define OPRT_MAX_INPUTS 5 /* the most inputs an op of oprt.h takes (rope: q, k, cos, sin, positions) */

/* What a launch needs to decide whether out may share memory with an input. An op allows out to be exactly
 * input k (inplace[k]: it runs in place on it) or nothing; a plan leaves every inplace[k] 0 (no aliasing) and
 * the core ops that run in place set theirs. */
/* A tensor as rows along its outermost dim (the largest stride of extent > 1, positive): `step` bytes apart, the
 * other dims' bytes [lo, hi) from a row's start fitting in one step; step 0 where it is not so laid out. */
typedef struct {
    int64_t step, lo, hi;
} oprt_rows_span_t;

typedef struct {
    int32_t ninputs;
    int32_t inplace[OPRT_MAX_INPUTS];     /* out may be exactly input k */
    int32_t same_layout[OPRT_MAX_INPUTS]; /* input k has out's shape and strides (those of extent-1 dims aside) */
    int64_t out_lo, out_hi;               /* out's bytes are [out + out_lo, out + out_hi); empty when equal */
    int64_t in_lo[OPRT_MAX_INPUTS], in_hi[OPRT_MAX_INPUTS];
    oprt_rows_span_t out_rows, in_rows[OPRT_MAX_INPUTS];
} oprt_alias_t;

/* The bytes a validated tensor covers, from its pointer: [lo, hi) (lo <= 0 < hi), or [0, 0) when it is empty.
 * Saturated at +-2^61 bytes (no real tensor is that large), so oprt_spans_intersect cannot overflow. */
static inline void oprt_byte_span(const oprt_tensor_desc_t *t, int64_t *lo, int64_t *hi) {
    const int64_t cap = (int64_t)1 << 61, size = (int64_t)oprt_dtype_size(t->dtype);
    int64_t l = 0, h = 0;
    *lo = *hi = 0;
    if (oprt_numel(t) == 0) return;
    for (int32_t i = 0; i < t->ndim; ++i) {
        if (t->shape[i] <= 1) continue;
        const int64_t reach = (t->shape[i] - 1) * t->strides[i]; /* bounded by oprt_check_tensor */
        if (reach < 0) l = l + reach < -cap ? -cap : l + reach;
        else h = h + reach > cap ? cap : h + reach;
    }
    *lo = l <= -cap / size ? -cap : l * size;
    *hi = h >= cap / size ? cap : (h + 1) * size;
}

/* Whether [a + alo, a + ahi) and [b + blo, b + bhi) share a byte; spans from oprt_byte_span. */
static inline int oprt_spans_intersect(uintptr_t a, int64_t alo, int64_t ahi, uintptr_t b, int64_t blo,
                                       int64_t bhi) {
    if (alo == ahi || blo == bhi) return 0;
    /* with a <= b: b's span starts before a's ends iff b - a < ahi - blo (it cannot end before a's starts,
     * since alo <= 0 < bhi); symmetric otherwise */
    return a <= b ? (uint64_t)(b - a) < (uint64_t)(ahi - blo) : (uint64_t)(a - b) < (uint64_t)(bhi - alo);
}

static inline void oprt_rows_span(const oprt_tensor_desc_t *t, oprt_rows_span_t *r) {
    const int64_t size = (int64_t)oprt_dtype_size(t->dtype);
    int32_t outer = -1;
    r->step = r->lo = r->hi = 0;
    if (oprt_numel(t) == 0) return;
    for (int32_t i = 0; i < t->ndim; ++i) {
        if (t->shape[i] <= 1) continue;
        const int64_t s = t->strides[i] < 0 ? -t->strides[i] : t->strides[i];
        const int64_t o = outer < 0 ? -1 : (t->strides[outer] < 0 ? -t->strides[outer] : t->strides[outer]);
        if (s > o) outer = i;
    }
    if (outer < 0 || t->strides[outer] <= 0 || t->strides[outer] > ((int64_t)1 << 56) / size) return;
    int64_t l = 0, h = 0; /* bounded by oprt_check_tensor */
    for (int32_t i = 0; i < t->ndim; ++i) {
        if (i == outer || t->shape[i] <= 1) continue;
        const int64_t reach = (t->shape[i] - 1) * t->strides[i];
        if (reach < 0) l += reach;
        else h += reach;
    }
    if ((h + 1 - l) > t->strides[outer]) return;
    r->step = t->strides[outer] * size;
    r->lo = l * size;
    r->hi = (h + 1) * size;
}

/* Whether tensors at a and b laid out as rows of one step (oprt_rows_span) share no byte: each byte of b's rows lies
 * (b - a) mod step from the start of a row of a. 0 where it cannot tell. */
static inline int oprt_rows_disjoint(uintptr_t a, const oprt_rows_span_t *ra, uintptr_t b, const oprt_rows_span_t *rb) {
    if (ra->step == 0 || ra->step != rb->step) return 0;
    const int64_t s = ra->step;
    int64_t r = (int64_t)((uint64_t)(b - a) % (uint64_t)s);
    if (b < a) r = (s - (int64_t)((uint64_t)(a - b) % (uint64_t)s)) % s;
    for (int64_t j = -2; j <= 2; ++j)
        if (rb->lo + r + j * s < ra->hi && ra->lo < rb->hi + r + j * s) return 0;
    return 1;
}

static inline int oprt_same_layout(const oprt_tensor_desc_t *a, const oprt_tensor_desc_t *b) {
    if (a->dtype != b->dtype || !oprt_same_shape(a, b)) return 0;
    for (int32_t i = 0; i < a->ndim; ++i)
        if (a->shape[i] > 1 && a->strides[i] != b->strides[i]) return 0;
    return 1;
}

/* Fills an alias record for validated tensors; inplace left 0 (the op's plan sets what it allows). A NULL input
 * (an optional input left out, matmul's c) covers no byte: it overlaps nothing. */
static inline void oprt_plan_alias(oprt_alias_t *alias, const oprt_tensor_desc_t *out,
                                   const oprt_tensor_desc_t *const *inputs, int32_t ninputs) {
    memset(alias, 0, sizeof *alias);
    alias->ninputs = ninputs;
    oprt_byte_span(out, &alias->out_lo, &alias->out_hi);
    oprt_rows_span(out, &alias->out_rows);
    for (int32_t k = 0; k < ninputs; ++k) {
        if (inputs[k] == NULL) continue; /* spans [0, 0): empty */
        oprt_byte_span(inputs[k], &alias->in_lo[k], &alias->in_hi[k]);
        oprt_rows_span(inputs[k], &alias->in_rows[k]);
        alias->same_layout[k] = oprt_same_layout(out, inputs[k]);
    }
}

/* oprt_check_alias of an output named `out_name` (an op with several outputs names each; one output is "out"). */
static inline oprt_status_t oprt_check_alias_named(const oprt_alias_t *alias, const char *op, const char *out_name,
                                                   const void *out, const void *const *inputs,
                                                   const char *const *names) {
    for (int32_t k = 0; k < alias->ninputs; ++k) {
        if (!oprt_spans_intersect((uintptr_t)out, alias->out_lo, alias->out_hi, (uintptr_t)inputs[k],
                                  alias->in_lo[k], alias->in_hi[k]))
            continue;
        if (oprt_rows_disjoint((uintptr_t)out, &alias->out_rows, (uintptr_t)inputs[k], &alias->in_rows[k]))
            continue; /* rows that interleave without a shared byte (q and k of one fused qkv buffer) */
        const int exact = out == inputs[k] && alias->same_layout[k];
        if (exact && alias->inplace[k]) continue;
        if (exact && strcmp(out_name, "out") == 0)
            return oprt_set_error(OPRT_STATUS_OVERLAP,
                                  "%s: out is input %s itself, and %s cannot run in place; use a separate output",
                                  op, names[k], op);
        if (exact)
            return oprt_set_error(OPRT_STATUS_OVERLAP,
                                  "%s: %s is input %s itself, and %s cannot write %s over %s; use a separate output",
                                  op, out_name, names[k], op, out_name, names[k]);
        return oprt_set_error(OPRT_STATUS_OVERLAP, "%s: %s overlaps input %s (%s); use a separate output%s%s%s%s%s",
                              op, out_name, names[k],
                              out == inputs[k] ? "the same memory in another layout"
                                               : "partial overlap of the same memory",
                              alias->inplace[k] ? ", or " : "", alias->inplace[k] ? names[k] : "",
                              alias->inplace[k] ? " itself as " : "", alias->inplace[k] ? out_name : "",
                              alias->inplace[k] ? " (in place)" : "");
    }
    return OPRT_STATUS_SUCCESS;
}

/* At launch: refuses (OPRT_STATUS_OVERLAP) an out that shares a byte with an input, unless it is exactly that
 * input (same pointer and layout) and the op runs in place on it. Pointers only: device memory is not read. */
static inline oprt_status_t oprt_check_alias(const oprt_alias_t *alias, const char *op, const void *out,
                                             const void *const *inputs, const char *const *names) {
    return oprt_check_alias_named(alias, op, "out", out, inputs, names);
}

/* ------------------------------------------------------------------------- */
/* Elementwise plans                                                          */

typedef struct {
    int32_t dtype;
    int32_t ndim;          /* after dropping size-1 dims and merging; 0 for a scalar */
    int32_t ninputs;
    int32_t contiguous;    /* every tensor row-major contiguous with the out shape (no broadcast) */
    int64_t numel;
    int64_t shape[OPRT_MAX_NDIM];
    int64_t out_strides[OPRT_MAX_NDIM];
    int64_t in_strides[OPRT_MAX_INPUTS][OPRT_MAX_NDIM]; /* 0 on broadcast dims */
    oprt_alias_t alias;
} oprt_elementwise_plan_t;

/* Broadcasts each input to out's shape (numpy rules: align trailing dims, an
 * extent of 1 stretches), then simplifies the iteration space. */
static inline oprt_status_t oprt_plan_elementwise(oprt_elementwise_plan_t *plan, const oprt_tensor_desc_t *out,
                                                  const oprt_tensor_desc_t *const *inputs, int32_t ninputs,
                                                  const char *const *names) {
    OPRT_CHECK_NOT_NULL(plan);
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    for (int32_t k = 0; k < ninputs; ++k) {
        OPRT_CHECK(oprt_check_tensor(inputs[k], names[k]));
        OPRT_CHECK(oprt_check_same_dtype(out, inputs[k], names[k]));
    }
    OPRT_CHECK(oprt_check_output_strides(out, "out"));
    int64_t bstr[OPRT_MAX_INPUTS][OPRT_MAX_NDIM];
    for (int32_t k = 0; k < ninputs; ++k) {
        const oprt_tensor_desc_t *in = inputs[k];
        if (in->ndim > out->ndim) goto mismatch;
        for (int32_t i = 0; i < out->ndim; ++i) {
            int32_t j = i - (out->ndim - in->ndim);
            if (j < 0) { bstr[k][i] = 0; continue; }
            if (in->shape[j] == out->shape[i]) bstr[k][i] = in->shape[j] == 1 ? 0 : in->strides[j];
            else if (in->shape[j] == 1) bstr[k][i] = 0;
            else goto mismatch;
        }
        continue;
    mismatch: {
            char so[160], si[160];
            oprt_format_shape(out, so, sizeof so);
            oprt_format_shape(in, si, sizeof si);
            return oprt_set_error(OPRT_STATUS_BAD_SHAPE,
                                  "shape mismatch: %s has shape %s, which does not broadcast to out's shape %s",
                                  names[k], si, so);
        }
    }
    memset(plan, 0, sizeof *plan);
    oprt_plan_alias(&plan->alias, out, inputs, ninputs);
    plan->dtype = out->dtype;
    plan->ninputs = ninputs;
    plan->numel = oprt_numel(out);
    int contiguous = oprt_is_contiguous(out);
    for (int32_t k = 0; k < ninputs; ++k)
        contiguous = contiguous && oprt_same_shape(out, inputs[k]) && oprt_is_contiguous(inputs[k]);
    plan->contiguous = contiguous;
    /* drop size-1 dims */
    int32_t n = 0;
    for (int32_t i = 0; i < out->ndim; ++i) {
        if (out->shape[i] == 1) continue;
        plan->shape[n] = out->shape[i];
        plan->out_strides[n] = out->strides[i];
        for (int32_t k = 0; k < ninputs; ++k) plan->in_strides[k][n] = bstr[k][i];
        ++n;
    }
    if (plan->numel == 0) { /* nothing to iterate */
        plan->ndim = 1;
        plan->shape[0] = 0;
        return OPRT_STATUS_SUCCESS;
    }
    /* merge dim i into i+1 when every tensor walks them as one */
    int32_t m = 0;
    for (int32_t i = 0; i < n; ++i) {
        if (m > 0) {
            int32_t p = m - 1;
            int ok = plan->out_strides[p] == plan->out_strides[i] * plan->shape[i];
            for (int32_t k = 0; k < ninputs; ++k)
                ok = ok && plan->in_strides[k][p] == plan->in_strides[k][i] * plan->shape[i];
            if (ok) {
                plan->shape[p] *= plan->shape[i];
                plan->out_strides[p] = plan->out_strides[i];
                for (int32_t k = 0; k < ninputs; ++k) plan->in_strides[k][p] = plan->in_strides[k][i];
                continue;
            }
        }
        plan->shape[m] = plan->shape[i];
        plan->out_strides[m] = plan->out_strides[i];
        for (int32_t k = 0; k < ninputs; ++k) plan->in_strides[k][m] = plan->in_strides[k][i];
        ++m;
    }
    plan->ndim = m;
    return OPRT_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Axis plans (reduce_sum, softmax)                                           */

typedef struct {
    int32_t dtype;
    int32_t axis;          /* normalised axis of x, or -1 when reducing over all */
    int32_t keepdims;
    int32_t contiguous;    /* x and out both row-major contiguous */
    int64_t outer, reduce, inner;   /* x seen as [outer, reduce, inner] */
    int64_t numel_in, numel_out;
    int32_t ndim;                   /* x's ndim */
    int64_t shape[OPRT_MAX_NDIM];   /* x's shape */
    int64_t x_strides[OPRT_MAX_NDIM];
    int64_t out_strides[OPRT_MAX_NDIM]; /* out's strides mapped onto x's dims; 0 on reduced dims (reduce_sum) */
    oprt_alias_t alias;
} oprt_axis_plan_t;

static inline oprt_status_t oprt_normalize_axis(int32_t axis, int32_t ndim, int32_t *normalized, const char *op) {
    if (axis < -ndim || axis >= ndim || ndim == 0)
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "%s: axis %d is out of range for a %d-d tensor (valid: %d..%d)",
                              op, (int)axis, (int)ndim, (int)-ndim, (int)ndim - 1);
    *normalized = axis < 0 ? axis + ndim : axis;
    return OPRT_STATUS_SUCCESS;
}

static inline void oprt_axis_split(oprt_axis_plan_t *plan, const oprt_tensor_desc_t *x) {
    plan->ndim = x->ndim;
    plan->outer = 1;
    plan->reduce = 1;
    plan->inner = 1;
    for (int32_t i = 0; i < x->ndim; ++i) {
        plan->shape[i] = x->shape[i];
        plan->x_strides[i] = x->strides[i];
        if (plan->axis < 0) plan->reduce *= x->shape[i];
        else if (i < plan->axis) plan->outer *= x->shape[i];
        else if (i == plan->axis) plan->reduce = x->shape[i];
        else plan->inner *= x->shape[i];
    }
    plan->numel_in = oprt_numel(x);
}

/* ------------------------------------------------------------------------- */
/* Row plans (rms_norm, layer_norm, add_rms_norm): x of shape (..., n) taken row by row along its last axis, with
 * per-element vectors (weight, bias) of shape (n,)                            */

/* The leading `lead` dims of `shape`, walked by `nt` tensors (tensor k's strides in strides[k], NULL for a tensor
 * that stays put: all 0), with extent-1 dims dropped and each dim merged into the one before it where every tensor
 * walks the two as one. Writes the merged extents to mshape and tensor k's strides to mstrides[k]; returns the
 * merged dim count (0: one row). */
static inline int32_t oprt_merge_leading(int32_t lead, const int64_t *shape, int32_t nt,
                                         const int64_t *const *strides, int64_t *mshape, int64_t *const *mstrides) {
    int32_t m = 0;
    for (int32_t i = 0; i < lead; ++i) {
        const int64_t e = shape[i];
        if (e == 1) continue;
        int merge = m > 0;
        for (int32_t k = 0; merge && k < nt; ++k)
            merge = mstrides[k][m - 1] == (strides[k] ? strides[k][i] : 0) * e;
        const int32_t d = merge ? m - 1 : m;
        mshape[d] = merge ? mshape[d] * e : e;
        for (int32_t k = 0; k < nt; ++k) mstrides[k][d] = strides[k] ? strides[k][i] : 0;
        if (!merge) ++m;
    }
    return m;
}

typedef struct {
    int32_t dtype;
    int32_t nvec;                    /* the vectors after x: weight (and bias) */
    int64_t rows, n;                 /* x seen as rows x n */
    int64_t numel;
    int32_t ndim;                    /* leading dims, extent-1 dims dropped and mergeable dims merged; rows is their
                                      * product (0 dims: one row) */
    int64_t shape[OPRT_MAX_NDIM];
    int64_t x_strides[OPRT_MAX_NDIM], out_strides[OPRT_MAX_NDIM];
    int64_t x_inner, out_inner;      /* strides along the last axis (0 where n == 1) */
    int64_t vec_strides[2];          /* weight's and bias's strides */
    float eps;
} oprt_rows_plan_t;

/* Validates x (..., n), out of x's shape and dtype, the `nvec` vectors of shape (n,) and eps (finite, >= 0), and
 * plans the rows. `names` names x then the vectors. */
static inline oprt_status_t oprt_plan_rows(oprt_rows_plan_t *plan, const char *op, const oprt_tensor_desc_t *out,
                                           const oprt_tensor_desc_t *x, const oprt_tensor_desc_t *const *vecs,
                                           int32_t nvec, const char *const *names, float eps) {
    OPRT_CHECK_NOT_NULL(plan);
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    OPRT_CHECK(oprt_check_tensor(x, names[0]));
    OPRT_CHECK(oprt_check_same_dtype(out, x, names[0]));
    if (x->ndim < 1)
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "%s: x must have at least 1 dim (rows along its last axis), "
                              "got a 0-d tensor", op);
    const int64_t n = x->shape[x->ndim - 1];
    for (int32_t k = 0; k < nvec; ++k) {
        OPRT_CHECK(oprt_check_tensor(vecs[k], names[k + 1]));
        OPRT_CHECK(oprt_check_same_dtype(out, vecs[k], names[k + 1]));
        if (vecs[k]->ndim != 1 || vecs[k]->shape[0] != n) {
            char sv[160], sx[160];
            oprt_format_shape(vecs[k], sv, sizeof sv);
            oprt_format_shape(x, sx, sizeof sx);
            return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "%s: shape mismatch: %s has shape %s, expected (%lld,) for "
                                  "x of shape %s", op, names[k + 1], sv, (long long)n, sx);
        }
    }
    if (!oprt_same_shape(out, x)) {
        char so[160], sx[160];
        oprt_format_shape(out, so, sizeof so);
        oprt_format_shape(x, sx, sizeof sx);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "shape mismatch: %s needs out %s to equal x %s", op, so, sx);
    }
    if (!isfinite(eps) || eps < 0.0f)
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "%s: eps must be finite and >= 0, got %g", op, (double)eps);
    OPRT_CHECK(oprt_check_output_strides(out, "out"));
    memset(plan, 0, sizeof *plan);
    plan->dtype = x->dtype;
    plan->nvec = nvec;
    plan->n = n;
    plan->numel = oprt_numel(x);
    plan->rows = 1;
    for (int32_t i = 0; i < x->ndim - 1; ++i) plan->rows *= x->shape[i];
    plan->x_inner = n > 1 ? x->strides[x->ndim - 1] : 0;
    plan->out_inner = n > 1 ? out->strides[x->ndim - 1] : 0;
    for (int32_t k = 0; k < nvec; ++k) plan->vec_strides[k] = n > 1 ? vecs[k]->strides[0] : 0;
    plan->eps = eps;
    const int64_t *const strides[2] = {x->strides, out->strides};
    int64_t *const merged[2] = {plan->x_strides, plan->out_strides};
    plan->ndim = oprt_merge_leading(x->ndim - 1, x->shape, 2, strides, plan->shape, merged);
    return OPRT_STATUS_SUCCESS;
}

/* Element offsets of row r's first element in x and out (r in [0, rows)). */
static inline void oprt_row_offsets(const oprt_rows_plan_t *p, int64_t r, int64_t *xo, int64_t *oo) {
    int64_t a = 0, b = 0;
    for (int32_t i = p->ndim - 1; i >= 0; --i) {
        const int64_t e = p->shape[i], q = r % e;
        a += q * p->x_strides[i];
        b += q * p->out_strides[i];
        r /= e;
    }
    *xo = a;
    *oo = b;
}

/* ------------------------------------------------------------------------- */
/* What the generated entry points (oprt_entry.h) keep beside a backend's own state                  */

typedef struct {
    size_t workspace_size;              /* bytes a launch needs (the backend's plan function sets it) */
    int64_t numel_out;
    int32_t ninputs;
    int64_t numel_in[OPRT_MAX_INPUTS];
    oprt_alias_t alias;
} oprt_op_common_t;

/* Fills `c` (but workspace_size) for validated tensors; alias.inplace left 0 (the generated code sets the
 * inputs the op's declaration lets out be). A NULL input is an optional one left out: empty to the launch checks
 * (its pointer is not looked at). */
static inline void oprt_op_common_init(oprt_op_common_t *c, const oprt_tensor_desc_t *out,
                                       const oprt_tensor_desc_t *const *inputs, int32_t ninputs) {
    c->numel_out = oprt_numel(out);
    c->ninputs = ninputs;
    for (int32_t k = 0; k < ninputs; ++k) c->numel_in[k] = inputs[k] != NULL ? oprt_numel(inputs[k]) : 0;
    oprt_plan_alias(&c->alias, out, inputs, ninputs);
}

/* The checks every launch makes before its kernel: workspace large enough (and not NULL where needed), out and
 * each non-empty input not NULL, no overlap of out with an input beyond what the op allows. */
static inline oprt_status_t oprt_check_launch(const oprt_op_common_t *c, const char *op, const void *workspace,
                                              size_t workspace_size, const void *out, const void *const *inputs,
                                              const char *const *names) {
    if (workspace_size < c->workspace_size)
        return oprt_set_error(OPRT_STATUS_INSUFFICIENT_WORKSPACE,
                              "%s: workspace of %zu bytes is too small; this descriptor needs %zu bytes", op,
                              workspace_size, c->workspace_size);
    if (c->workspace_size > 0 && workspace == NULL)
        return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: argument 'workspace' is NULL but %zu bytes are needed",
                              op, c->workspace_size);
    if (c->numel_out > 0 && out == NULL)
        return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: argument 'out' is NULL", op);
    for (int32_t k = 0; k < c->ninputs; ++k)
        if (c->numel_in[k] > 0 && inputs[k] == NULL)
            return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: argument '%s' is NULL", op, names[k]);
    return oprt_check_alias(&c->alias, op, out, inputs, names);
}

/* ------------------------------------------------------------------------- */
/* What the generated entry points of an op with several outputs keep (oprt_entry.h: OPRT_DEFINE_OP of such an op) */

#define OPRT_MAX_OUTPUTS 4

typedef struct {
    size_t workspace_size;               /* bytes a launch needs (the backend's plan function sets it) */
    int32_t noutputs, ninputs;
    int64_t numel_out[OPRT_MAX_OUTPUTS];
    int64_t numel_in[OPRT_MAX_INPUTS];
    oprt_alias_t alias[OPRT_MAX_OUTPUTS]; /* output j against the inputs; alias[j].inplace[k]: output j may be input k */
} oprt_op_outputs_t;

/* Fills `c` (but workspace_size) for validated tensors; every inplace left 0 (the generated code sets what the op's
 * declaration allows). */
static inline void oprt_op_outputs_init(oprt_op_outputs_t *c, const oprt_tensor_desc_t *const *outs,
                                        int32_t noutputs, const oprt_tensor_desc_t *const *inputs, int32_t ninputs) {
    c->noutputs = noutputs;
    c->ninputs = ninputs;
    for (int32_t k = 0; k < ninputs; ++k) c->numel_in[k] = inputs[k] != NULL ? oprt_numel(inputs[k]) : 0;
    for (int32_t j = 0; j < noutputs; ++j) {
        c->numel_out[j] = oprt_numel(outs[j]);
        oprt_plan_alias(&c->alias[j], outs[j], inputs, ninputs);
    }
}

/* oprt_check_launch of an op with several outputs: the workspace, no NULL output or input (but empty ones), each
 * output's overlap with the inputs as its declaration allows, and no two outputs sharing a byte. */
static inline oprt_status_t oprt_check_launch_outputs(const oprt_op_outputs_t *c, const char *op,
                                                      const void *workspace, size_t workspace_size,
                                                      void *const *outs, const char *const *out_names,
                                                      const void *const *inputs, const char *const *names) {
    if (workspace_size < c->workspace_size)
        return oprt_set_error(OPRT_STATUS_INSUFFICIENT_WORKSPACE,
                              "%s: workspace of %zu bytes is too small; this descriptor needs %zu bytes", op,
                              workspace_size, c->workspace_size);
    if (c->workspace_size > 0 && workspace == NULL)
        return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: argument 'workspace' is NULL but %zu bytes are needed",
                              op, c->workspace_size);
    for (int32_t j = 0; j < c->noutputs; ++j)
        if (c->numel_out[j] > 0 && outs[j] == NULL)
            return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: argument '%s' is NULL", op, out_names[j]);
    for (int32_t k = 0; k < c->ninputs; ++k)
        if (c->numel_in[k] > 0 && inputs[k] == NULL)
            return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: argument '%s' is NULL", op, names[k]);
    for (int32_t j = 0; j < c->noutputs; ++j) {
        OPRT_CHECK(oprt_check_alias_named(&c->alias[j], op, out_names[j], outs[j], inputs, names));
        for (int32_t i = 0; i < j; ++i)
            if (oprt_spans_intersect((uintptr_t)outs[i], c->alias[i].out_lo, c->alias[i].out_hi, (uintptr_t)outs[j],
                                     c->alias[j].out_lo, c->alias[j].out_hi) &&
                !oprt_rows_disjoint((uintptr_t)outs[i], &c->alias[i].out_rows, (uintptr_t)outs[j],
                                    &c->alias[j].out_rows))
                return oprt_set_error(OPRT_STATUS_OVERLAP, "%s: outputs %s and %s share memory; use separate outputs",
                                      op, out_names[i], out_names[j]);
    }
    return OPRT_STATUS_SUCCESS;
}

/* Element offset of the flat index `idx` (row-major over shape) given strides. */
static inline int64_t oprt_offset_of(int64_t idx, int32_t ndim, const int64_t *shape, const int64_t *strides) {
    int64_t off = 0;
    for (int32_t i = ndim - 1; i >= 0; --i) {
        int64_t e = shape[i];
        off += (idx % e) * strides[i];
        idx /= e;
    }
    return off;
}

#ifdef __cplusplus
}
#endif

/* ------------------------------------------------------------------------- */
#ifdef OPRT_IMPLEMENTATION

#ifdef __cplusplus
#define OPRT_THREAD_LOCAL thread_local
#else
#define OPRT_THREAD_LOCAL _Thread_local
#endif

static OPRT_THREAD_LOCAL char oprt_error_buffer_[1024];

#ifdef __cplusplus
extern "C" {
#endif

oprt_status_t oprt_set_error(oprt_status_t status, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(oprt_error_buffer_, sizeof oprt_error_buffer_, fmt, args);
    va_end(args);
    return status;
}

void oprt_clear_error(void) { oprt_error_buffer_[0] = '\0'; }

const char *oprt_last_error_message(void) { return oprt_error_buffer_; }

int32_t oprt_library_abi_version(void) { return OPRT_ABI_VERSION; }

const char *oprt_status_string(oprt_status_t status) {
    switch (status) {
    case OPRT_STATUS_SUCCESS: return "success";
    case OPRT_STATUS_NULL_POINTER: return "null pointer";
    case OPRT_STATUS_BAD_SHAPE: return "bad shape";
    case OPRT_STATUS_BAD_STRIDES: return "bad strides";
    case OPRT_STATUS_BAD_PARAM: return "bad parameter";
    case OPRT_STATUS_UNSUPPORTED_DTYPE: return "unsupported dtype";
    case OPRT_STATUS_UNSUPPORTED_CASE: return "unsupported case";
    case OPRT_STATUS_INSUFFICIENT_WORKSPACE: return "insufficient workspace";
    case OPRT_STATUS_DEVICE_ERROR: return "device or runtime error";
    case OPRT_STATUS_OUT_OF_MEMORY: return "out of memory";
    case OPRT_STATUS_NO_DEVICE: return "no device";
    case OPRT_STATUS_BAD_DEVICE: return "bad device index";
    case OPRT_STATUS_OVERLAP: return "out overlaps an input";
    case OPRT_STATUS_DEVICE_FAULT: return "device fault (sticky: the device context is unusable)";
    }
    return "unknown status";
}

#ifdef __cplusplus
}
#endif
#endif /* OPRT_IMPLEMENTATION */

#endif /* OPRT_VALIDATE_H_ */
